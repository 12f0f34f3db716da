"""Tournament formats: which games are played, and when to stop.

Every format plays game pairs (one opening, colours swapped). A format is a planner: the
tournament asks it for games to start (``more``) and tells it each game that ends (``add``),
so formats that depend on results (Swiss rounds, SPRT) decide as games end, and a resumed
tournament replays its decisions from the recorded games.

- round-robin: every pair of engines, one pair of games per round (opening).
- gauntlet: each engine plays only the opponents, one pair per opening; never each other.
- swiss: each round pairs engines by points without rematches (grader.tournaments.swiss); a bye for an
  odd count scores as a won pair. Stops early, saying why, when a round cannot be paired.
- sprt: two engines play pairs until the SPRT (grader.tournaments.sprt) accepts H0 or H1, or the limit.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import GraderError, NoPairing, SprtError
from . import swiss
from .sprt import MODELS, Pentanomial, SprtResult, SprtState, sprt

FORMATS = ("round-robin", "gauntlet", "swiss", "sprt")


class Played(Protocol):
    id: str
    pair: str
    round: int
    black: str
    white: str
    opening: str

    @property
    def black_score(self) -> float: ...


@dataclass(frozen=True)
class SprtSettings:
    """An SPRT of H0: Elo = elo0 against H1: Elo = elo1 over at most ``max_games`` games."""

    elo0: float
    elo1: float
    max_games: int
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"

    def check(self) -> None:
        if not self.elo0 < self.elo1:
            raise GraderError(f"SPRT needs ELO0 < ELO1; got {self.elo0:g} and {self.elo1:g}")
        if self.max_games < 2:
            raise GraderError(f"SPRT needs --max-games of at least 2 (one pair); got {self.max_games}")
        for name, rate in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < rate < 0.5:
                raise GraderError(f"SPRT {name} must be between 0 and 0.5; got {rate:g}")
        if self.model not in MODELS:
            raise GraderError(f"SPRT model must be one of {', '.join(MODELS)}; got {self.model!r}")
        try:  # bounds the model cannot fit fail now, not after the tournament's folder is made
            sprt(Pentanomial(1, 1, 1, 1, 1), self.elo0, self.elo1, self.alpha, self.beta, self.model)
        except SprtError as e:
            raise GraderError(f"SPRT bounds {self.elo0:g} and {self.elo1:g}: {e}") from None

    def to_json(self) -> dict[str, Any]:
        return {"elo0": self.elo0, "elo1": self.elo1, "max_games": self.max_games,
                "alpha": self.alpha, "beta": self.beta, "model": self.model}  # fmt: skip


@dataclass(frozen=True)
class Format:
    """How a tournament is organised. ``rounds``: openings per pair (round-robin, gauntlet)
    or Swiss rounds; ``opponents``: the gauntlet's reference engines (names)."""

    kind: str = "round-robin"
    rounds: int = 1
    opponents: tuple[str, ...] = ()
    sprt: SprtSettings | None = None

    def check(self, engines: list[str]) -> None:
        """GraderError when the engines do not fit the format."""
        if self.kind not in FORMATS:
            raise GraderError(f"unknown format {self.kind!r}: use one of {', '.join(FORMATS)}")
        if self.kind == "gauntlet":
            if not self.opponents:
                raise GraderError("a gauntlet needs opponents: give --opponents SCRIPT (one or more)")
            if len(self.opponents) >= len(engines):
                raise GraderError("a gauntlet needs at least one engine besides the opponents")
        elif self.opponents:
            raise GraderError("--opponents is for --format gauntlet")
        if self.kind == "sprt":
            if len(engines) != 2:
                raise GraderError(f"SPRT is between exactly two engines; got {len(engines)}")
            if self.sprt is None:
                raise GraderError("SPRT needs its settings: --sprt ELO0 ELO1 --max-games N")
            self.sprt.check()
        elif self.sprt is not None:
            raise GraderError("SPRT settings are for two engines under --sprt, not with --format " + self.kind)
        if self.kind == "swiss" and len(engines) < 2:
            raise GraderError("a Swiss tournament needs at least two engines")

    def openings_needed(self) -> int:
        return min(self.sprt.max_games // 2, 1000) if self.sprt else self.rounds

    def planned_games(self, engines: int) -> int:
        """Games the format plays at most."""
        if self.kind == "round-robin":
            return self.rounds * engines * (engines - 1)
        if self.kind == "gauntlet":
            return self.rounds * 2 * len(self.opponents) * (engines - len(self.opponents))
        if self.kind == "swiss":
            return self.rounds * 2 * (engines // 2)
        assert self.sprt is not None
        return self.sprt.max_games // 2 * 2

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "rounds": self.rounds, "opponents": list(self.opponents),
                "sprt": self.sprt.to_json() if self.sprt else None}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any] | None, rounds: int = 1) -> Format:
        if not data:  # a folder written before formats: a round-robin
            return cls(rounds=rounds)
        s = data.get("sprt")
        return cls(data["kind"], int(data["rounds"]), tuple(data["opponents"]), SprtSettings(**s) if s else None)

    def planner(self, engines: list[str], openings: list[str], make: Any) -> Planner:
        """The planner of this format; ``make(id, pair, round, black, white, opening)`` builds a game."""
        if self.kind == "swiss":
            return SwissPlanner(self, engines, openings, make)
        if self.kind == "sprt":
            return SprtPlanner(self, engines, openings, make)
        return StaticPlanner(fixed_schedule(self, engines, openings, make))


