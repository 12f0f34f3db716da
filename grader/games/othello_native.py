"""Othello's exact solver with its search in C (grader._othello_native), when that is built.

``NativeOthelloSolver`` is ``OthelloSolver`` with ``_exact`` and ``_search`` sent to the C
core, which keeps its own transposition table across calls; optimal moves, lines, line
checks and analyses come from the same Python code above them. The C search releases the
GIL and stops on Ctrl-C (KeyboardInterrupt) or when ``should_stop()`` is true (``Stopped``),
polled about every 20 ms.
"""

from __future__ import annotations

from typing import Callable

from ..stop import Stopped, signal_point
from .native import Extension
from .othello import OTHELLO, WINNER_TAKES_EMPTIES, Bitboard
from .othello_solver import OthelloSolver

NATIVE = Extension("grader._othello_native")  # loaded when a solver is first made or asked about


def available() -> bool:
    """True when the C extension is importable."""
    return NATIVE.available()


class NativeOthelloSolver(OthelloSolver):
    """``OthelloSolver`` with the search in C. ``table_bits``: log2 of the C table's entries
    (24 bytes each; 22 is about 100 MB)."""

    backend = "native"

    def __init__(self, scoring: str, table_bits: int = 22, should_stop: Callable[[], bool] | None = None):
        self._native = NATIVE.load()
        self._core = self._native.Solver(scoring == WINNER_TAKES_EMPTIES, table_bits, should_stop)
        self._node_offset = 0
        self._solved: tuple[Bitboard, Bitboard, int, list[int]] = (-1, -1, 0, [])  # the last solve()
        super().__init__(scoring, should_stop=should_stop)

    @property  # type: ignore[override]
    def nodes(self) -> int:
        return self._core.nodes - self._node_offset

    @nodes.setter
    def nodes(self, value: int) -> None:
        self._node_offset = self._core.nodes - value

    def clear(self) -> None:
        self._core.clear()

    def _exact(self, p: Bitboard, o: Bitboard) -> int:
        """The value, by a search that finds the optimal moves too: kept for ``_optimal``."""
        signal_point("solver")
        try:
            value, moves = self._core.solve(p, o)
        except self._native.Cancelled:
            raise Stopped("the solver was stopped") from None
        signal_point("solved")
        if moves is not None:
            self._solved = (p, o, value, moves)
        return int(value)

    def _optimal(self, p: Bitboard, o: Bitboard, v: int) -> list[int]:
        solved = self._solved  # one read: another thread may solve meanwhile
        if solved[:3] == (p, o, v):
            return list(solved[3])
        try:
            moves: list[int] = self._core.optimal_moves(p, o, v)
        except self._native.Cancelled:
            raise Stopped("the solver was stopped") from None
        return moves

    def _search(self, p: Bitboard, o: Bitboard, alpha: int, beta: int, n: int) -> int:
        return self._core_search(p, o, alpha, beta)

    def _core_search(self, p: Bitboard, o: Bitboard, alpha: int, beta: int) -> int:
        try:
            return self._core.search(p, o, alpha, beta)
        except self._native.Cancelled:
            raise Stopped("the solver was stopped") from None


OTHELLO.add_solver("native", NativeOthelloSolver, lambda: NATIVE.missing())
