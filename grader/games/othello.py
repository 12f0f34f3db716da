"""Othello: positions as two bitboards, legal moves, flips, passes, game end, final score
under both scoring rules, random endgames, board files (BOARD TOKEN, FFO, Edax OBF), drawing.

Square 0 is a1 (top-left), 7 is h1, 63 is h8; bit ``1 << sq`` stands for square ``sq``. 'x'
is black and moves first from the start position.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Sequence

from ..errors import BoardError
from ..files import bundled, read_lines
from ..seeding import rng
from .base import PASS, BoardEntry, Game
from .drawing import grid_svg, grid_text
from .solving import ExactSolver

Square = int
Bitboard = int

FULL: Bitboard = (1 << 64) - 1
FILES = "abcdefgh"
START_BOARD = "." * 27 + "ox" + "." * 6 + "xo" + "." * 27
_INNER = 0x7E7E7E7E7E7E7E7E  # files b..g: no wrap-around for sideways steps
CORNERS: Bitboard = (1 << 0) | (1 << 7) | (1 << 56) | (1 << 63)

PLAIN = "plain"  # disc difference; empties count for no one (the lab's rule)
WINNER_TAKES_EMPTIES = "winner-takes-empties"  # tournament and FFO rule
SCORINGS = (PLAIN, WINNER_TAKES_EMPTIES)


def final_score(player: Bitboard, opponent: Bitboard, scoring: str) -> int:
    """Score of a finished game for ``player``."""
    mine = player.bit_count()
    theirs = opponent.bit_count()
    diff = mine - theirs
    if scoring == WINNER_TAKES_EMPTIES and diff:
        empties = 64 - mine - theirs
        return diff + empties if diff > 0 else diff - empties
    return diff


def square_name(sq: Square) -> str:
    """'a1' for 0, 'h8' for 63, 'pass' for a pass."""
    if sq < 0:
        return "pass"
    return f"{FILES[sq % 8]}{sq // 8 + 1}"


def parse_square(text: str) -> Square:
    """A square from its index ('0'..'63') or its name ('a1'..'h8', any case)."""
    t = text.strip().lower()
    if t.isascii() and t.isdigit() and int(t) < 64:
        return int(t)
    if len(t) == 2 and t[0] in FILES and t[1] in "12345678":
        return FILES.index(t[0]) + 8 * (int(t[1]) - 1)
    raise BoardError(f"bad square {text!r}: give an index 0-63 or a name a1-h8")


def squares(bb: Bitboard) -> list[Square]:
    """The squares of a bitboard in rising order."""
    out = []
    while bb:
        low = bb & -bb
        out.append(low.bit_length() - 1)
        bb ^= low
    return out


# --- move generation -------------------------------------------------------


def legal_moves(player: Bitboard, opponent: Bitboard) -> Bitboard:
    """Bitboard of the squares where ``player`` may move (each flips at least one disc)."""
    empty = ~(player | opponent) & FULL
    inner = opponent & _INNER
    moves = 0
    # Kogge-Stone style fill in each of the 8 directions: dir, mask for the run of opponent discs.
    for shift, mask in ((1, inner), (8, opponent), (7, inner), (9, inner)):
        # towards higher squares
        f = mask & (player << shift)
        f |= mask & (f << shift)
        pre = mask & (mask << shift)
        two = shift + shift
        f |= pre & (f << two)
        f |= pre & (f << two)
        moves |= f << shift
        # towards lower squares
        f = mask & (player >> shift)
        f |= mask & (f >> shift)
        pre = mask & (mask >> shift)
        f |= pre & (f >> two)
        f |= pre & (f >> two)
        moves |= f >> shift
    return moves & empty


def _rays() -> tuple[list[tuple[Bitboard, ...]], list[tuple[Bitboard, ...]]]:
    """For each square, the rays towards higher squares and towards lower squares."""
    up: list[tuple[Bitboard, ...]] = []
    down: list[tuple[Bitboard, ...]] = []
    for sq in range(64):
        r, c = divmod(sq, 8)
        ups: list[int] = []
        downs: list[int] = []
        for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1), (0, -1), (-1, 1), (-1, 0), (-1, -1)):
            ray = 0
            rr, cc = r + dr, c + dc
            while 0 <= rr < 8 and 0 <= cc < 8:
                ray |= 1 << (rr * 8 + cc)
                rr, cc = rr + dr, cc + dc
            if ray.bit_count() >= 2:  # a flip needs a disc to flip and one beyond it
                (ups if dr * 8 + dc > 0 else downs).append(ray)
        up.append(tuple(ups))
        down.append(tuple(downs))
    return up, down


_RAYS_UP, _RAYS_DOWN = _rays()
NEIGHBOURS: tuple[Bitboard, ...] = tuple(
    sum(
        1 << ((r + dr) * 8 + c + dc)
        for dr in (-1, 0, 1)
        for dc in (-1, 0, 1)
        if (dr or dc) and 0 <= r + dr < 8 and 0 <= c + dc < 8
    )
    for r, c in (divmod(sq, 8) for sq in range(64))
)


def flips(sq: Square, player: Bitboard, opponent: Bitboard) -> Bitboard:
    """Discs of ``opponent`` flipped by ``player`` moving to the empty square ``sq`` (0: illegal)."""
    f = 0
    not_opp = ~opponent
    for ray in _RAYS_UP[sq]:
        stop = ray & not_opp  # first square along the ray that is not the opponent's
        stop &= -stop
        if stop & player:
            f |= ray & (stop - 1)
    for ray in _RAYS_DOWN[sq]:
        stop = ray & not_opp
        if stop:
            stop = 1 << (stop.bit_length() - 1)
            if stop & player:
                f |= ray & ~((stop << 1) - 1)
    return f


# --- positions -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Position:
    """A position: the discs of the side to move, the opponent's, and the mover's token."""

    player: Bitboard
    opponent: Bitboard
    token: str = "x"

    @classmethod
    def from_string(cls, board: str, token: str) -> Position:
        """Parse a 64-character board ('.', 'x', 'o', any case) and the token to move."""
        if len(board) != 64:
            raise BoardError(f"board has {len(board)} characters, expected 64 ('.', 'x' or 'o' each)")
        tok = token.strip().lower()
        if tok not in ("x", "o"):
            raise BoardError(f"bad token {token!r}: the side to move must be 'x' or 'o'")
        x = o = 0
        for i, ch in enumerate(board.lower()):
            if ch == "x":
                x |= 1 << i
            elif ch == "o":
                o |= 1 << i
            elif ch != ".":
                raise BoardError(
                    f"bad character {board[i]!r} at position {i} ({square_name(i)}) of the board: use '.', 'x' or 'o'"
                )
        return cls(x, o, "x") if tok == "x" else cls(o, x, "o")

    @classmethod
    def start(cls) -> Position:
        """The standard opening position, x (black) to move."""
        return cls.from_string(START_BOARD, "x")

    @property
    def game(self) -> Othello:
        return OTHELLO

    @property
    def opponent_token(self) -> str:
        return "o" if self.token == "x" else "x"

    @property
    def x_discs(self) -> Bitboard:
        return self.player if self.token == "x" else self.opponent

    @property
    def o_discs(self) -> Bitboard:
        return self.opponent if self.token == "x" else self.player

    @property
    def empties(self) -> int:
        """Number of empty squares."""
        return 64 - (self.player | self.opponent).bit_count()

    def board_string(self) -> str:
        """The 64-character board, lower case."""
        x, o = self.x_discs, self.o_discs
        return "".join("x" if x >> i & 1 else "o" if o >> i & 1 else "." for i in range(64))

    def legal_moves(self) -> Bitboard:
        return legal_moves(self.player, self.opponent)

    def moves(self) -> list[Square]:
        """The mover's legal moves in rising order (empty: the mover must pass or the game is over)."""
        return squares(legal_moves(self.player, self.opponent))

    def is_legal(self, sq: Square) -> bool:
        return 0 <= sq < 64 and bool(legal_moves(self.player, self.opponent) >> sq & 1)

    def must_pass(self) -> bool:
        """True when the mover has no move but the opponent has one."""
        return not legal_moves(self.player, self.opponent) and bool(legal_moves(self.opponent, self.player))

    def is_game_over(self) -> bool:
        """True when neither side can move."""
        return not legal_moves(self.player, self.opponent) and not legal_moves(self.opponent, self.player)

    def play(self, sq: Square) -> Position:
        """The position after the mover plays ``sq`` (or passes, for ``PASS``)."""
        if sq == PASS:
            if legal_moves(self.player, self.opponent):
                raise BoardError(f"{self.token} cannot pass: it has a legal move")
            return Position(self.opponent, self.player, self.opponent_token)
        f = flips(sq, self.player, self.opponent) if 0 <= sq < 64 else 0
        if not f or (self.player | self.opponent) >> sq & 1:
            raise BoardError(f"{square_name(sq) if 0 <= sq < 64 else sq} is not a legal move for {self.token}")
        return Position(self.opponent ^ f, self.player | f | (1 << sq), self.opponent_token)

    def pass_turn(self) -> Position:
        return self.play(PASS)

    def score(self, scoring: str = PLAIN) -> int:
        """The final score for the mover, if the game ended now."""
        return final_score(self.player, self.opponent, scoring)

    def render(self, marks: Mapping[Square, str] | None = None) -> str:
        """An 8x8 text grid with file letters and rank numbers; ``marks`` overrides empty squares."""
        return grid_text(self.board_string(), 8, FILES, marks)


