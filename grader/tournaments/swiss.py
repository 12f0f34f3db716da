"""Swiss-system pairing and tie-breaks.

Each round every engine plays one colour-swapped game pair against one opponent; the pair
gives each side 0 to 2 points (its two games' points). Engines are ranked by points, then by
seeding order. With an odd count, the lowest-ranked engine that has had no bye gets one: a
won pair, BYE_POINTS, counted toward its own score but not toward anyone's Buchholz or
Sonneborn-Berger (a bye has no opponent).

Pairing goes down the ranking. The highest-ranked unpaired engine meets, in order of
preference: the bottom half of its score group (the unpaired engines on its points, halved by
rank), then the rest of its group from the lowest up, then the engines below it in rank order
(it floats down). A choice stands only if the engines left can still all be paired without a
rematch, which a maximum matching decides (Edmonds' blossom algorithm); so a round fails only
when no pairing at all exists, and NoPairing then says why. Rematches are never allowed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple, Sequence

from ..errors import NoPairing

BYE_POINTS = 2.0  # a bye scores as a won pair
MAX_PAIR_POINTS = 2.0


class Result(NamedTuple):
    """A pair played, or a bye (``b`` None; ``points_a`` BYE_POINTS). A plain tuple (a, b,
    a's points, b's points) is taken as one."""

    a: str
    b: str | None
    points_a: float
    points_b: float


@dataclass(frozen=True)
class Round:
    """A Swiss round as paired: its pairs (higher-ranked engine first) and its bye."""

    pairs: list[tuple[str, str]]
    bye: str | None

    def to_json(self) -> dict[str, Any]:
        return {"pairs": [list(p) for p in self.pairs], "bye": self.bye}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Round:
        return cls([(a, b) for a, b in data["pairs"]], data["bye"])


@dataclass(frozen=True)
class SwissStanding:
    """An engine's line of the Swiss ranking."""

    engine: str
    points: float
    buchholz: float
    sonneborn_berger: float

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "points": self.points, "buchholz": self.buchholz,
                "sonneborn_berger": self.sonneborn_berger}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SwissStanding:
        return cls(data["engine"], data["points"], data["buchholz"], data["sonneborn_berger"])


