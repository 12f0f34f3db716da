"""A ladder: every participant's latest engine plays game pairs while workers are idle, rated
from all the games (``grader.tournaments.elofit``); and, at the deadline, a round-robin of the
final versions that grades them as ``grader tournament --grade`` does.

- The planner picks the next pairs among the latest versions: the fewest pairs played between
  them first, then the closest ratings, then the engines with the least work already planned;
  a pair is two games on one opening, each engine with black once, and the engine that had
  black less often so far has it first. Ties are broken by the seed, so a seed and the same
  games give the same plan.
- What a viewer sees: staff see every entry by name; in an anonymous ladder students see
  aliases (stable: the first to join keeps theirs whoever joins after) and, with ``top``, only
  the top entries and those around their own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..errors import GraderError
from ..seeding import rng
from . import ratings
from .elofit import Rating
from .formats import Format
from .grades import ShareGrade, grades_csv, grades_of
from .ratings import Scored
from .results import TournamentResult
from .tournament import run_tournament

CLOSE_ELO = 200.0  # the planner weighs a rating gap of this many Elo as one more pair played
ALIAS_DRAWS = 20  # aliases a participant draws before one is numbered
LOAD_WEIGHT = 0.4  # ... and each pair either engine has running or planned as this much of one (below 1/2:
# within a batch, where each engine has at most one pair more than another, a pair that met less goes first)
AROUND = 2  # entries above and below a student's own that they see under ``top``


@dataclass(frozen=True)
class PlannedPair:
    """Two games on ``opening``: ``first`` has black in the first, ``second`` in the second."""

    first: str
    second: str
    opening: str

    @property
    def games(self) -> tuple[tuple[str, str], tuple[str, str]]:
        """(black, white) of each game, in order."""
        return (self.first, self.second), (self.second, self.first)


def plan_pairs(engines: Sequence[str], games: Iterable[Scored], ratings: Mapping[str, float | None],
               openings: Sequence[str], count: int, seed: int | str,
               running: Iterable[tuple[str, str]] = ()) -> list[PlannedPair]:  # fmt: skip
    """The next ``count`` pairs among ``engines`` (each participant's latest version) given the
    finished ``games`` (any versions; one pair is two games) and the pairs ``running`` (queued
    or being played, as (black first, white first)); ``ratings``: each engine's Elo (None or
    missing: not rated yet, taken as close to all). Fewer than ``count`` only with fewer than
    two engines."""
    if not openings:
        raise GraderError("a ladder needs openings to plan its pairs: give at least one")
    names = list(dict.fromkeys(engines))
    if len(names) < 2:
        return []
    wanted = set(names)
    met: Counter[frozenset[str]] = Counter()  # games between two engines, finished or planned
    blacks: Counter[str] = Counter()
    load: Counter[str] = Counter()  # pairs running or planned
    for g in games:
        if g.black in wanted and g.white in wanted:
            met[frozenset((g.black, g.white))] += 1
        blacks[g.black] += 1
    for first, second in running:
        met[frozenset((first, second))] += 2
        load[first] += 1
        load[second] += 1
        blacks[first] += 1
        blacks[second] += 1

    def gap(a: str, b: str) -> float:
        ra, rb = ratings.get(a), ratings.get(b)
        return 0.0 if ra is None or rb is None else abs(ra - rb) / CLOSE_ELO

    index = {e: i for i, e in enumerate(names)}
    rand = rng("ladder", seed)
    candidates = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    rand.shuffle(candidates)  # the first of equal pairs in the seed's order is taken
    keys = {p: frozenset(p) for p in candidates}
    gaps = {p: gap(*p) for p in candidates}
    plan = []
    for _ in range(count):
        a, b = min(candidates, key=lambda p: met[keys[p]] // 2 + gaps[p] + LOAD_WEIGHT * (load[p[0]] + load[p[1]]))
        key = frozenset((a, b))
        played = met[key] // 2
        if blacks[a] != blacks[b]:
            first, second = (a, b) if blacks[a] < blacks[b] else (b, a)
        else:
            first, second = (a, b) if rand.random() < 0.5 else (b, a)
        low, high = sorted((a, b), key=index.__getitem__)
        start = rng("opening", seed, low, high).randrange(len(openings))
        plan.append(PlannedPair(first, second, openings[(start + played) % len(openings)]))
        met[key] += 2
        load[a] += 1
        load[b] += 1
        blacks[a] += 1
        blacks[b] += 1
    return plan


ADJECTIVES = ("Amber", "Bold", "Brisk", "Calm", "Clever", "Crimson", "Daring", "Eager", "Gentle", "Golden",
              "Hidden", "Jolly", "Keen", "Lucky", "Mighty", "Nimble", "Quiet", "Rapid", "Silver", "Steady",
              "Swift", "Tidy", "Valiant", "Wily")  # fmt: skip
ANIMALS = ("Badger", "Crane", "Dolphin", "Eagle", "Falcon", "Fox", "Gecko", "Heron", "Ibex", "Jaguar", "Koala",
           "Lynx", "Marten", "Newt", "Otter", "Panda", "Quail", "Raven", "Seal", "Tapir", "Urchin", "Viper",
           "Walrus", "Yak")  # fmt: skip


def aliases(key: str, participants: Sequence[str]) -> dict[str, str]:
    """An alias per participant ('Swift Otter'), drawn from ``key`` (the ladder's own: the same
    participant has another alias in another ladder) and never shared. ``participants`` in the
    order they joined: each takes its first draw no earlier one took, so a participant's alias
    never changes when others join."""
    out: dict[str, str] = {}
    for p in participants:
        draw = rng("alias", key, p)
        tries = [f"{draw.choice(ADJECTIVES)} {draw.choice(ANIMALS)}" for _ in range(ALIAS_DRAWS)]
        taken = set(out.values())
        alias = next((a for a in tries if a not in taken), None)
        number = 2
        while alias is None:  # every draw taken (a ladder of hundreds): number the first
            alias = f"{tries[0]} {number}" if f"{tries[0]} {number}" not in taken else None
            number += 1
        out[p] = alias
    return out


@dataclass(frozen=True)
class Entry:
    """A participant of a ladder: their name, their latest engine (its key in the games)."""

    participant: str
    name: str
    engine: str


@dataclass(frozen=True)
class Visibility:
    """What students see: aliases instead of names (``anonymous``); with ``top``, the top
    ``top`` entries and the ``around`` entries above and below their own only."""

    anonymous: bool = False
    top: int | None = None
    around: int = AROUND


@dataclass(frozen=True)
class Viewer:
    """Who looks: staff, or a student (``participant``: their own entry, if they have one)."""

    staff: bool
    participant: str | None = None


@dataclass(frozen=True)
class Row:
    """A line of the ladder as its viewer sees it: the name shown (an alias for students of an
    anonymous ladder), the engine, its rating, whether it is the viewer's own."""

    rank: int
    name: str
    engine: str
    rating: Rating
    mine: bool

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "name": self.name, "engine": self.engine, "mine": self.mine,
                **{k: v for k, v in self.rating.to_json().items() if k != "engine"}}  # fmt: skip


