"""Othello positions as two bitboards: legal moves, flips, passes, game end, final score.

Square 0 is a1 (top-left), 7 is h1, 63 is h8; bit ``1 << sq`` stands for square ``sq``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable, Mapping

from .errors import BoardError

Square = int
Bitboard = int

FULL: Bitboard = (1 << 64) - 1
PASS: Square = -1
FILES = "abcdefgh"
START_BOARD = "." * 27 + "ox" + "." * 6 + "xo" + "." * 27

_NOT_A = 0xFEFEFEFEFEFEFEFE  # every square but the a-file
_NOT_H = 0x7F7F7F7F7F7F7F7F  # every square but the h-file
_INNER = 0x7E7E7E7E7E7E7E7E  # files b..g: no wrap-around for sideways steps
CORNERS: Bitboard = (1 << 0) | (1 << 7) | (1 << 56) | (1 << 63)


class Scoring(str, enum.Enum):
    """How a finished game is scored, always from the view of one side."""

    PLAIN = "plain"  # disc difference; empties count for no one (the lab's rule)
    WINNER_TAKES_EMPTIES = "winner-takes-empties"  # tournament and FFO rule

    def __str__(self) -> str:
        return self.value


SCORING_NAMES = tuple(s.value for s in Scoring)


def final_score(player: Bitboard, opponent: Bitboard, scoring: Scoring) -> int:
    """Score of a finished game for ``player``."""
    mine = player.bit_count()
    theirs = opponent.bit_count()
    diff = mine - theirs
    if scoring is Scoring.WINNER_TAKES_EMPTIES and diff:
        empties = 64 - mine - theirs
        return diff + empties if diff > 0 else diff - empties
    return diff


# --- squares ---------------------------------------------------------------


def square_name(sq: Square) -> str:
    """'a1' for 0, 'h8' for 63, 'pass' for a pass."""
    if sq < 0:
        return "pass"
    return f"{FILES[sq % 8]}{sq // 8 + 1}"


def move_text(sq: int) -> str:
    """How every report writes a move: '51 (d7)', 'pass'; other numbers as printed."""
    if sq == PASS:
        return "pass"
    if 0 <= sq < 64:
        return f"{sq} ({square_name(sq)})"
    return "a number of more than 18 digits" if abs(sq) >= 10**18 else str(sq)


def moves_text(moves: Iterable[int], sep: str = ", ") -> str:
    """Several moves as ``move_text`` writes them; 'none' for none."""
    return sep.join(move_text(m) for m in moves) or "none"


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
        ups, downs = [], []
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
                    f"bad character {board[i]!r} at position {i} ({square_name(i)}) of the board: "
                    "use '.', 'x' or 'o'"
                )
        return cls(x, o, "x") if tok == "x" else cls(o, x, "o")

    @classmethod
    def start(cls) -> Position:
        """The standard opening position, x to move."""
        return cls.from_string(START_BOARD, "x")

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
        return not legal_moves(self.player, self.opponent) and bool(
            legal_moves(self.opponent, self.player)
        )

    def is_game_over(self) -> bool:
        """True when neither side can move."""
        return not legal_moves(self.player, self.opponent) and not legal_moves(
            self.opponent, self.player
        )

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

    def score(self, scoring: Scoring = Scoring.PLAIN) -> int:
        """The final score for the mover, if the game ended now."""
        return final_score(self.player, self.opponent, Scoring(scoring))

    def render(self, marks: Mapping[Square, str] | None = None) -> str:
        """An 8x8 text grid with file letters and rank numbers; ``marks`` overrides empty squares."""
        return render(self.board_string(), marks)


def render(board: str, marks: Mapping[Square, str] | None = None) -> str:
    """Draw a 64-character board as an 8x8 grid; ``marks`` maps empty squares to a character."""
    marks = marks or {}
    lines = ["  " + " ".join(FILES)]
    for r in range(8):
        row = []
        for c in range(8):
            sq = r * 8 + c
            ch = board[sq].lower()
            row.append(marks.get(sq, ch) if ch == "." else ch)
        lines.append(f"{r + 1} " + " ".join(row))
    return "\n".join(lines)