def fixed_schedule(fmt: Format, engines: list[str], openings: list[str], make: Any) -> list:
    """Round-robin: every pair of engines; gauntlet: every engine against every opponent.
    Each pair plays both colours of each round's opening; the first named has black first."""
    index = {e: i for i, e in enumerate(engines)}
    if fmt.kind == "gauntlet":
        players = [e for e in engines if e not in fmt.opponents]
        matches = [(p, o) for p in players for o in fmt.opponents]
    else:
        matches = list(itertools.combinations(engines, 2))
    games = []
    for r in range(fmt.rounds):
        opening = openings[r % len(openings)]
        for a, b in matches:
            pair = f"r{r + 1}:{index[a]}-{index[b]}"
            games.append(make(f"{pair}:1", pair, r + 1, a, b, opening))
            games.append(make(f"{pair}:2", pair, r + 1, b, a, opening))
    return games


class Planner:
    """Hands out games to play and learns their results."""

    stopped_early: str | None = None  # why the format stopped before its planned games

    def more(self, pending: int) -> list:
        """Games to start now (``pending``: games started and not yet ended); [] when none."""
        raise NotImplementedError

    def add(self, game: Played) -> None:
        """A game of this planner has ended."""


class StaticPlanner(Planner):
    def __init__(self, games: list) -> None:
        self._games = games

    def more(self, pending: int) -> list:
        games, self._games = self._games, []
        return games


def _pair_points(games: list[Played], engine: str) -> float:
    return sum(g.black_score if g.black == engine else 1 - g.black_score for g in games)


@dataclass
class SwissState:
    """The Swiss so far: per round its pairs and bye; results as grader.tournaments.swiss takes them."""

    rounds: list[swiss.Round] = field(default_factory=list)
    results: list[swiss.Result] = field(default_factory=list)


