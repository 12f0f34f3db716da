"""Threat-space search for Gomoku: proofs that one side wins by threats, as Allis (1994) searches.

A *window* is a run of ``k`` points in a line. For one side, a window with none of the other
side's stones (and, without overlines, none of its own just outside it) is *open*; an open
window with one empty point makes that point a *winning point*. A *four* is a move that makes
a winning point; a *double* is a move that makes two (the other side can block only one); a
*three* is a move after which its side has a double.

The search proves that the *attacker* wins: the attacker plays only fours and threes (its
moves are restricted, so a failure proves nothing); the defender tries every move that might
refute the threat, and only those. Which defences matter follows from the rules, never from
a guess: against a winning point, the block; against a three, the moves that make a winning
point of the defender's own (a counter-four), and the points common to every double the
attacker threatens (a stone elsewhere leaves some double whole: the attacker plays it, and
wins). Every win it reports is therefore a win.
"""

from __future__ import annotations

from typing import Callable

from ..stop import Stopped

POLL_EVERY = 512  # nodes between two looks at should_stop
FINAL = 1 << 30  # the depth of a failure no deeper search can turn into a proof


class Windows:
    """The windows of ``k`` points on a ``size`` board, and what they say of a position."""

    def __init__(self, size: int, k: int, overline: bool):
        self.size, self.k, self.overline = size, k, overline
        self.windows: list[tuple[int, ...]] = []
        self.flanks: list[tuple[int, ...]] = []  # the points just outside each window, on the board
        for r in range(size):
            for c in range(size):
                for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                    end_r, end_c = r + dr * (k - 1), c + dc * (k - 1)
                    if 0 <= end_r < size and 0 <= end_c < size:
                        self.windows.append(tuple((r + dr * i) * size + c + dc * i for i in range(k)))
                        outside = ((r - dr, c - dc), (end_r + dr, end_c + dc))
                        self.flanks.append(tuple(y * size + x for y, x in outside if 0 <= y < size and 0 <= x < size))

    def open(self, cells: list[str], who: str) -> list[tuple[int, list[int]]]:
        """``who``'s open windows with at most 3 empty points: (window, its empty points)."""
        out = []
        limit = 3
        for wi, squares in enumerate(self.windows):
            empty = []
            for i in squares:
                ch = cells[i]
                if ch == ".":
                    empty.append(i)
                    if len(empty) > limit:
                        break
                elif ch != who:
                    break
            else:
                if empty and (self.overline or all(cells[f] != who for f in self.flanks[wi])):
                    out.append((wi, empty))
        return out

    def winning_points(self, opened: list[tuple[int, list[int]]]) -> set[int]:
        """The points where their side wins at once."""
        return {e[0] for _, e in opened if len(e) == 1}

    def fours(self, opened: list[tuple[int, list[int]]]) -> set[int]:
        """The moves that make a winning point."""
        return {i for _, e in opened if len(e) == 2 for i in e}

    def doubles(self, opened: list[tuple[int, list[int]]]) -> dict[int, set[int]]:
        """The moves that make two winning points or more, each with the points a stone of the
        other side must take to break it (the move and its windows): a side without a winning
        point already."""
        pairs: dict[int, set[int]] = {}
        for _, e in opened:
            if len(e) == 2:
                x, y = e
                pairs.setdefault(x, set()).add(y)
                pairs.setdefault(y, set()).add(x)
        out = {}
        for move, others in pairs.items():
            if len(others) >= 2:
                zone = {move}
                for wi, e in opened:
                    if len(e) == 2 and move in e:
                        zone.update(self.windows[wi])
                out[move] = zone
        return out

    def threes(self, cells: list[str], who: str, opened: list[tuple[int, list[int]]]) -> set[int]:
        """The moves after which ``who`` has a double (``opened``: its open windows now)."""
        candidates = {i for _, e in opened if len(e) in (2, 3) for i in e}
        out = set()
        for move in candidates:
            pairs: dict[int, set[int]] = {}
            for wi, e in opened:
                if move in e:
                    e = [i for i in e if i != move]
                elif not self.overline and move in self.flanks[wi]:
                    continue  # the move makes this window's line too long
                if len(e) == 2:
                    x, y = e
                    pairs.setdefault(x, set()).add(y)
                    pairs.setdefault(y, set()).add(x)
            if any(len(others) >= 2 for others in pairs.values()):
                out.add(move)
        return out


