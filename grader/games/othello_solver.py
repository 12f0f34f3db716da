"""Othello's exact endgame solver: the bitboard search behind ``Othello.solver()``.

Negamax alpha-beta with null-window (PVS) re-searches, a transposition table of bounds
shared across calls (one grading run asks about thousands of related positions), fastest-
first move ordering (fewest opponent replies, then corners and odd quadrants), and code for
the last five empties that walks a parity-ordered list of empty squares instead of
generating moves. Optimal moves are found with one exact search and a null-window test per
other move. Lines, line checks and analyses come from ``ExactSolver``.
"""

from __future__ import annotations

from typing import Callable

from ..stop import Stopped
from .othello import (
    CORNERS,
    FULL,
    NEIGHBOURS,
    OTHELLO,
    WINNER_TAKES_EMPTIES,
    Bitboard,
    Position,
    Square,
    final_score,
    flips,
    legal_moves,
    squares,
)
from .solving import ExactSolver

INF = 1000
SMALL = 5  # at or below this many empties, search the list of empties without move generation
TABLE_MIN = 7  # positions with fewer empties are cheap to redo and are not stored
DEFAULT_TABLE_ENTRIES = 1_000_000  # roughly 150 MB at most; the table is cleared when full
CHECK_EVERY = 20_000  # nodes between two looks at should_stop (a few tens of milliseconds)

