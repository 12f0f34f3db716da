"""The exact endgame solver: values, optimal moves, optimal lines, and line verification.

Negamax alpha-beta with null-window (PVS) re-searches, a transposition table of bounds
shared across calls, fastest-first move ordering (fewest opponent replies) with quadrant
parity, and dedicated code for the last few empties that works on a list of empty squares
instead of generating moves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from .board import (
    CORNERS,
    FULL,
    NEIGHBOURS,
    PASS,
    Bitboard,
    Position,
    Scoring,
    Square,
    final_score,
    flips,
    legal_moves,
    move_text,
    moves_text,
    squares,
)
from .stop import Stopped

INF = 1000
SMALL = 5  # at or below this many empties, search the list of empties without move generation
TABLE_MIN = 7  # positions with fewer empties are cheap to redo and are not stored
DEFAULT_TABLE_ENTRIES = 1_000_000  # roughly 150 MB at most; the table is cleared when full
CHECK_EVERY = 20_000  # nodes between two looks at should_stop (a few tens of milliseconds)

_QUADRANT = tuple((sq // 32) * 2 + (sq % 8) // 4 for sq in range(64))
_QUADRANT_MASKS = tuple(sum(1 << sq for sq in range(64) if _QUADRANT[sq] == q) for q in range(4))
# Preference among small-endgame squares with equal parity: corners first, X-squares last.
_SQUARE_RANK = tuple(
    0 if (1 << sq) & CORNERS else 2 if sq in (9, 14, 49, 54) else 1 for sq in range(64)
)


@dataclass(frozen=True)
class Analysis:
    """Everything the solver says about one position. Values are for the side to move."""

    position: Position
    scoring: Scoring
    value: int
    optimal_moves: list[Square]
    line: list[Square]  # one optimal line to the end of the game, PASS (-1) for a pass
    move_values: dict[Square, int] | None = None  # every legal move's value, when asked for
    nodes: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict:
        """The JSON object of ``grader solve --json``."""
        out: dict = {
            "board": self.position.board_string(),
            "token": self.position.token,
            "scoring": self.scoring.value,
            "value": self.value,
            "optimal_moves": self.optimal_moves,
            "line": self.line,
        }
        if self.move_values is not None:
            out["move_values"] = {str(sq): v for sq, v in self.move_values.items()}
        out["nodes"] = self.nodes
        out["seconds"] = round(self.seconds, 6)
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
    played: list[Square] = field(default_factory=list)  # the replayed line before ``ply``, passes explicit
    mover: str | None = None  # token of the side to move at ``ply``
    move: Square | None = None  # the claimed move at ``ply``
    move_value: int | None = None  # value reached by the claimed move
    best_moves: list[Square] = field(default_factory=list)
    best_value: int | None = None  # value of perfect play from ``ply``

    @property
    def ok(self) -> bool:
        return self.problem is None

    def describe(self, root_token: str) -> str:
        """One sentence in plain words, with values from ``root_token``'s view."""
        if self.ok:
            return "line is optimal for both sides to the end of the game"
        before = ", ".join(_move(m) for m in self.played)
        after = f"after {before}, " if before else ""
        best = moves_text(self.best_moves, " or ")
        where = f"line goes wrong at ply {self.ply}: {after}"
        if self.problem == "too-long":
            return f"{where}the game is over but the line goes on with {_move(self.move)}"
        if self.problem == "too-short":
            return (
                f"{where}the line stops but the game is not over: {self.mover} plays {best} "
                f"({self.best_value:+d} for {root_token})"
            )
        if self.problem == "illegal":
            return f"{where}{self.mover} cannot play {_move(self.move)} (not a legal move)"
        played = f"{where}{self.mover} plays {_move(self.move)} ({self.move_value:+d})"
        if self.mover == root_token:
            return f"{played} but {best} gets {self.best_value:+d}"
        return f"{played} but {best} holds {root_token} to {self.best_value:+d}"


def _move(sq: Square | None) -> str:
    return "?" if sq is None else move_text(sq)


