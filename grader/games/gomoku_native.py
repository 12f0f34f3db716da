"""Gomoku's exact solver with its search in C (grader._gomoku_native), when that is built.

``NativeGomokuSolver`` is ``GomokuSolver`` with ``value`` sent to the C core (one core for
each board size, each keeping its own transposition table across calls): optimal moves,
every move's value, lines and line checks come from the same Python code above it. Boards
the core does not take (over its ``MAX_SIZE``, 11x11, or ``k`` below 3) go to the Python
search. The C search releases the GIL and stops on Ctrl-C (KeyboardInterrupt) or when
``should_stop()`` is true (``Stopped``), polled about every 20 ms. The extension is loaded
when the first solver is made or asked about (``native.Extension``).
"""

from __future__ import annotations

from typing import Any, Callable

from ..stop import Stopped
from .gomoku import Gomoku, Position
from .gomoku_solver import GomokuSolver
from .native import Extension

NATIVE = Extension("grader._gomoku_native")  # loaded when a solver is first made or asked about
TABLE_BITS = 20  # log2 of each core's table entries (56 bytes each: 56 MB, touched as it fills)
QUICK_NODES = 50_000  # the nodes a move's quick proof may take in the core (a few ms)

_BLACK = str.maketrans("xo.", "100")
_WHITE = str.maketrans("xo.", "010")


def available() -> bool:
    """True when the C extension is importable."""
    return NATIVE.available()


def bitboards(board: str) -> tuple[int, int]:
    """Black's and white's stones as bitboards (point i is bit i)."""
    return int(board.translate(_BLACK)[::-1], 2), int(board.translate(_WHITE)[::-1], 2)


class NativeGomokuSolver(GomokuSolver):
    """``GomokuSolver`` with the search in C."""

    backend = "native"

    def __init__(self, game: Gomoku, scoring: str, should_stop: Callable[[], bool] | None = None,
                 table_bits: int = TABLE_BITS):  # fmt: skip
        self._native = NATIVE.load()
        super().__init__(game, scoring, should_stop)
        self._bits = table_bits
        self._cores: dict[int, Any] = {}  # board size -> its C solver

    def _core(self, size: int) -> Any:
        """The C solver for a ``size`` board (None: the core does not take it)."""
        if size not in self._cores:
            ok = 4 <= size <= self._native.MAX_SIZE and 3 <= self.rules.k <= size
            self._cores[size] = self._native.Solver(size, self.rules.k, self.rules.overline, self._bits) if ok else None
        return self._cores[size]

    def clear(self) -> None:
        super().clear()
        for core in self._cores.values():
            if core is not None:
                core.clear()

    def value(self, pos: Position) -> int:
        core = self._core(pos.size)
        if core is None:
            return super().value(pos)
        if pos.is_game_over():
            return pos.score()
        found = self._table.get(pos)
        if found is None:
            found = self._table[pos] = self._core_value(core, pos, 0)
        return found

    def proven_move_value(self, pos: Position, move: int) -> int | None:
        """``move``'s value where the core settles it within ``QUICK_NODES`` nodes (None: only
        the full search can tell)."""
        core = self._core(pos.size)
        if core is None:
            return super().proven_move_value(pos, move)
        after = pos.play(move)
        if after.is_game_over():
            return -self.value(after)
        found = self._table.get(after)
        if found is None:
            found = self._core_value(core, after, QUICK_NODES)
            if found is None:
                return None
            self._table[after] = found
        return -found

    def _core_value(self, core: Any, pos: Position, max_nodes: int) -> Any:
        """The core's value of ``pos`` (a game not over); None when ``max_nodes`` (0: no limit)
        did not settle it."""
        black, white = bitboards(pos.board)
        before = core.nodes
        try:
            return core.value(black, white, should_stop=self.should_stop, max_nodes=max_nodes)
        except self._native.Cancelled:
            raise Stopped("the solver was stopped") from None
        finally:
            self.nodes += core.nodes - before


Gomoku.add_solver("native", NativeGomokuSolver, lambda: NATIVE.missing())
