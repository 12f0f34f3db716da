"""Exact solving for any game: values, optimal moves and lines, and the check of a claimed line.

``ExactSolver`` is negamax over a game's positions with a table of values; a game may give a
faster one (Othello's bitboard search) by overriding ``value`` and ``optimal_moves``. Values
are always from the view of the side to move; a side that must pass hands the turn over.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Generic, Sequence

from ..stop import Stopped
from .base import PASS, Game, P, Position

CHECK_EVERY = 20_000  # positions between two looks at should_stop


@dataclass(frozen=True)
class Analysis:
    """Everything the solver says about one position. Values are for the side to move."""

    position: Position
    scoring: str
    value: int
    optimal_moves: list[int]
    line: list[int]  # one optimal line to the end of the game, PASS (-1) for a pass
    move_values: dict[int, int] | None = None  # every legal move's value, when asked for
    nodes: int = 0
    seconds: float = 0.0
    backend: str = "python"

    def to_json(self) -> dict:
        """The JSON object of ``grader solve --json``."""
        out: dict = {
            "board": self.position.board_string(),
            "token": self.position.token,
            "scoring": self.scoring,
            "value": self.value,
            "optimal_moves": self.optimal_moves,
            "line": self.line,
        }
        if self.move_values is not None:
            out["move_values"] = {str(sq): v for sq, v in self.move_values.items()}
        out.update(nodes=self.nodes, seconds=round(self.seconds, 6), backend=self.backend)
        return out


@dataclass(frozen=True)
class LineCheck:
    """The verdict on a claimed line. Values are from the view of the root position's mover.

    ``problem`` is None for a correct line, else one of: 'illegal' (the move at ``ply`` is not
    legal), 'suboptimal' (legal but worse than ``best_moves``), 'too-long' (moves after the
    game ended), 'too-short' (the line stops before the game ends).
    """

    problem: str | None
    ply: int | None = None  # 1-based, passes counted
    played: list[int] = field(default_factory=list)  # the replayed line before ``ply``, passes explicit
    mover: str | None = None  # token of the side to move at ``ply``
    move: int | None = None  # the claimed move at ``ply``
    move_value: int | None = None  # value reached by the claimed move
    best_moves: list[int] = field(default_factory=list)
    best_value: int | None = None  # value of perfect play from ``ply``

    @property
    def ok(self) -> bool:
        return self.problem is None

    def describe(self, root_token: str, game: Game) -> str:
        """One sentence in plain words, with values from ``root_token``'s view."""
        if self.ok:
            return "line is optimal for both sides to the end of the game"
        move = "?" if self.move is None else game.move_text(self.move)
        before = ", ".join(game.move_text(m) for m in self.played)
        after = f"after {before}, " if before else ""
        best = game.moves_text(self.best_moves, " or ")
        where = f"line goes wrong at ply {self.ply}: {after}"
        if self.problem == "too-long":
            return f"{where}the game is over but the line goes on with {move}"
        if self.problem == "too-short":
            return f"{where}the line stops but the game is not over: {self.mover} plays {best} ({self.best_value:+d} for {root_token})"
        if self.problem == "illegal":
            return f"{where}{self.mover} cannot play {move} (not a legal move)"
        played = f"{where}{self.mover} plays {move} ({self.move_value:+d})"
        if self.mover == root_token:
            return f"{played} but {best} gets {self.best_value:+d}"
        return f"{played} but {best} holds {root_token} to {self.best_value:+d}"


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