class SwissPlanner(Planner):
    """One round at a time: the next is paired once every game of the last has ended."""

    def __init__(self, fmt: Format, engines: list[str], openings: list[str], make: Any) -> None:
        self.fmt, self.engines, self.openings, self.make = fmt, engines, openings, make
        self.state = SwissState()
        self._round_games: dict[str, list[Played]] = {}  # pair -> ended games of the current round
        self._waiting = 0  # games of the current round not ended
        self._closed = 0  # rounds whose results are counted

    def more(self, pending: int) -> list:
        if self._waiting or self.stopped_early or len(self.state.rounds) >= self.fmt.rounds:
            return []
        self._close_round()
        standings, played, had_bye = swiss.pairing_state(self.state.results, self.engines)
        try:
            rnd = swiss.pair_round(standings, played, had_bye)
        except NoPairing as e:
            self.stopped_early = str(e)  # it names the round and why
            return []
        self.state.rounds.append(rnd)
        r = len(self.state.rounds)
        opening = self.openings[(r - 1) % len(self.openings)]
        index = {e: i for i, e in enumerate(self.engines)}
        games = []
        for a, b in rnd.pairs:
            pair = f"s{r}:{index[a]}-{index[b]}"
            games += [self.make(f"{pair}:1", pair, r, a, b, opening), self.make(f"{pair}:2", pair, r, b, a, opening)]
        self._waiting = len(games)
        if not games:  # nothing to wait for (a lone bye cannot happen with 2+ engines)
            self._close_round()
        return games

    def add(self, game: Played) -> None:
        self._round_games.setdefault(game.pair, []).append(game)
        self._waiting -= 1

    def _close_round(self) -> None:
        """Move the last round's pairs and bye into the results, once."""
        if self._closed == len(self.state.rounds):
            return
        rnd = self.state.rounds[-1]
        for games in self._round_games.values():
            a, b = games[0].black, games[0].white
            self.state.results.append(swiss.Result(a, b, _pair_points(games, a), _pair_points(games, b)))
        if rnd.bye:
            self.state.results.append(swiss.Result(rnd.bye, None, swiss.BYE_POINTS, 0.0))
        self._round_games = {}
        self._closed += 1

    def finish(self) -> None:
        """Count the last round once all its games have ended."""
        if not self._waiting:
            self._close_round()

    def standings(self) -> list[swiss.SwissStanding]:
        return swiss.swiss_standings(self.state.results, self.engines)

    def summary(self) -> swiss.SwissResult:
        """The ranking and the rounds paired so far."""
        return swiss.SwissResult(tuple(self.standings()), tuple(self.state.rounds))


class SprtPlanner(Planner):
    """Pairs of the two engines, a few at a time (one per job); after each finished pair the
    test is updated, in the order the pairs finish (on resume: the order they finished in
    before, which the tournament feeds first)."""

    def __init__(self, fmt: Format, engines: list[str], openings: list[str], make: Any, window: int = 1) -> None:
        assert fmt.sprt is not None
        self.settings, self.engines, self.openings, self.make = fmt.sprt, engines, openings, make
        self.window = window
        self.penta = Pentanomial()
        self.result: SprtResult = self._test()
        self._started = 0  # pairs handed out
        self._halves: dict[str, Played] = {}  # pair -> its first game to end

    def _test(self) -> SprtResult:
        s = self.settings
        return sprt(self.penta, s.elo0, s.elo1, s.alpha, s.beta, s.model)

    def more(self, pending: int) -> list:
        games: list[Any] = []
        while (
            self.result.decision is None
            and (self._started + 1) * 2 <= self.settings.max_games
            and pending + len(games) < 2 * self.window
        ):
            k = self._started
            self._started += 1
            a, b = self.engines
            pair = f"p{k + 1}"
            opening = self.openings[k % len(self.openings)]
            games += [
                self.make(f"{pair}:1", pair, k + 1, a, b, opening),
                self.make(f"{pair}:2", pair, k + 1, b, a, opening),
            ]
        return games

    def add(self, game: Played) -> None:
        if self.result.decision is not None:
            return  # ended after the test was decided: played, not counted
        first = self._halves.pop(game.pair, None)
        if first is None:
            self._halves[game.pair] = game
            return
        a = self.engines[0]
        scores = [g.black_score if g.black == a else 1 - g.black_score for g in (first, game)]
        self.penta = self.penta.add(*scores)
        self.result = self._test()

    def summary(self) -> SprtState:
        """The test's state, between the two engines."""
        a, b = self.engines
        return SprtState(**vars(self.result), engines=(a, b), max_games=self.settings.max_games)
