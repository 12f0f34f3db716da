"""What an exact solve will cost, estimated before it starts, so that no command stalls in silence.

The model: seconds = nodes(empties) / nodes per second. ``Game.solve_nodes`` gives the typical
number of nodes an analysis searches at each number of empties and backend (for Othello an
empirical 2.5 times more per empty, 1.75 beyond 18 empties with the native solver); the speed is measured once per process and backend, by solving
the game's calibration positions (a few tens of milliseconds). Single positions vary about
threefold either way around the estimate; games without a model (tic-tac-toe) are never
refused.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..errors import GraderError
from .base import Game, Position

SURE_SPEED = 1000.0  # nodes per second: under any backend's on any machine (the Python solver's is ~100 times it)
_SPEEDS: dict[tuple[str, str], float] = {}  # (game, backend) -> measured nodes per second
_LOCK = threading.Lock()


def nodes_per_second(game: Game, backend: str) -> float:
    """The measured speed of ``backend`` (a name ``game.backend()`` gives) on this machine."""
    key = (game.name, backend)
    with _LOCK:
        if key not in _SPEEDS:
            solver = game.solver(game.scoring(None), backend=backend)
            start = time.perf_counter()
            for pos in game.calibration(backend):
                solver.analyze(pos)
            seconds = time.perf_counter() - start
            _SPEEDS[key] = max(solver.nodes, 1) / max(seconds, 1e-4)
        return _SPEEDS[key]


@dataclass(frozen=True)
class Estimate:
    """The expected cost of solving one position exactly."""

    empties: int
    backend: str
    nodes: float | None  # None: the game has no cost model (it solves at once)
    nodes_per_second: float | None

    @property
    def seconds(self) -> float:
        if self.nodes is None or not self.nodes_per_second:
            return 0.0
        return self.nodes / self.nodes_per_second

    def describe(self) -> str:
        """'about 2 min with the native solver (at 25.1 M nodes/s)'."""
        speed = f" at {self.nodes_per_second / 1e6:.1f} M nodes/s" if self.nodes_per_second else ""
        took = duration(self.seconds)
        return f"{'' if took.startswith('more') else 'about '}{took} with the {self.backend} solver{speed}"


def estimate(game: Game, empties: int, backend: str = "auto") -> Estimate:
    """The cost of an exact analysis of a position with ``empties`` empties."""
    backend = game.backend(backend)
    nodes = game.solve_nodes(empties, backend)
    speed = nodes_per_second(game, backend) if nodes is not None else None
    return Estimate(empties, backend, nodes, speed)


def deepest_within(game: Game, seconds: float, backend: str = "auto") -> int | None:
    """The most empties whose estimate is within ``seconds`` (None: no model, any depth)."""
    if game.solve_nodes(1) is None:
        return None
    best = 0
    for n in range(1, game.board_length + 1):
        if estimate(game, n, backend).seconds > seconds:
            break
        best = n
    return best


def first_over(
    positions: Iterable[Position], game: Game, backend: str, budget: float | None
) -> tuple[int, Estimate] | None:
    """The position (0-based index) with the most empties, with its estimate, when that is
    over ``budget`` seconds; None when every one fits (or no budget, or no cost model)."""
    if budget is None:
        return None
    worst: tuple[int, int] | None = None
    for i, pos in enumerate(positions):
        if worst is None or pos.empties > worst[1]:
            worst = (i, pos.empties)
    if worst is None:
        return None
    nodes = game.solve_nodes(worst[1], game.backend(backend))
    if nodes is None or nodes <= budget * SURE_SPEED:  # within the budget at any speed: nothing to measure
        return None
    est = estimate(game, worst[1], backend)
    return (worst[0], est) if est.seconds > budget else None


def refuse_over(positions: Sequence[Position], game: Game, backend: str, max_seconds: float | None,
                labels: Sequence[str] = ()) -> None:  # fmt: skip
    """GraderError, before any solve, when solving one of ``positions`` with ``backend`` is
    estimated to take longer than ``max_seconds`` (None: no limit), naming it (by ``labels``,
    else 'the board'), the estimate and what fits."""
    over = first_over(positions, game, backend, max_seconds)
    if over is not None and max_seconds is not None:
        i, est = over
        what = (labels[i] if i < len(labels) else "") or "the board"
        raise GraderError(f"{what} has {est.empties} empties: solving it would take {est.describe()}, over --max-seconds "
                          f"{max_seconds:g}: {fix_hint(game, est, max_seconds)}")  # fmt: skip


def fix_hint(game: Game, est: Estimate, budget: float) -> str:
    """'boards of at most 19 empties': what fits in ``budget`` seconds."""
    fits = deepest_within(game, budget, est.backend)
    faster = "" if est.backend == game.backends()[0] and est.backend != "python" else f"; {_faster(game, est.backend)}"
    return f"boards of at most {fits} empties fit{faster}"


def _faster(game: Game, backend: str) -> str:
    if backend != game.backends()[0]:
        return f"the {game.backends()[0]} solver is faster (--backend auto)"
    return game.backend_note() or "no faster solver is built here"


def duration(seconds: float) -> str:
    """'0.3 s', '42 s', '7 min', '3 h', '12 days'."""
    if seconds < 10:
        return f"{seconds:.1g} s" if seconds < 1 else f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.0f} h"
    if seconds < 3 * 365 * 86400:
        return f"{seconds / 86400:.0f} days"
    years = seconds / (365 * 86400)
    return f"{years:.0f} years" if years < 1000 else "more than 1000 years"