# --- the game ---------------------------------------------------------------


def random_position(rng: random.Random, empties: int) -> Position:
    """A position with ``empties`` empty squares reached by random legal play from the start,
    whose side to move has a legal move."""
    if not 1 <= empties <= 59:
        raise BoardError(f"cannot make a position with {empties} empties: use 1 to 59")
    while True:
        pos = Position.start()
        while pos.empties > empties:
            moves = pos.moves()
            if moves:
                pos = pos.play(rng.choice(moves))
            elif pos.is_game_over():
                break
            else:
                pos = pos.pass_turn()
        if pos.empties != empties:
            continue  # the game ended early: play another
        if pos.moves():
            return pos
        if pos.must_pass():
            return pos.pass_turn()


def _disc(ch: str, x: float, y: float) -> str:
    fill, stroke = ("#111", "none") if ch == "x" else ("#f5f5f5", "#333")
    return f'<circle cx="{x:g}" cy="{y:g}" r="11.2" fill="{fill}" stroke="{stroke}"/>'


class Othello(Game["Position"]):
    """The Othello endgame lab's game: 8x8, x (black) first, passes, two scoring rules."""

    name = "othello"
    title = "Othello"
    board_length = 64
    scorings = SCORINGS
    tournament_scoring = WINNER_TAKES_EMPTIES
    max_score = 64
    unit = "disc"
    examples = "submissions"
    protocols = ("nboard", "gtp")
    empties_allowed = range(1, 60)
    plans = ("standard", "speed")
    ladders = {"speed": (11, 16)}
    STANDARD_FIXED = "standard.txt"  # in fixtures/: the standard plan's ten fixed boards

    def parse(self, board: str, token: str) -> Position:
        return Position.from_string(board, token)

    def start(self) -> Position:
        return Position.start()

    def square_name(self, sq: int) -> str:
        return square_name(sq)

    def parse_square(self, text: str) -> int:
        return parse_square(text)

    def render(self, pos: Position, marks: Mapping[int, str] | None = None) -> str:
        return pos.render(marks)

    def svg(self, pos: Position, best: Sequence[int], played: int | None) -> str:
        legal = played is not None and pos.is_legal(played)
        return grid_svg(pos.board_string(), 8, FILES, _disc, "#2e7d32", best, played, legal,
                        f"board, {pos.token} to move")  # fmt: skip

    def __init__(self) -> None:
        self._solvers: dict[str, tuple[Callable[..., ExactSolver[Position]], Callable[[], str | None]]] = {}

    def add_solver(
        self, backend: str, make: Callable[..., ExactSolver[Position]], missing: Callable[[], str | None] = lambda: None
    ) -> None:
        """Give Othello a solver backend: ``make(scoring, should_stop=...)``; ``missing()``
        says how to get it when it is not built here (None: it is). The solver modules
        (othello_solver.py, the C search in othello_native.py) add theirs when the games package
        loads."""
        self._solvers[backend] = (make, missing)

    def solver(self, scoring: str, should_stop=None, backend: str = "auto") -> ExactSolver[Position]:
        """The C search ('native', grader._othello_native) when built, else the Python one."""
        scoring = self.scoring(scoring)
        return self._solvers[self.backend(backend)][0](scoring, should_stop=should_stop)

    def backends(self) -> tuple[str, ...]:
        return tuple(b for b in ("native", "python") if b in self._solvers and self._solvers[b][1]() is None)

    def backend_missing(self, name: str) -> str:
        why = self._solvers[name][1]() if name in self._solvers else None
        if why is None:
            return super().backend_missing(name)
        return f"the {name} solver is not built on this machine: {why}, or use --backend python"

    def backend_note(self) -> str | None:
        why = self._solvers["native"][1]() if "native" in self._solvers else None
        return (
            None
            if why is None
            else f"the native solver is not built, so the Python one is used (about 80 times slower): {why}"
        )

    def solve_nodes(self, empties: int, backend: str = "python") -> float:
        """About 30,000 nodes at 12 empties, 2.5 times more per further empty: the median of
        random positions reached by legal play; single positions range from a third of it to
        three times it. The native solver's ordering (an evaluation, a table filled before the
        exact pass) slows the growth beyond 18 empties to about 1.75 times per empty: FFO #40-49
        (20-26 empties) total about 3 times under this model, single ones 0.9 to 22 times under
        (random positions of 20-22 empties are harder, some far over it); in seconds the estimate
        is about twice the real total, since the speed measured at 14 empties is about 1.4 times
        the speed at 20-26."""
        if backend == "native" and empties > 18:
            return 3e4 * 2.5**6 * 1.75 ** (empties - 18)
        return max(100.0, 3e4 * 2.5 ** (empties - 12))

    def calibration(self, backend: str) -> list[Position]:
        return self.random_positions(1, range(14, 15) if backend == "native" else range(10, 11), 2)

    def make_plan(self, name: str, seed: int) -> list[Position]:
        """'standard': the lab's 100 tests, the 10 fixed boards of fixtures/standard.txt (test
        k has k empties), then 10 random boards each with 1..9 empties. 'speed' is a ladder of
        11..16 empties (the lab's speed phase): grading draws its boards (its speed plan)."""
        if name != "standard":
            raise BoardError(f"othello has no plan {name!r}: use one of {', '.join(self.plans)}")
        return self.published(name) + self.random_positions(seed, range(1, 10), 10)

    def published(self, name: str) -> list[Position]:
        """The standard plan's 10 fixed boards (fixtures/standard.txt, answers included)."""
        if name != "standard":
            return []
        lines = read_lines(bundled("fixtures", self.STANDARD_FIXED), "board file")
        entries = [
            self.parse_board_line(line.split("#", 1)[0].strip(), "") for line in lines if line.split("#", 1)[0].strip()
        ]
        return [e.position for e in entries if e is not None]

    def random_positions(self, seed: int, empties: range, count: int) -> list[Position]:
        """Each number of empties has its own generator seeded from (seed, empties), so the
        boards with 5 empties are the same whichever range they are asked in, on any machine."""
        return list(self.random_boards(seed, empties, count))

    def random_boards(self, seed: int, empties: range, count: int) -> Iterator[Position]:
        for e in empties:
            rand = rng("grader", seed, e)
            for _ in range(count):
                yield random_position(rand, e)

    def parse_board_line(self, text: str, label: str) -> BoardEntry[Position] | None:
        """``BOARD TOKEN``; the FFO suite's ``number|board|side|empties|best|score|source``;
        Edax OBF ``BOARD SIDE; ...`` with X/O/- (read as x/o/.), '%' starting a comment."""
        if "|" in text:
            return _parse_ffo(text, label)
        head = text.split("%", 1)[0].split(";", 1)[0].split()
        if not head:
            return None
        if len(head) != 2:
            raise BoardError(f"expected 'BOARD TOKEN' (64-character board, then x or o), got {len(head)} field(s)")
        return BoardEntry(Position.from_string(head[0].replace("-", "."), head[1]), label)

    def pieces(self, pos: Position) -> tuple[int, int]:
        return pos.x_discs.bit_count(), pos.o_discs.bit_count()


def _parse_ffo(text: str, label: str) -> BoardEntry[Position]:
    fields = [f.strip() for f in text.split("|")]
    if len(fields) < 3:
        raise BoardError("FFO line needs at least 'number|board|side'")
    number, board, side = fields[:3]
    pos = Position.from_string(board.replace("-", "."), side)
    best = tuple(parse_square(s) for s in fields[4].split(",")) if len(fields) > 4 and fields[4] else None
    score = None
    if len(fields) > 5 and fields[5]:
        if not re.fullmatch(r"[-+]?[0-9]{1,3}", fields[5]):
            raise BoardError(f"FFO score {fields[5]!r} is not a whole number of discs")
        score = int(fields[5])
    return BoardEntry(pos, f"FFO #{number}" if number else label, best, score, WINNER_TAKES_EMPTIES)


OTHELLO = Othello()
