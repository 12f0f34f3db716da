"""Gomoku's exact solver in Python: a threat-space search, then negamax with alpha-beta.

The pure-Python route (``--backend python``), and the second way the C core's answers
(``gomoku_native``) are checked; the C core takes boards it does not handle (over 11x11) to it.
"""

from __future__ import annotations

from typing import Callable

from ..stop import Stopped
from .gomoku import Gomoku, Position
from .gomoku_threats import ThreatSearch, Windows
from .solving import ExactSolver

POLL_EVERY = 256  # nodes between two looks at should_stop: a node here costs up to a millisecond
PROOF_NODES = 5_000  # threat-search nodes a move's quick proof may take (the course's 7x7 wins: at most 3,800)


class GomokuSolver(ExactSolver[Position]):
    """Exact outcomes (-1, 0, +1): a threat-space search first, then negamax with alpha-beta.

    A position's value is first sought as a proof by threats (``gomoku_threats``): that the
    side to move wins, or that the other side wins whatever it is answered. Only where neither
    is found does the negamax search every move, pruned by what the rules force: a move that
    wins at once ends the search; an opponent's winning point must be blocked (two of them: the
    position is lost); a move making two winning points wins; against the opponent's such move,
    only the moves that break every one of them or make a winning point of one's own are
    tried. The rest are ordered by the longest line they make, then the longest they block,
    then how many stones they touch.
    """

    def __init__(self, game: Gomoku, scoring: str, should_stop: Callable[[], bool] | None = None):
        super().__init__(game, scoring, should_stop)
        self.rules = game
        self._bounds: dict[tuple[str, str], tuple[int, int]] = {}  # (board, token) -> (lower, upper)
        self._threats: dict[int, ThreatSearch] = {}  # board size -> its threat-space search

    def clear(self) -> None:
        super().clear()
        self._bounds.clear()
        for search in self._threats.values():
            search.clear()

    def threats(self, size: int) -> ThreatSearch:
        """The threat-space search on a ``size`` board, polling this solver's ``should_stop``."""
        if size not in self._threats:
            windows = Windows(size, self.rules.k, self.rules.overline)
            self._threats[size] = ThreatSearch(windows, lambda: self.should_stop is not None and self.should_stop())
        return self._threats[size]

    def value(self, pos: Position) -> int:
        if pos.is_game_over():
            return pos.score()
        found = self._table.get(pos)
        if found is None:
            found = self._table[pos] = self._solve(list(pos.board), pos.size, pos.token)
        return found

    def proven_move_value(self, pos: Position, move: int) -> int | None:
        """``move``'s value where a threat proof settles it, found within ``PROOF_NODES`` nodes in
        all: +1 when its side then wins by threats whatever the other side plays (sought first),
        -1 when the other side, to move, wins by threats (None: only the negamax can tell)."""
        after = pos.play(move)
        if after.is_game_over():
            return -self.value(after)
        found = self._table.get(after)
        if found is None:
            found = self._proven(list(after.board), after.size, after.token, PROOF_NODES, loss_first=True)
            if found is None:
                return None
            self._table[after] = found
        return -found

    def _proven(self, cells: list[str], size: int, me: str, max_nodes: int | None = None,
                loss_first: bool = False) -> int | None:  # fmt: skip
        """The value a threat proof gives ``me``, to move (None: none found, within ``max_nodes``
        nodes in all): its win sought first, or (``loss_first``) the other side's."""
        you = "o" if me == "x" else "x"
        search = self.threats(size)
        before = search.nodes
        try:
            for attacker in (you, me) if loss_first else (me, you):
                left = None if max_nodes is None else max(0, max_nodes - (search.nodes - before))
                if search.wins(cells, attacker, me, max_nodes=left):
                    return 1 if attacker == me else -1
        finally:
            self.nodes += search.nodes - before
        return None

    def _solve(self, cells: list[str], size: int, me: str) -> int:
        proven = self._proven(cells, size, me)
        return proven if proven is not None else self._search(cells, size, me, -1, 1)

    def _search(self, cells: list[str], size: int, me: str, alpha: int, beta: int) -> int:
        self.nodes += 1
        if self.should_stop is not None and self.nodes % POLL_EVERY == 0 and self.should_stop():
            raise Stopped("the solver was stopped")
        key = ("".join(cells), me)
        lower, upper = self._bounds.get(key, (-1, 1))
        if lower >= beta:
            return lower
        if upper <= alpha or lower == upper:
            return upper
        alpha, beta = max(alpha, lower), min(beta, upper)
        you = "o" if me == "x" else "x"
        w = self.threats(size).w
        mine = w.open(cells, me)
        if w.winning_points(mine):
            return 1
        empty = [i for i, ch in enumerate(cells) if ch == "."]
        if len(empty) == 1:
            return 0
        theirs = w.open(cells, you)
        blocks = w.winning_points(theirs)
        moves: list[int] | None = None
        if len(blocks) >= 2:
            moves = []
        elif blocks:
            moves = list(blocks)
        elif w.doubles(mine):
            return 1  # two winning points next move: one block cannot stop both
        else:
            doubles = w.doubles(theirs)
            if doubles:  # a stone outside one of them leaves it whole: the opponent plays it
                common = set(empty)
                for zone in doubles.values():
                    common &= zone
                moves = sorted(common | w.fours(mine))
        best, a = -1, alpha
        for m in moves if moves is not None else self._ordered(cells, size, empty, me, you):
            cells[m] = me
            try:
                v = -self._search(cells, size, you, -beta, -a)
            finally:
                cells[m] = "."
            if v > best:
                best = v
                a = max(a, v)
                if a >= beta:
                    break
        if best <= alpha:
            self._bounds[key] = (lower, best)
        elif best >= beta:
            self._bounds[key] = (best, upper)
        else:
            self._bounds[key] = (best, best)
        return best

    def _ordered(self, cells: list[str], size: int, empty: list[int], me: str, you: str) -> list[int]:
        run = self.rules.run_through

        def rank(m: int) -> tuple[int, int, int, int]:
            r, c = divmod(m, size)
            touching = sum(
                cells[rr * size + cc] != "."
                for rr in range(max(0, r - 1), min(size, r + 2))
                for cc in range(max(0, c - 1), min(size, c + 2))
            )
            return (-run(cells, size, m, me), -run(cells, size, m, you), -touching, m)

        return sorted(empty, key=rank)


Gomoku.add_solver("python", GomokuSolver)
