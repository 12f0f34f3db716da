"""Exact solving for any game: values, optimal moves and lines, and the check of a claimed line.

``ExactSolver`` is negamax over a game's positions with a table of values; a game may give a
faster one (Othello's bitboard search) by overriding ``value`` and ``optimal_moves``. Values
are always from the view of the side to move; a side that must pass hands the turn over.
"""

from __future__ import annotations

import time
from typing import Callable, Generic, Sequence

from ..stop import Stopped
from .base import PASS, Analysis, Game, LineCheck, P

CHECK_EVERY = 20_000  # positions between two looks at should_stop


class ExactSolver(Generic[P]):
    """Exact values by negamax over a game's positions, remembered in a table. Subclasses
    override ``value`` (and ``optimal_moves``) with a faster search; the rest follows."""

    backend = "python"

    def __init__(self, game: Game[P], scoring: str, should_stop: Callable[[], bool] | None = None):
        self.game, self.scoring, self.should_stop = game, scoring, should_stop
        self.nodes = 0
        self._table: dict[P, int] = {}

    def value(self, pos: P) -> int:
        """Exact value of perfect play for the side to move."""
        found = self._table.get(pos)
        if found is not None:
            return found
        self.nodes += 1
        if self.should_stop is not None and self.nodes % CHECK_EVERY == 0 and self.should_stop():
            raise Stopped("the solver was stopped")
        if pos.is_game_over():
            v = pos.score(self.scoring)
        elif pos.must_pass():
            v = -self.value(pos.pass_turn())
        else:
            v = max(-self.value(pos.play(m)) for m in pos.moves())
        self._table[pos] = v
        return v

    def move_value(self, pos: P, move: int) -> int:
        """Exact value for the mover of playing ``move`` (legal), then perfect play."""
        return -self.value(pos.play(move))

    def proven_move_value(self, pos: P, move: int) -> int | None:
        """``move``'s value where a quick proof settles it, without the full search (None: only
        the full search can tell). Here, only a value already in the table."""
        found = self._table.get(pos.play(move))
        return -found if found is not None else None

    def move_values(self, pos: P) -> dict[int, int]:
        """Exact value of every legal move."""
        return {m: self.move_value(pos, m) for m in pos.moves()}

    def optimal_moves(self, pos: P) -> list[int]:
        """Every legal move achieving the value, in rising order (empty: the mover cannot move)."""
        v = self.value(pos)
        return [m for m in pos.moves() if self.move_value(pos, m) == v]

    def line(self, pos: P) -> list[int]:
        """One optimal line to the end of the game (the lowest optimal move at each ply)."""
        out: list[int] = []
        while not pos.is_game_over():
            if pos.must_pass():
                out.append(PASS)
                pos = pos.pass_turn()
                continue
            move = self.optimal_moves(pos)[0]
            out.append(move)
            pos = pos.play(move)
        return out

    def analyze(self, pos: P, all_values: bool = False) -> Analysis:
        """Value, optimal moves, one optimal line and (optionally) every move's value."""
        nodes, start = self.nodes, time.perf_counter()
        value = self.value(pos)
        optimal = self.optimal_moves(pos)
        values = self.move_values(pos) if all_values else None
        line = self.line(pos)
        return Analysis(pos, self.scoring, value, optimal, line, values, self.nodes - nodes,
                        time.perf_counter() - start, self.backend)  # fmt: skip

    def verify_line(self, pos: P, claimed: Sequence[int]) -> LineCheck:
        """Check that ``claimed`` (forward order) is optimal for both sides to the end.

        Passes are implied: negative numbers in the claimed line are ignored.
        """
        sign = 1
        played: list[int] = []

        def wrong(problem: str, move: int | None, move_value: int | None, at: P) -> LineCheck:
            best, best_value = ([], None) if problem == "too-long" else (self.optimal_moves(at), self.value(at))
            return LineCheck(problem, len(played) + 1, played, at.token, move,
                             None if move_value is None else sign * move_value, best,
                             None if best_value is None else sign * best_value)  # fmt: skip

        for move in (m for m in claimed if m >= 0):
            while pos.must_pass():
                played.append(PASS)
                pos, sign = pos.pass_turn(), -sign
            if pos.is_game_over():
                return wrong("too-long", move, None, pos)
            if not pos.is_legal(move):
                return wrong("illegal", move, None, pos)
            value = self.move_value(pos, move)
            if value < self.value(pos):
                return wrong("suboptimal", move, value, pos)
            played.append(move)
            pos, sign = pos.play(move), -sign
        while pos.must_pass():
            played.append(PASS)
            pos, sign = pos.pass_turn(), -sign
        if not pos.is_game_over():
            return wrong("too-short", None, None, pos)
        return LineCheck(None, played=played)

    def clear(self) -> None:
        """Forget every stored result."""
        self._table.clear()