@dataclass(frozen=True)
class SwissResult:
    """A Swiss tournament's ranking (best first) and its rounds as they were paired. results.json
    holds them ('swiss': the ranking, 'swiss_rounds': the rounds); ``from_json`` reads them
    back, from a folder written before the rounds were kept too (its rounds: none)."""

    standings: tuple[SwissStanding, ...]
    rounds: tuple[Round, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The keys of results.json."""
        return {"swiss": [s.to_json() for s in self.standings], "swiss_rounds": [r.to_json() for r in self.rounds]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SwissResult:
        return cls(tuple(map(SwissStanding.from_json, data["swiss"])),
                   tuple(map(Round.from_json, data.get("swiss_rounds", []))))  # fmt: skip


def max_rounds(engines: int) -> int:
    """Rounds a Swiss of this many engines can have at most: all meet all (and, when odd, each
    has its one bye)."""
    return engines if engines % 2 else engines - 1


def pair_round(standings: dict[str, float], played: set[frozenset[str]], had_bye: set[str]) -> Round:
    """The next round's pairs and bye: no rematch, at most one bye per engine. ``standings``
    maps each engine to its points, in seeding order (the tie-break for equal points)."""
    seeds = list(standings)
    seed = {e: i for i, e in enumerate(seeds)}
    rank = sorted(seeds, key=lambda e: (-standings[e], seed[e]))
    round_no = 1 + max((sum(e in pair for pair in played) + (e in had_bye) for e in seeds), default=0)
    if len(rank) < 2:
        raise NoPairing(f"a Swiss round needs at least 2 engines; got {len(rank)}")
    graph = _Graph(rank, played, had_bye)
    if not graph.pair_all():
        raise NoPairing(_why_not(rank, had_bye, round_no))
    bye = None
    if len(rank) % 2:
        bye = next(rank[i] for i in reversed(range(len(rank))) if graph.take(i, graph.bye))
    points = [standings[e] for e in rank]
    pairs = []
    while left := graph.left():
        p = left[0]
        c = next(c for c in _preferences(left, points) if graph.take(p, c))
        pairs.append((rank[p], rank[c]))
    return Round(pairs, bye)


def pairing_state(
    results: Iterable[Result], seeds: Sequence[str]
) -> tuple[dict[str, float], set[frozenset[str]], set[str]]:
    """What pair_round needs, from the results so far: points in seeding order, the pairs
    that met, the engines that had a bye."""
    standings = {e: 0.0 for e in seeds}
    played: set[frozenset[str]] = set()
    had_bye: set[str] = set()
    for a, b, points_a, points_b in results:
        if a not in standings or (b is not None and b not in standings):
            raise ValueError(f"a result names an engine not in seeds: ({a!r}, {b!r}); list every engine in seeds")
        standings[a] += points_a
        if b is None:
            had_bye.add(a)
        else:
            standings[b] += points_b
            played.add(frozenset((a, b)))
    return standings, played, had_bye


def tiebreaks(results: Iterable[Result]) -> dict[str, tuple[float, float]]:
    """(Buchholz, Sonneborn-Berger) of each engine. A result is (a, b, a's points, b's points)
    for a pair played, or (engine, None, BYE_POINTS, 0) for a bye. Buchholz: the sum of the
    final scores of the opponents met; Sonneborn-Berger: the sum over them of the share of the
    pair's points scored against them times their final score. A bye adds to neither."""
    results = list(results)
    score = _scores(results)
    ties: dict[str, list[float]] = {e: [0.0, 0.0] for e in score}
    for a, b, points_a, points_b in results:
        if b is None:
            continue
        for me, them, mine in ((a, b, points_a), (b, a, points_b)):
            ties[me][0] += score[them]
            ties[me][1] += mine / MAX_PAIR_POINTS * score[them]
    return {e: (bh, sb) for e, (bh, sb) in ties.items()}


def swiss_standings(results: Iterable[Result], engines: Iterable[str] = ()) -> list[SwissStanding]:
    """One row per engine (also those of ``engines`` without results), best first: points,
    then Buchholz, then Sonneborn-Berger, then name."""
    results = list(results)
    score = _scores(results)
    ties = tiebreaks(results)
    rows = [SwissStanding(e, score[e], *ties.get(e, (0.0, 0.0))) for e in {**dict.fromkeys(engines), **score}]
    return sorted(rows, key=lambda r: (-r.points, -r.buchholz, -r.sonneborn_berger, r.engine))


def _scores(results: list[Result]) -> dict[str, float]:
    score: dict[str, float] = defaultdict(float)
    for a, b, points_a, points_b in results:
        score[a] += points_a
        if b is not None:
            score[b] += points_b
    return score


def _preferences(left: list[int], points: list[float]) -> list[int]:
    """Opponents for the top unpaired engine left[0], best first (indexes by rank)."""
    p = left[0]
    group = [i for i in left if points[i] == points[p]]
    half = len(group) // 2
    top, bottom = group[:half], group[half:]
    below = [i for i in left if points[i] != points[p]]
    return [c for c in bottom + top[::-1] + below if c != p]


def _why_not(rank: list[str], had_bye: set[str], round_no: int) -> str:
    n = len(rank)
    head = f"round {round_no} cannot be paired"
    if round_no > max_rounds(n):
        return f"{head} without a rematch: {n} engines allow at most {max_rounds(n)} rounds"
    if n % 2 and all(e in had_bye for e in rank):
        return f"{head}: an odd number of engines ({n}) needs a bye, and every engine has had one"
    return (f"{head} without a rematch or a second bye: no way to pair all {n} engines is left "
            f"(a Swiss can run out of pairings before round {max_rounds(n)})")  # fmt: skip


class _Graph:
    """The pairs still allowed among the engines not yet paired (vertex i: the engine ranked
    i; with an odd count, vertex n is the bye), and a perfect matching of them."""

    def __init__(self, rank: list[str], played: set[frozenset[str]], had_bye: set[str]) -> None:
        n = len(rank)
        self.bye = n if n % 2 else -1
        size = n + (n % 2)
        self.adj: list[list[int]] = [[] for _ in range(size)]
        for i in range(n):
            for j in range(i + 1, n):
                if frozenset((rank[i], rank[j])) not in played:
                    self.adj[i].append(j)
                    self.adj[j].append(i)
            if self.bye >= 0 and rank[i] not in had_bye:
                self.adj[i].append(self.bye)
                self.adj[self.bye].append(i)
        self.alive = [True] * size
        self.match = [-1] * size
        self.engines = n

    def left(self) -> list[int]:
        """Engines not yet paired, by rank."""
        return [i for i in range(self.engines) if self.alive[i]]

    def pair_all(self) -> bool:
        """Find a perfect matching; False if none exists."""
        for v in range(len(self.match)):
            for u in self.adj[v]:
                if self.match[v] == -1 and self.match[u] == -1:
                    self.match[v], self.match[u] = u, v
        return all(self.match[v] != -1 or self._augment(v) for v in range(len(self.match)))

    def take(self, u: int, v: int) -> bool:
        """Pair u with v and drop both, if allowed and the rest can still be paired."""
        if not self.alive[v] or v not in self.adj[u]:
            return False
        saved = self.match[:]
        a, b = self.match[u], self.match[v]
        self.alive[u] = self.alive[v] = False
        if a != v:
            self.match[a] = self.match[b] = -1
            if not self._augment(a):
                self.match = saved
                self.alive[u] = self.alive[v] = True
                return False
        return True

    def _augment(self, root: int) -> bool:
        """Grow the matching by a path from the unmatched root, if one exists (Edmonds)."""
        match, size = self.match, len(self.match)
        parent, base = [-1] * size, list(range(size))
        queued = [False] * size
        queued[root] = True
        queue = [root]
        for v in queue:
            for u in self.adj[v]:
                if not self.alive[u] or base[v] == base[u] or match[v] == u:
                    continue
                if u == root or (match[u] != -1 and parent[match[u]] != -1):
                    top = self._common_base(parent, base, v, u)
                    blossom = [False] * size
                    self._mark(parent, base, blossom, v, top, u)
                    self._mark(parent, base, blossom, u, top, v)
                    for i in range(size):
                        if blossom[base[i]]:
                            base[i] = top
                            if not queued[i]:
                                queued[i] = True
                                queue.append(i)
                elif parent[u] == -1:
                    parent[u] = v
                    if match[u] == -1:
                        self._flip(parent, u)
                        return True
                    queued[match[u]] = True
                    queue.append(match[u])
        return False

    def _common_base(self, parent: list[int], base: list[int], a: int, b: int) -> int:
        """The base of the blossom that the edge a-b closes."""
        seen = set()
        while True:
            a = base[a]
            seen.add(a)
            if self.match[a] == -1:
                break
            a = parent[self.match[a]]
        while base[b] not in seen:
            b = parent[self.match[base[b]]]
        return base[b]

    def _mark(self, parent: list[int], base: list[int], blossom: list[bool], v: int, top: int, child: int) -> None:
        while base[v] != top:
            blossom[base[v]] = blossom[base[self.match[v]]] = True
            parent[v] = child
            child = self.match[v]
            v = parent[self.match[v]]

    def _flip(self, parent: list[int], v: int) -> None:
        while v != -1:
            p = parent[v]
            after = self.match[p]
            self.match[v], self.match[p] = p, v
            v = after