class _Exhausted(Exception):
    """The node limit of one ``wins`` call was reached."""


class ThreatSearch:
    """Proofs that the attacker wins by threats, remembered across calls (one object for one
    board size and rule set). ``should_stop`` is polled; Stopped is raised when it says so."""

    def __init__(self, windows: Windows, should_stop: Callable[[], bool] | None = None):
        self.w = windows
        self.should_stop = should_stop
        self.nodes = 0
        self._won: set[str] = set()  # boards (the attacker's side follows from them) proven won
        self._failed: dict[str, int] = {}  # board -> the deepest search that found no proof
        self._cut = False
        self._limit: int | None = None  # the node count at which the current call gives up

    def clear(self) -> None:
        self._won.clear()
        self._failed.clear()

    def wins(self, cells: list[str], attacker: str, to_move: str, max_depth: int = 99,
             max_nodes: int | None = None) -> bool:  # fmt: skip
        """Whether a threat sequence proves that ``attacker`` wins, ``to_move`` to move (deepened
        one attacking move at a time, up to ``max_depth`` of them; False, no proof, after
        ``max_nodes`` nodes). With the defender to move and no threat on the board, every
        defence is tried."""
        self.cells, self.a = cells, attacker
        self.d = "o" if attacker == "x" else "x"
        root = "".join(cells) + attacker
        if root + to_move in self._won:
            return True
        self._limit = self.nodes + max_nodes if max_nodes is not None else None
        try:
            for depth in range(1, max_depth + 1):
                self._cut = False
                if self._or(depth) if to_move == attacker else self._and(depth, root=True):
                    self._won.add(root + to_move)
                    return True
                if not self._cut:
                    return False
        except _Exhausted:  # what was settled below stays remembered; the unfinished nodes were not
            return False
        finally:
            self._limit = None
        return False

    def _tick(self) -> None:
        self.nodes += 1
        if self._limit is not None and self.nodes > self._limit:
            raise _Exhausted
        if self.should_stop is not None and self.nodes % POLL_EVERY == 0 and self.should_stop():
            raise Stopped("the solver was stopped")

    def _or(self, depth: int) -> bool:
        """The attacker to move."""
        self._tick()
        cells, a, d, w = self.cells, self.a, self.d, self.w
        mine = w.open(cells, a)
        if w.winning_points(mine):
            return True
        theirs = w.open(cells, d)
        blocks = w.winning_points(theirs)
        if len(blocks) >= 2 or "." not in cells:
            return False
        key = "".join(cells) + a
        if key in self._won:
            return True
        failed = self._failed.get(key, 0)
        if failed >= depth:
            self._cut = self._cut or failed < FINAL
            return False
        if blocks:
            moves = list(blocks)
        elif w.doubles(mine):
            self._won.add(key)
            return True
        elif depth <= 1:
            self._cut = True
            return False
        else:
            fours = w.fours(mine)
            moves = sorted(fours) + sorted(w.threes(cells, a, mine) - fours)
        won, cut_before, self._cut = False, self._cut, False
        for m in moves:
            cells[m] = a
            try:
                won = self._and(depth if blocks else depth - 1)
            finally:
                cells[m] = "."
            if won:
                break
        if won:
            self._won.add(key)
        else:
            self._failed[key] = depth if self._cut else FINAL  # no depth limit met below: no deeper search helps
        self._cut = self._cut or cut_before
        return won

    def _and(self, depth: int, root: bool = False) -> bool:
        """The defender to move (after the attacker's threat, or at the root)."""
        self._tick()
        cells, a, d, w = self.cells, self.a, self.d, self.w
        theirs = w.open(cells, d)
        if w.winning_points(theirs):
            return False
        mine = w.open(cells, a)
        threats = w.winning_points(mine)
        if len(threats) >= 2:
            return True
        if "." not in cells:
            return False
        if threats:
            moves = threats
        else:
            doubles = w.doubles(mine)
            if not doubles and not root:
                return False  # no threat: the defender plays as it likes
            if doubles:
                zones = iter(doubles.values())
                common = set(next(zones))
                for zone in zones:
                    common &= zone
                moves = (common | w.fours(theirs)) & {i for i, ch in enumerate(cells) if ch == "."}
            else:
                moves = {i for i, ch in enumerate(cells) if ch == "."}
        for m in sorted(moves):
            cells[m] = d
            try:
                held = not self._or(depth)
            finally:
                cells[m] = "."
            if held:
                return False
        return True
