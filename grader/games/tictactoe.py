"""Tic-tac-toe, the first lab of the series: a never-losing player by minimax.

A board is 9 characters, row-major: squares 0 1 2 / 3 4 5 / 6 7 8 (a1 b1 c1 / a2 b2 c2 /
a3 b3 c3), '.' empty, 'x' and 'o' marks; x moves first. A position must be reachable by
legal play: #x = #o (x to move) or #x = #o + 1 (o to move), at most one side with three in a
row, and the token given must be the side to move. Values are for the side to move:

    outcome      +1 a forced win, 0 a draw, -1 a forced loss
    fastest-win  a win is worth 1 + the empty squares left when it is completed, a loss
                 the negative of that, a draw 0
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..errors import BoardError
from ..seeding import rng
from .base import Game, StringBoard
from .drawing import grid_svg, grid_text
from .solving import ExactSolver

FILES = "abc"
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
OUTCOME, FASTEST_WIN = "outcome", "fastest-win"


def winner(board: str) -> str | None:
    """'x' or 'o' when that side has three in a row (the first found), else None."""
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


@dataclass(frozen=True, slots=True)
class Position(StringBoard):
    """A tic-tac-toe position: the 9-character board and the side to move."""

    board: str
    token: str = "x"

    @property
    def game(self) -> TicTacToe:
        return TICTACTOE

    def moves(self) -> list[int]:
        return [] if self.is_game_over() else [i for i, ch in enumerate(self.board) if ch == "."]

    def is_legal(self, move: int) -> bool:
        return 0 <= move < 9 and self.board[move] == "." and not self.is_game_over()

    def play(self, move: int) -> Position:
        if not self.is_legal(move):
            raise BoardError(f"{move} is not a legal move for {self.token}")
        return Position(self.board[:move] + self.token + self.board[move + 1 :], self.opponent_token)

    def pass_turn(self) -> Position:
        raise BoardError("there are no passes in tic-tac-toe")

    def must_pass(self) -> bool:
        return False

    def is_game_over(self) -> bool:
        return winner(self.board) is not None or "." not in self.board

    def score(self, scoring: str = OUTCOME) -> int:
        """The final score for the mover: the side that just moved made any three in a row."""
        won = winner(self.board)
        if won is None:
            return 0
        margin = 1 if scoring == OUTCOME else 1 + self.empties
        return margin if won == self.token else -margin


@functools.lru_cache(maxsize=1)
def reachable() -> tuple[Position, ...]:
    """Every position reachable by legal play from the empty board (5,478), in order of play."""
    seen = {Position("." * 9, "x")}
    frontier, out = list(seen), []
    while frontier:
        out += frontier
        nxt = []
        for pos in frontier:
            for m in pos.moves():
                child = pos.play(m)
                if child not in seen:
                    seen.add(child)
                    nxt.append(child)
        frontier = sorted(nxt, key=lambda p: p.board)
    return tuple(out)


def open_positions(empties: int | None = None) -> list[Position]:
    """The reachable positions that are not over (4,520), or those with ``empties`` empty squares."""
    return [p for p in reachable() if not p.is_game_over() and (empties is None or p.empties == empties)]


def _mark(ch: str, x: float, y: float) -> str:
    if ch == "x":
        return f'<path d="M{x - 9:g} {y - 9:g}l18 18m0 -18l-18 18" stroke="#1a237e" stroke-width="3.5"/>'
    return f'<circle cx="{x:g}" cy="{y:g}" r="9.5" fill="none" stroke="#b71c1c" stroke-width="3.5"/>'


class TicTacToe(Game[Position]):
    """Tic-tac-toe: 3x3, x first, no passes, values by outcome or by the fastest win."""

    name = "tictactoe"
    title = "Tic-tac-toe"
    board_length = 9
    scorings = (OUTCOME, FASTEST_WIN)
    tournament_scoring = OUTCOME
    plans = ("standard", "exhaustive")
    max_score = 10
    examples = "submissions/tictactoe"
    empties_allowed = range(1, 10)

    def forfeit_score(self, scoring: str) -> int:
        return 1 if scoring == OUTCOME else self.max_score

    def parse(self, board: str, token: str) -> Position:
        if len(board) != 9:
            raise BoardError(f"board has {len(board)} characters, expected 9 ('.', 'x' or 'o' each)")
        b, tok = board.lower(), token.strip().lower()
        bad = next((i for i, ch in enumerate(b) if ch not in ".xo"), None)
        if bad is not None:
            raise BoardError(f"bad character {board[bad]!r} at square {bad} of the board: use '.', 'x' or 'o'")
        if tok not in ("x", "o"):
            raise BoardError(f"bad token {token!r}: the side to move must be 'x' or 'o'")
        xs, os_ = b.count("x"), b.count("o")
        if xs not in (os_, os_ + 1):
            raise BoardError(
                f"this board cannot arise in play: {xs} x and {os_} o (x moves first, so x has as many marks as o, or one more)"
            )
        to_move = "x" if xs == os_ else "o"
        wins = {w for w in "xo" if any(b[a] == b[c] == b[d] == w for a, c, d in LINES)}
        if len(wins) == 2:
            raise BoardError("this board cannot arise in play: both sides have three in a row")
        if wins and (wins.pop() == "x") != (to_move == "o"):
            raise BoardError("this board cannot arise in play: the side with three in a row did not move last")
        if tok != to_move:
            raise BoardError(f"wrong token {tok!r}: on this board it is {to_move}'s turn ({xs} x, {os_} o)")
        return Position(b, tok)

    def start(self) -> Position:
        return Position("." * 9, "x")

    def square_name(self, sq: int) -> str:
        return f"{FILES[sq % 3]}{sq // 3 + 1}"

    def parse_square(self, text: str) -> int:
        t = text.strip().lower()
        if t.isascii() and t.isdigit() and int(t) < 9:
            return int(t)
        if len(t) == 2 and t[0] in FILES and t[1] in "123":
            return FILES.index(t[0]) + 3 * (int(t[1]) - 1)
        raise BoardError(f"bad square {text!r}: give an index 0-8 or a name a1-c3")

    def render(self, pos: Position, marks: Mapping[int, str] | None = None) -> str:
        return grid_text(pos.board, 3, FILES, marks)

    def svg(self, pos: Position, best: Sequence[int], played: int | None) -> str:
        legal = played is not None and pos.is_legal(played)
        return grid_svg(pos.board, 3, FILES, _mark, "#fafafa", best, played, legal, f"board, {pos.token} to move")

    def solver(self, scoring: str, should_stop=None, backend: str = "auto") -> ExactSolver[Position]:
        self.backend(backend)
        return ExactSolver(self, self.scoring(scoring), should_stop)

    def published(self, name: str) -> list[Position]:
        """Every tic-tac-toe position can be listed: the standard plan's empty board, and the
        whole of the exhaustive plan."""
        return self.make_plan(name, 0) if name == "exhaustive" else [self.start()] if name == "standard" else []

    def make_plan(self, name: str, seed: int) -> list[Position]:
        """'standard': the empty board, then 99 positions not over, drawn with the seed and
        spread as evenly as the counts allow over 1 to 8 empties, in rising order of empties.
        'exhaustive': all 4,520 positions that are not over, by empties then board."""
        if name == "exhaustive":
            return sorted(open_positions(), key=lambda p: (p.empties, p.board))
        if name != "standard":
            raise BoardError(f"tictactoe has no plan {name!r}: use one of {', '.join(self.plans)}")
        groups = {e: open_positions(e) for e in range(1, 9)}
        quota = dict.fromkeys(groups, 0)
        while sum(quota.values()) < 99:  # one more for each group that has one, smallest first
            for e in groups:
                if sum(quota.values()) < 99 and quota[e] < len(groups[e]):
                    quota[e] += 1
        out = [self.start()]
        for e, group in groups.items():
            out += rng("grader", "tictactoe", seed, e).sample(group, quota[e])
        return out

    def distinct_boards(self, empties: int) -> int | None:
        return len(open_positions(empties))

    def random_positions(self, seed: int, empties: range, count: int) -> list[Position]:
        out = []
        for e in empties:
            group = open_positions(e)
            out += rng("grader", "tictactoe", seed, e).sample(group, min(count, len(group)))
        return out


TICTACTOE = TicTacToe()