@dataclass(frozen=True)
class Table:
    """The ladder a viewer sees: its rows, best first, and how many entries are hidden from them."""

    rows: tuple[Row, ...]
    hidden: int

    @property
    def engines(self) -> list[str]:
        return [r.engine for r in self.rows]

    def names(self) -> dict[str, str]:
        """Engine -> the name shown."""
        return {r.engine: r.name for r in self.rows}

    def to_json(self) -> dict[str, Any]:
        return {"rows": [r.to_json() for r in self.rows], "hidden": self.hidden}


def ranked(entries: Sequence[Entry], fitted: Sequence[Rating]) -> list[tuple[Entry, Rating]]:
    """Entries with their engine's rating, best first: rated by Elo, then the unrated by games
    played, then by name."""
    by_engine = {r.engine: r for r in fitted}
    rows = [(e, by_engine.get(e.engine) or Rating(e.engine, 0, 0.0, None, None)) for e in entries]
    return sorted(rows, key=lambda er: (er[1].elo is None, -(er[1].elo or 0.0), -er[1].games, er[0].name))


def table(entries: Sequence[Entry], fitted: Sequence[Rating], viewer: Viewer, visibility: Visibility,
          alias: Mapping[str, str]) -> Table:  # fmt: skip
    """The ladder as ``viewer`` may see it (``alias``: participant -> alias, for anonymous ladders)."""
    order = ranked(entries, fitted)
    own = next((i for i, (e, _) in enumerate(order) if e.participant == viewer.participant), None)
    rows = []
    for i, (e, r) in enumerate(order):
        shown = viewer.staff or visibility.top is None or i < visibility.top
        shown = shown or (own is not None and abs(i - own) <= visibility.around)
        if shown:
            name = alias[e.participant] if visibility.anonymous and not viewer.staff else e.name
            rows.append(Row(i + 1, name, e.engine, r, i == own))
    return Table(tuple(rows), len(order) - len(rows))