_QUADRANT = tuple((sq // 32) * 2 + (sq % 8) // 4 for sq in range(64))
_QUADRANT_MASKS = tuple(sum(1 << sq for sq in range(64) if _QUADRANT[sq] == q) for q in range(4))
# Preference among small-endgame squares with equal parity: corners first, X-squares last.
_SQUARE_RANK = tuple(0 if (1 << sq) & CORNERS else 2 if sq in (9, 14, 49, 54) else 1 for sq in range(64))


class OthelloSolver(ExactSolver[Position]):
    """Exact solver for one scoring rule. Keep one instance to share its table across calls."""

    def __init__(self, scoring: str, table_entries: int = DEFAULT_TABLE_ENTRIES,
                 should_stop: Callable[[], bool] | None = None):  # fmt: skip
        super().__init__(OTHELLO, scoring, should_stop)
        self.table_entries = table_entries
        # key (player << 64 | opponent) -> (lower bound, upper bound, best move)
        self._table: dict[int, tuple[int, int, int]] = {}  # type: ignore[assignment]
        self._next_check = CHECK_EVERY
        self._wte = scoring == WINNER_TAKES_EMPTIES

    def value(self, pos: Position) -> int:
        """Exact value of perfect play for the side to move."""
        return self._exact(pos.player, pos.opponent)

    def optimal_moves(self, pos: Position) -> list[Square]:
        """Every legal move achieving the value, in rising order (empty if the mover must pass)."""
        p, o = pos.player, pos.opponent
        return self._optimal(p, o, self._exact(p, o))

    # --- internals -------------------------------------------------------------

    def _optimal(self, p: Bitboard, o: Bitboard, v: int) -> list[Square]:
        return [sq for sq in squares(legal_moves(p, o)) if self._is_optimal(p, o, sq, v)]

    def _is_optimal(self, p: Bitboard, o: Bitboard, sq: Square, v: int) -> bool:
        """Does ``sq`` reach the value ``v`` of (p, o)? A null-window test on the child."""
        f = flips(sq, p, o)
        np, no = o ^ f, p | f | (1 << sq)
        n = 64 - (np | no).bit_count()
        # The child's value is at least -v; the move is optimal when it is at most -v.
        return self._search(np, no, -v, -v + 1, n) <= -v

    def _exact(self, p: Bitboard, o: Bitboard) -> int:
        key = p << 64 | o
        entry = self._table.get(key)
        if entry is not None and entry[0] == entry[1]:
            return entry[0]
        n = 64 - (p | o).bit_count()
        v = self._search(p, o, -INF, INF, n)
        self._store(key, v, v, entry[2] if entry else -1)
        return v

    def _store(self, key: int, lower: int, upper: int, move: int) -> None:
        """Keep bounds for a position; a full table is emptied (its entries are cheap to redo)."""
        table = self._table
        if len(table) >= self.table_entries:
            table.clear()
        table[key] = (lower, upper, move)

    def _final(self, p: Bitboard, o: Bitboard) -> int:
        return final_score(p, o, self.scoring)

    def _search(self, p: Bitboard, o: Bitboard, alpha: int, beta: int, n: int) -> int:
        """Fail-soft negamax value of (p, o) with ``n`` empties, within (alpha, beta)."""
        if n <= SMALL:
            empties = ~(p | o) & FULL
            if n == 0:
                return self._final(p, o)
            return self._small(p, o, alpha, beta, _parity_order(empties), n)
        self.nodes += 1
        if self.nodes >= self._next_check:
            self._next_check = self.nodes + CHECK_EVERY
            if self.should_stop is not None and self.should_stop():
                raise Stopped("the solver was stopped")
        table = self._table
        key = p << 64 | o
        entry = table.get(key) if n >= TABLE_MIN else None
        hint = -1
        if entry is not None:
            lower, upper, hint = entry
            if lower >= beta:
                return lower
            if upper <= alpha:
                return upper
            if lower == upper:
                return lower
            if lower > alpha:
                alpha = lower
            if upper < beta:
                beta = upper
        moves = legal_moves(p, o)
        if not moves:
            if not legal_moves(o, p):
                return self._final(p, o)
            return -self._search(o, p, -beta, -alpha, n)

        # Fastest first: try the moves that leave the opponent the fewest replies.
        children = []
        m = moves
        odd = _odd_quadrants(~(p | o) & FULL)
        while m:
            b = m & -m
            m ^= b
            sq = b.bit_length() - 1
            f = flips(sq, p, o)
            np, no = o ^ f, p | f | b
            if sq == hint:
                key_ = -1000
            else:
                key_ = legal_moves(np, no).bit_count() * 8
                if b & CORNERS:
                    key_ -= 4
                if b & odd:
                    key_ -= 2
            children.append((key_, sq, np, no))
        children.sort()

        alpha0, best, best_move = alpha, -INF, -1
        first = True
        for _, sq, np, no in children:
            if first:
                v = -self._search(np, no, -beta, -alpha, n - 1)
                first = False
            else:
                v = -self._search(np, no, -alpha - 1, -alpha, n - 1)
                if alpha < v < beta:
                    v = -self._search(np, no, -beta, -v, n - 1)
            if v > best:
                best, best_move = v, sq
                if v > alpha:
                    alpha = v
                    if v >= beta:
                        break
        if n >= TABLE_MIN:
            lower, upper = (entry[0], entry[1]) if entry is not None else (-INF, INF)
            if best <= alpha0:
                upper = min(upper, best)
            elif best >= beta:
                lower = max(lower, best)
            else:
                lower = upper = best
            self._store(key, lower, upper, best_move)
        return best

    def _small(self, p: Bitboard, o: Bitboard, alpha: int, beta: int, empties: tuple[Square, ...], n: int) -> int:
        """Search with few empties over the list of empty squares (in parity order)."""
        self.nodes += 1
        if n == 1:
            return self._last(p, o, empties[0])
        best = -INF
        for i, sq in enumerate(empties):
            if not NEIGHBOURS[sq] & o:
                continue
            f = flips(sq, p, o)
            if not f:
                continue
            rest = empties[:i] + empties[i + 1 :]
            v = -self._small(o ^ f, p | f | (1 << sq), -beta, -alpha, rest, n - 1)
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if v >= beta:
                        return v
        if best == -INF:  # no move: pass, or the game is over
            for sq in empties:
                if NEIGHBOURS[sq] & p and flips(sq, o, p):
                    return -self._small(o, p, -beta, -alpha, empties, n)
            return self._final(p, o)
        return best

    def _last(self, p: Bitboard, o: Bitboard, sq: Square) -> int:
        """Exact value with one empty square: the mover plays it, or the opponent, or no one."""
        self.nodes += 1
        f = flips(sq, p, o)
        if f:
            return 2 * (p | f).bit_count() - 62  # full board: 64 discs, mover's = p + f + 1
        f = flips(sq, o, p)
        if f:
            return 62 - 2 * (o | f).bit_count()
        diff = p.bit_count() - o.bit_count()  # 63 discs: never a draw
        if self._wte:
            return diff + 1 if diff > 0 else diff - 1
        return diff


def _odd_quadrants(empties: Bitboard) -> Bitboard:
    """The empty squares lying in quadrants with an odd number of empties."""
    out = 0
    for mask in _QUADRANT_MASKS:
        e = empties & mask
        if e.bit_count() & 1:
            out |= e
    return out


def _parity_order(empties: Bitboard) -> tuple[Square, ...]:
    """Empty squares, those in odd quadrants first, corners before edges before X-squares."""
    odd = _odd_quadrants(empties)
    return tuple(sorted(squares(empties), key=lambda s: (not (odd >> s & 1), _SQUARE_RANK[s])))


OTHELLO.add_solver("python", OthelloSolver)
