"""Standings, crosstable and Elo ratings of a tournament.

Elo is relative to the field: an engine scoring a fraction s of the points against its
opponents (a win 1, a draw 1/2) is rated -400 log10(1/s - 1) above their average, the
logistic model of established tools. Its 95% error bar uses the normal approximation on
game pairs: the two games of a pair (same opening, colours swapped) count as one
observation with score 0, 1/4, 1/2, 3/4 or 1, which removes the opening's bias from the
variance (the "pentanomial" statistics of fastchess). Games without their pair count alone.
A score of 0 or 1 has no finite Elo: it is reported as None.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Protocol

Z95 = 1.959963984540054


class Scored(Protocol):
    """A game as ratings and crosstables need it: who played each colour, and the score."""

    @property
    def black(self) -> str: ...

    @property
    def white(self) -> str: ...

    @property
    def black_score(self) -> float: ...  # 1, 1/2 or 0 for black


class GameLike(Scored, Protocol):
    pair: str  # games of one pair (same opening, colours swapped) share it
    margin: int  # final score from black's view, under the tournament's scoring
    reason: str  # normal | forfeit | adjudicated
    forfeit: str | None  # the engine that forfeited
    timeouts: dict[str, int]  # per colour ('black', 'white'): moves that hit the time limit
    black_pieces: int  # pieces (discs, marks) each side holds when the game ends
    white_pieces: int


@dataclass(frozen=True)
class Standing:
    engine: str
    games: int
    points: float
    wins: int
    draws: int
    losses: int
    margin: float  # average per game, from the engine's view
    elo: float | None
    elo_error: float | None
    forfeits: int
    timeouts: int
    share: float | None = None  # its pieces over all pieces at its games' ends (None: no pieces)

    def to_json(self) -> dict:
        return {
            "engine": self.engine, "games": self.games, "points": self.points, "wins": self.wins,
            "draws": self.draws, "losses": self.losses, "margin": round(self.margin, 2),
            "elo": None if self.elo is None else round(self.elo, 1),
            "elo_error": None if self.elo_error is None or math.isinf(self.elo_error) else round(self.elo_error, 1),
            "forfeits": self.forfeits, "timeouts": self.timeouts,
            "share": None if self.share is None else round(self.share, 4),
        }  # fmt: skip


def elo(score: float) -> float | None:
    """Elo difference for a score fraction (None at 0 or 1)."""
    if not 0 < score < 1:
        return None
    return -400 * math.log10(1 / score - 1)


def elo_interval(observations: list[float], score: float | None = None) -> tuple[float | None, float | None]:
    """Elo of ``score`` (default: the mean of ``observations``, each in [0, 1]) and the
    half-width of its 95% interval from the observations' variance (None: fewer than two
    observations, or all alike, which leave the spread unknown; inf: the interval reaches a
    score of 0 or 1)."""
    n = len(observations)
    if n == 0:
        return None, None
    mean = sum(observations) / n
    score = mean if score is None else score
    rating = elo(score)
    if rating is None or n < 2:
        return rating, None
    variance = sum(x * x for x in observations) / n - mean * mean
    if variance <= 1e-12:  # every observation alike (a 4-game match of 1-1 pairs): no spread to measure one by
        return rating, None
    margin = Z95 * math.sqrt(max(variance, 0.0) / n)
    lo, hi = elo(score - margin), elo(score + margin)
    if lo is None or hi is None:  # the interval reaches a score of 0 or 1: no finite bound
        return rating, math.inf
    return rating, (hi - lo) / 2


def standings(games: Iterable[GameLike], engines: list[str]) -> list[Standing]:
    """One row per engine, best first (points, then Elo, then name)."""
    stats: dict[str, defaultdict[str, float]] = {e: defaultdict(float) for e in engines}
    pairs: dict[tuple[str, str], list[float]] = defaultdict(list)  # (engine, pair) -> its scores
    for g in games:
        black_pieces, white_pieces = g.black_pieces, g.white_pieces
        if g.forfeit:  # as its margin: the winner holds every piece the game can have
            won = abs(g.margin)
            black_pieces, white_pieces = (0, won) if g.forfeit == g.black else (won, 0)
        for engine, colour, score, diff, mine, theirs in (
            (g.black, "black", g.black_score, g.margin, black_pieces, white_pieces),
            (g.white, "white", 1 - g.black_score, -g.margin, white_pieces, black_pieces),
        ):
            s = stats[engine]
            s["games"] += 1
            s["points"] += score
            s["wins" if score == 1 else "draws" if score == 0.5 else "losses"] += 1
            s["margin"] += diff
            s["forfeits"] += g.forfeit == engine
            s["timeouts"] += g.timeouts.get(colour, 0)
            s["own_pieces"] += mine
            s["all_pieces"] += mine + theirs
            pairs[(engine, g.pair)].append(score)
    rows = []
    for e in engines:
        s = stats[e]
        observations = [sum(v) / len(v) for (engine, _), v in pairs.items() if engine == e]
        played = int(s["games"])
        rating, error = elo_interval(observations, s["points"] / played if played else None)
        rows.append(Standing(
            e, played, s["points"], int(s["wins"]), int(s["draws"]), int(s["losses"]),
            s["margin"] / played if played else 0.0, rating, error, int(s["forfeits"]), int(s["timeouts"]),
            s["own_pieces"] / s["all_pieces"] if s["all_pieces"] else None,
        ))  # fmt: skip
    return sorted(rows, key=lambda r: (-r.points, -_elo_or_bound(r), r.engine))


def _elo_or_bound(row: Standing) -> float:
    """A row's Elo for ordering; a score of 100% (no finite Elo) above every finite one, 0% below."""
    if row.elo is not None:
        return row.elo
    return math.inf if row.games and row.points == row.games else -math.inf


def crosstable(games: Iterable[Scored], engines: list[str]) -> dict[str, dict[str, float | None]]:
    """Points each engine scored against each other engine; None for a pair that never met."""
    table: dict[str, dict[str, float | None]] = {e: {o: None for o in engines if o != e} for e in engines}
    for g in games:
        table[g.black][g.white] = (table[g.black][g.white] or 0.0) + g.black_score
        table[g.white][g.black] = (table[g.white][g.black] or 0.0) + 1 - g.black_score
    return table


NO_ELO = "n/a"  # an Elo or an error bar that too few games (or a score of 0 or 1) leave without a finite value


def elo_cells(s: Standing) -> tuple[str, str]:
    """A standing's Elo and its 95% error as report.html writes them, as the table on screen
    does: whole numbers, never '-0'; ``NO_ELO`` where there is no finite value."""
    rating = NO_ELO if s.elo is None else f"{round(s.elo) + 0:+d}"  # + 0: never '-0'
    error = NO_ELO if s.elo is None or s.elo_error is None or math.isinf(s.elo_error) else f"{round(s.elo_error)}"
    return rating, error
