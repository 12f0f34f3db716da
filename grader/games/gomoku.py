"""Gomoku (five in a row), the third lab: an endgame solver spoken over GTP.

Free-style Gomoku, as the course plays it: black (x) and white (o) alternate placing a stone
on an empty point of a square board (5x5 to 19x19; 7x7 by default), black first; the first
to make an unbroken line of five or more of its stones (across, up, or diagonally) wins; a
full board without one is a draw. ``overline=False`` makes the line of exactly five win (a
longer line, an overline, does not count), as in standard Gomoku. No passes.

A variant is named by its spec wherever a game is named (``--game``, plan files, run and
tournament folders): ``gomoku`` is the course's rules on 7x7; ``gomoku:size=9`` another
default board (where tournaments start and random positions are drawn; a board of any size
from 5 to 19 parses under any variant), ``gomoku:overline=false`` standard Gomoku, or both:
``gomoku:size=9,overline=false``. config.yaml's ``gomoku:`` section (size, overline) fills in
what a name leaves out.

A board is size x size characters, row-major from row 1 (the bottom row in GTP), '.' empty,
'x' black, 'o' white. Points are named as GTP names them: column letters A.. with I skipped,
then the row: 'A1' is index 0, 'C3' on 7x7 is index 16. Values are for the side to move:
+1 a forced win, 0 a draw, -1 a forced loss (``outcome``).
"""

from __future__ import annotations

import importlib
import itertools
import math
import re
import threading
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Iterator, Mapping, Sequence

from ..errors import BoardError
from ..seeding import rng
from .base import Game, StringBoard
from .drawing import grid_svg, grid_text
from .solving import ExactSolver

COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP's: no I
OUTCOME = "outcome"
SIZES = range(5, 20)
_STEPS = ((0, 1), (1, 0), (1, 1), (1, -1))  # (row, column): along a row, a column, two diagonals
_POINT = re.compile(r"([A-HJ-Ta-hj-t])(1[0-9]|[1-9])")


@dataclass(frozen=True, slots=True)
class Position(StringBoard):
    """A Gomoku position: the board, the side to move, and the rules it is played by."""

    board: str
    token: str = "x"
    rules: Gomoku = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    @property
    def game(self) -> Gomoku:
        return self.rules

    @property
    def size(self) -> int:
        return math.isqrt(len(self.board))

    def winner(self) -> str | None:
        """The side with a winning line, if one has."""
        return self.rules.winner(self.board)

    def moves(self) -> list[int]:
        return [] if self.is_game_over() else [i for i, ch in enumerate(self.board) if ch == "."]

    def is_legal(self, move: int) -> bool:
        return 0 <= move < len(self.board) and self.board[move] == "." and not self.is_game_over()

    def play(self, move: int, /) -> Position:
        if not self.is_legal(move):
            raise BoardError(
                f"{self.rules.square_name(move) if 0 <= move < len(self.board) else move} is not a legal move for {self.token}"
            )
        return Position(self.board[:move] + self.token + self.board[move + 1 :], self.opponent_token, self.rules)

    def pass_turn(self) -> Position:
        raise BoardError("there are no passes in Gomoku")

    def must_pass(self) -> bool:
        return False

    def is_game_over(self) -> bool:
        return "." not in self.board or self.winner() is not None

    def score(self, scoring: str = OUTCOME) -> int:
        """The final outcome for the side to move: the side that just moved made any line."""
        won = self.winner()
        return 0 if won is None else 1 if won == self.token else -1


def _stone(ch: str, x: float, y: float) -> str:
    fill, edge = ("#111", "#000") if ch == "x" else ("#fafafa", "#333")
    return f'<circle cx="{x:g}" cy="{y:g}" r="11" fill="{fill}" stroke="{edge}" stroke-width="1.5"/>'