def crosstable(games: Iterable[Scored], engines: Sequence[str]) -> dict[str, dict[str, float | None]]:
    """Points each of ``engines`` scored against each other (None: never met); other engines' games left out."""
    wanted = set(engines)
    return ratings.crosstable([g for g in games if g.black in wanted and g.white in wanted], list(engines))


def recent_games(games: Sequence[Scored], engine: str, limit: int = 20) -> list[Any]:
    """The last ``limit`` of ``games`` (oldest first) that ``engine`` played, newest first."""
    return [g for g in reversed(games) if engine in (g.black, g.white)][:limit]


def deadline_format(games_per_pair: int) -> Format:
    """The deadline tournament: a round-robin in which every two engines play ``games_per_pair``
    games, two to an opening with the colours swapped."""
    if games_per_pair < 2 or games_per_pair % 2:
        raise GraderError(f"a deadline tournament plays an even number of games per pair (two to an opening), "
                          f"at least 2; got {games_per_pair}")  # fmt: skip
    return Format("round-robin", games_per_pair // 2)


@dataclass(frozen=True)
class DeadlineResult:
    """The deadline tournament and each engine's grade from it (grades.csv in its folder)."""

    tournament: TournamentResult
    grades: list[ShareGrade]


def deadline_grades(result: TournamentResult, thresholds: Sequence[tuple[float, float]]) -> list[ShareGrade]:
    """Every engine's grade out of 100 by its share of the pieces in the deadline round-robin,
    as ``grader tournament --grade`` grades a gauntlet's engines (config.yaml's tournament.grade)."""
    fmt = result.format
    if fmt.kind != "round-robin":
        raise GraderError(f"a deadline tournament is a round-robin; got a {fmt.kind}")
    per_engine = 2 * fmt.rounds * (len(result.engines) - 1)
    return grades_of(result.standings, [e.name for e in result.engines], per_engine, thresholds)


def run_deadline(engines: Sequence[str | Path | Any], games_per_pair: int, thresholds: Sequence[tuple[float, float]],
                 **options: Any) -> DeadlineResult:  # fmt: skip
    """Play the deadline tournament of ``engines`` (the final versions, as ``run_tournament``
    takes them; ``options``: its other arguments) and grade it, writing grades.csv."""
    if len(engines) < 2:
        raise GraderError(f"a deadline tournament needs at least two engines; got {len(engines)}")
    result = run_tournament(engines, format=deadline_format(games_per_pair), **options)
    grades = deadline_grades(result, thresholds)
    result.folder.write("grades.csv", grades_csv(grades))
    result.files.append("grades.csv")
    return DeadlineResult(result, grades)