class Solver:
    """Exact solver for one scoring rule. Keep one instance to share its table across calls."""

    def __init__(
        self,
        scoring: Scoring | str = Scoring.PLAIN,
        table_entries: int = DEFAULT_TABLE_ENTRIES,
        should_stop: Callable[[], bool] | None = None,
    ):
        self.scoring = Scoring(scoring)
        self.table_entries = table_entries
        self.should_stop = should_stop  # polled every few thousand nodes: true -> raise Stopped
        self._next_check = CHECK_EVERY
        # key (player << 64 | opponent) -> (lower bound, upper bound, best move)
        self._table: dict[int, tuple[int, int, int]] = {}
        self.nodes = 0
        self._wte = self.scoring is Scoring.WINNER_TAKES_EMPTIES

    # --- public API ----------------------------------------------------------

    def value(self, pos: Position) -> int:
        """Exact value of perfect play for the side to move."""
        return self._exact(pos.player, pos.opponent)

    def move_value(self, pos: Position, sq: Square) -> int:
        """Exact value for the mover of playing ``sq`` (a legal move), then perfect play."""
        child = pos.play(sq)
        return -self._exact(child.player, child.opponent)

    def optimal_moves(self, pos: Position) -> list[Square]:
        """Every legal move achieving the value, in rising order (empty if the mover must pass)."""
        p, o = pos.player, pos.opponent
        v = self._exact(p, o)
        return [sq for sq in squares(legal_moves(p, o)) if self._is_optimal(p, o, sq, v)]

    def move_values(self, pos: Position) -> dict[Square, int]:
        """Exact value of every legal move."""
        return {sq: self.move_value(pos, sq) for sq in pos.moves()}

    def line(self, pos: Position) -> list[Square]:
        """One optimal line to the end of the game (the lowest optimal square at each ply)."""
        out: list[Square] = []
        p, o = pos.player, pos.opponent
        while True:
            moves = legal_moves(p, o)
            if not moves:
                if not legal_moves(o, p):
                    return out
                out.append(PASS)
                p, o = o, p
                continue
            v = self._exact(p, o)
            sq = next(s for s in squares(moves) if self._is_optimal(p, o, s, v))
            out.append(sq)
            f = flips(sq, p, o)
            p, o = o ^ f, p | f | (1 << sq)

    def analyze(self, pos: Position, all_values: bool = False) -> Analysis:
        """Value, optimal moves, one optimal line and (optionally) every move's value."""
        start_nodes, start = self.nodes, time.perf_counter()
        value = self.value(pos)
        optimal = self.optimal_moves(pos)
        values = self.move_values(pos) if all_values else None
        line = self.line(pos)
        return Analysis(
            position=pos,
            scoring=self.scoring,
            value=value,
            optimal_moves=optimal,
            line=line,
            move_values=values,
            nodes=self.nodes - start_nodes,
            seconds=time.perf_counter() - start,
        )

    def verify_line(self, pos: Position, claimed: Sequence[int]) -> LineCheck:
        """Check that ``claimed`` (forward order) is optimal for both sides to the end.

        Passes are implied: negative numbers in the claimed line are ignored.
        """
        sign = 1
        p, o, token = pos.player, pos.opponent, pos.token
        played: list[Square] = []

        def wrong(problem: str, move: Square | None, move_value: int | None, best: list[Square], best_value: int | None) -> LineCheck:
            return LineCheck(
                problem, len(played) + 1, played, token, move,
                None if move_value is None else sign * move_value,
                best, None if best_value is None else sign * best_value,
            )  # fmt: skip

        for sq in (m for m in claimed if m >= 0):
            while not legal_moves(p, o) and legal_moves(o, p):
                played.append(PASS)
                p, o, sign, token = o, p, -sign, _other(token)
            moves = legal_moves(p, o)
            if not moves:
                return wrong("too-long", sq, None, [], None)
            if sq > 63 or not moves >> sq & 1:
                v = self._exact(p, o)
                return wrong("illegal", sq, None, self._optimal(p, o, v), v)
            v = self._exact(p, o)
            f = flips(sq, p, o)
            np, no = o ^ f, p | f | (1 << sq)
            mv = -self._exact(np, no)
            if mv < v:
                return wrong("suboptimal", sq, mv, self._optimal(p, o, v), v)
            played.append(sq)
            p, o, sign, token = np, no, -sign, _other(token)
        while not legal_moves(p, o) and legal_moves(o, p):
            played.append(PASS)
            p, o, sign, token = o, p, -sign, _other(token)
        if legal_moves(p, o):
            v = self._exact(p, o)
            return wrong("too-short", None, None, self._optimal(p, o, v), v)
        return LineCheck(None, played=played)

    def clear(self) -> None:
        """Forget every stored result."""
        self._table.clear()

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
        return final_score(p, o, Scoring.WINNER_TAKES_EMPTIES if self._wte else Scoring.PLAIN)

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


def _other(token: str) -> str:
    return "o" if token == "x" else "x"


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


def solve(board: str | Position, token: str | None = None, scoring: Scoring | str = Scoring.PLAIN,
          all_values: bool = False) -> Analysis:  # fmt: skip
    """Solve one position exactly: ``solve(BOARD, 'x')`` or ``solve(position)``."""
    pos = board if isinstance(board, Position) else Position.from_string(board, token or "")
    return Solver(scoring).analyze(pos, all_values=all_values)