class Gomoku(Game[Position]):
    """Gomoku on ``size`` x ``size`` (any size from 5 to 19 parses; ``size`` is the default
    board), ``k`` in a row wins (``overline``: a longer line wins too). ``name`` is the
    variant's spec ('gomoku:size=9'), which ``get_game`` reads back."""

    name = "gomoku"
    title = "Gomoku"
    scorings = (OUTCOME,)
    tournament_scoring = OUTCOME
    max_score = 1
    examples = "submissions/gomoku"
    protocols = ("gtp",)
    placing = True
    lab_protocol = "gtp"  # the course's Gomoku players speak GTP: graded by 'grader regress'
    empties_allowed = range(1, 362)

    options = {"size": int, "overline": bool}  # get_game('gomoku:size=9,overline=false')

    def __init__(self, size: int = 7, k: int = 5, overline: bool = True):
        self.size, self.k, self.overline = size, k, overline
        self.board_length = size * size  # type: ignore[misc]
        self.name = variant_name(size, k, overline)  # type: ignore[misc]
        self._lines: dict[int, list[tuple[int, ...]]] = {}

    def variant(self, size: int | None = None, overline: bool | None = None) -> Gomoku:  # type: ignore[override]
        """These rules with another default board or overline rule: one shared object for each."""
        size = self.size if size is None else size
        if size not in SIZES and size != self.size:
            raise BoardError(f"a Gomoku board is 5x5 to 19x19, not {size}x{size}")
        key = (size, self.k, self.overline if overline is None else overline)
        if key == (self.size, self.k, self.overline):
            return self
        if key not in _SHARED:
            _SHARED[key] = Gomoku(*key)
        return _SHARED[key]

    def sized(self, size: int) -> Gomoku:
        """These rules on a ``size`` x ``size`` board (GTP's boardsize)."""
        return self.variant(size=size)

    def __repr__(self) -> str:
        return f"Gomoku(size={self.size}, k={self.k}, overline={self.overline})"

    # --- rules ----------------------------------------------------------------------------

    def lines(self, size: int) -> list[tuple[int, ...]]:
        """Every run of ``k`` points in a line on a ``size`` board."""
        if size not in self._lines:
            out = []
            for r in range(size):
                for c in range(size):
                    for dr, dc in _STEPS:
                        end_r, end_c = r + dr * (self.k - 1), c + dc * (self.k - 1)
                        if 0 <= end_r < size and 0 <= end_c < size:
                            out.append(tuple((r + dr * i) * size + c + dc * i for i in range(self.k)))
            self._lines[size] = out
        return self._lines[size]

    def run_through(self, board: Sequence[str], size: int, sq: int, who: str) -> int:
        """The longest line of ``who``'s stones through ``sq`` (counting ``sq`` as ``who``'s)."""
        r0, c0 = divmod(sq, size)
        best = 0
        for dr, dc in _STEPS:
            n = 1
            for sign in (1, -1):
                r, c = r0 + sign * dr, c0 + sign * dc
                while 0 <= r < size and 0 <= c < size and board[r * size + c] == who:
                    n += 1
                    r, c = r + sign * dr, c + sign * dc
            best = max(best, n) if self.overline or n <= self.k else max(best, n if n == self.k else 0)
        return best

    def wins_at(self, board: Sequence[str], size: int, sq: int, who: str) -> bool:
        """Whether ``who`` playing ``sq`` makes a winning line."""
        r0, c0 = divmod(sq, size)
        for dr, dc in _STEPS:
            n = 1
            for sign in (1, -1):
                r, c = r0 + sign * dr, c0 + sign * dc
                while 0 <= r < size and 0 <= c < size and board[r * size + c] == who:
                    n += 1
                    r, c = r + sign * dr, c + sign * dc
            if n == self.k or (n > self.k and self.overline):
                return True
        return False

    def winner(self, board: str) -> str | None:
        """The side with a winning line on ``board`` (the first found), if one has."""
        size = math.isqrt(len(board))
        for line in self.lines(size):
            first = board[line[0]]
            if first != "." and all(board[i] == first for i in line):
                if self.overline or not self._longer(board, size, line, first):
                    return first
        return None

    def _longer(self, board: str, size: int, line: tuple[int, ...], who: str) -> bool:
        """Whether ``line`` of ``who``'s stones extends to more than ``k`` (an overline)."""
        step = line[1] - line[0]
        before, after = line[0] - step, line[-1] + step
        r0, c0 = divmod(line[0], size)
        r1, c1 = divmod(line[-1], size)
        dr, dc = (r1 - r0) // (self.k - 1), (c1 - c0) // (self.k - 1)
        ok_before = 0 <= r0 - dr < size and 0 <= c0 - dc < size and board[before] == who
        ok_after = 0 <= r1 + dr < size and 0 <= c1 + dc < size and board[after] == who
        return ok_before or ok_after

    # --- positions ------------------------------------------------------------------------

    def parse(self, board: str, token: str) -> Position:
        size = math.isqrt(len(board))
        if size * size != len(board) or not (size in SIZES or size == self.size):
            raise BoardError(f"board has {len(board)} characters: a Gomoku board is N x N with N from 5 to 19 "
                             f"(49 characters for 7x7), '.', 'x' or 'o' each")  # fmt: skip
        b, tok = board.lower(), token.strip().lower()
        bad = next((i for i, ch in enumerate(b) if ch not in ".xo"), None)
        if bad is not None:
            raise BoardError(f"bad character {board[bad]!r} at point {bad} of the board: use '.', 'x' or 'o'")
        if tok not in ("x", "o", "b", "w"):
            raise BoardError(f"bad token {token!r}: the side to move must be 'x' (black) or 'o' (white)")
        tok = {"b": "x", "w": "o"}.get(tok, tok)
        xs, os_ = b.count("x"), b.count("o")
        if xs not in (os_, os_ + 1):
            raise BoardError(f"this board cannot arise in play: {xs} black and {os_} white stones "
                             "(black moves first, so it has as many stones as white, or one more)")  # fmt: skip
        to_move = "x" if xs == os_ else "o"
        if tok != to_move:
            raise BoardError(f"wrong token {tok!r}: on this board it is {to_move}'s turn ({xs} x, {os_} o)")
        lines = {b[line[0]] for line in self.lines(size) if b[line[0]] != "." and all(b[i] == b[line[0]] for i in line)}
        if len(lines) == 2:
            raise BoardError(f"this board cannot arise in play: both sides have {self.k} in a row")
        if lines and lines.pop() == to_move:
            raise BoardError(f"this board cannot arise in play: the side to move already has {self.k} in a row")
        return Position(b, tok, self.sized(size))

    def start(self) -> Position:
        return Position("." * self.size * self.size, "x", self)

    def square_name(self, sq: int) -> str:
        size = self.size
        return f"{COLUMNS[sq % size]}{sq // size + 1}"

    def point_name(self, sq: int, size: int) -> str:
        """'C3': a point's GTP name on a ``size`` board."""
        return f"{COLUMNS[sq % size]}{sq // size + 1}"

    def parse_point(self, text: str, size: int) -> int:
        """A point from its GTP name ('c3', any case) on a ``size`` board; BoardError if not one."""
        found = _POINT.fullmatch(text.strip())
        if not found:
            raise BoardError(
                f"bad point {text!r}: give a column letter A-{COLUMNS[size - 1]} (no I) and a row 1-{size}"
            )
        col, row = COLUMNS.index(found.group(1).upper()), int(found.group(2))
        if col >= size or row > size:
            raise BoardError(f"point {text!r} is off the {size}x{size} board")
        return (row - 1) * size + col

    def parse_square(self, text: str) -> int:
        t = text.strip()
        if t.isascii() and t.isdigit() and int(t) < self.board_length:
            return int(t)
        return self.parse_point(t, self.size)

    def render(self, pos: Position, marks: Mapping[int, str] | None = None) -> str:
        return grid_text(pos.board, pos.size, COLUMNS, marks)

    def svg(self, pos: Position, best: Sequence[int], played: int | None) -> str:
        legal = played is not None and pos.is_legal(played)
        return grid_svg(pos.board, pos.size, COLUMNS, _stone, "#e0b060", best, played, legal,
                        f"{pos.size}x{pos.size} board, {'black' if pos.token == 'x' else 'white'} to move")  # fmt: skip

    def transcript(self, moves: Sequence[int]) -> str:
        return "".join(self.square_name(m) for m in moves)

    def parse_transcript(self, text: str) -> list[int]:
        t = text.strip()
        points = _POINT.findall(t)
        if "".join(a + b for a, b in points) != t:
            raise BoardError(f"bad move sequence {text!r}: write points like C3D4E5")
        return [self.parse_point(a + b, self.size) for a, b in points]

    # --- exact answers ---------------------------------------------------------------------

    _solvers: ClassVar[dict[str, tuple[Callable[..., ExactSolver[Position]], Callable[[], str | None]]]] = {}
    SOLVER_MODULES: ClassVar[tuple[str, ...]] = ("grader.games.gomoku_native", "grader.games.gomoku_solver")
    _loading: ClassVar[threading.Lock] = threading.Lock()
    _loaded: ClassVar[bool] = False

    @classmethod
    def add_solver(
        cls, backend: str, make: Callable[..., ExactSolver[Position]], missing: Callable[[], str | None] = lambda: None
    ) -> None:
        """Give Gomoku, every variant of it, a solver backend: ``make(game, scoring,
        should_stop)``; ``missing()`` says how to get it when it is not built here (None: it
        is). The solver modules (``SOLVER_MODULES``: gomoku_solver.py, the C core in
        gomoku_native.py) add theirs when imported."""
        cls._solvers[backend] = (make, missing)

    @classmethod
    def _backends(cls) -> dict[str, tuple[Callable[..., ExactSolver[Position]], Callable[[], str | None]]]:
        """The solvers added, their modules imported by name the first time one is asked for (as
        plugins are: they import this module, and a grader that never solves Gomoku never loads them)."""
        if not Gomoku._loaded:
            with Gomoku._loading:  # every module imported before any thread is answered (one added is not all)
                if not Gomoku._loaded:
                    for module in cls.SOLVER_MODULES:
                        importlib.import_module(module)
                    Gomoku._loaded = True
        return cls._solvers

    def solver(
        self, scoring: str, should_stop: Callable[[], bool] | None = None, backend: str = "auto"
    ) -> ExactSolver[Position]:
        """The C core ('native', grader._gomoku_native) when built, else the Python solver."""
        return self._backends()[self.backend(backend)][0](self, self.scoring(scoring), should_stop)

    def backends(self) -> tuple[str, ...]:
        found = self._backends()
        return tuple(b for b in ("native", "python") if b in found and found[b][1]() is None)

    def backend_missing(self, name: str) -> str:
        found = self._backends()
        why = found[name][1]() if name in found else None
        if why is None:
            return super().backend_missing(name)
        return f"the {name} solver is not built on this machine: {why}, or use --backend python"

    def backend_note(self) -> str | None:
        found = self._backends()
        why = found["native"][1]() if "native" in found else None
        if why is None:
            return None
        return f"the native Gomoku solver is not built, so the Python one is used (far slower): {why}"

    def forfeit_score(self, scoring: str) -> int:
        return 1

    # --- plans -----------------------------------------------------------------------------

    def make_plan(self, name: str, seed: int) -> list[Position]:
        """'standard': 20 endgames on the default board, 5 each with 4, 6, 8 and 10 empty points."""
        if name != "standard":
            raise BoardError(f"gomoku has no plan {name!r}: use one of {', '.join(self.plans)}")
        return self.random_positions(seed, range(4, 11, 2), 5)

    def random_positions(self, seed: int, empties: range, count: int) -> list[Position]:
        """``count`` positions for each number of empties: random legal play on the default
        board (a game that ends before is played again), with a move to make."""
        return list(self.random_boards(seed, empties, count))

    def random_boards(self, seed: int, empties: range, count: int) -> Iterator[Position]:
        for e in empties:
            r = rng("grader", "gomoku", self.size, self.k, seed, e)
            found: set[Position] = set()
            for tries in itertools.count(1):
                if len(found) == count:
                    break
                if tries > RANDOM_TRIES * count:
                    raise BoardError(
                        f"random play on {self.size}x{self.size} ends before {e} empty points in almost every game "
                        f"({tries - 1} tried): ask for more empty points, or a smaller board"
                    )
                pos = self.start()
                while pos.empties > e and not pos.is_game_over():
                    pos = pos.play(r.choice(pos.moves()))
                if pos.empties == e and not pos.is_game_over() and pos not in found:
                    found.add(pos)
                    yield pos


RANDOM_TRIES = 200  # random games per position wanted before random_positions gives up


def variant_name(size: int, k: int, overline: bool) -> str:
    """'gomoku', or the spec of a variant: 'gomoku:size=9,overline=false' (k other than 5,
    a Python-only setting of the tests, shows as k=4)."""
    parts = [f"size={size}"] * (size != 7) + [f"k={k}"] * (k != 5) + ["overline=false"] * (not overline)
    return "gomoku" + (":" + ",".join(parts) if parts else "")


GOMOKU = Gomoku()
_SHARED: dict[tuple[int, int, bool], Gomoku] = {(7, 5, True): GOMOKU}  # variants, one object each
