"""Gomoku by brute force, for the tests: every line checked, every move tried, no pruning."""

import functools
from typing import Callable


def winner(board: str, size: int, k: int, overline: bool) -> str | None:
    """The side with k in a row (more counts only with ``overline``), by scanning every point."""
    for sq, who in enumerate(board):
        if who == ".":
            continue
        r, c = divmod(sq, size)
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            pr, pc = r - dr, c - dc
            if 0 <= pr < size and 0 <= pc < size and board[pr * size + pc] == who:
                continue  # not the start of this run
            n, rr, cc = 0, r, c
            while 0 <= rr < size and 0 <= cc < size and board[rr * size + cc] == who:
                n, rr, cc = n + 1, rr + dr, cc + dc
            if n == k or (n > k and overline):
                return who
    return None


def value(board: str, me: str, size: int, k: int, overline: bool) -> int:
    """+1, 0 or -1 for ``me`` to move on ``board``, by trying every move to the end."""

    @functools.lru_cache(maxsize=None)
    def v(b: str, me: str) -> int:
        if winner(b, size, k, overline):
            return -1  # the side that just moved made the line
        empty = [i for i, ch in enumerate(b) if ch == "."]
        if not empty:
            return 0
        you = "o" if me == "x" else "x"
        return max(-v(b[:m] + me + b[m + 1 :], you) for m in empty)

    return v(board, me)


def move_values(board: str, me: str, size: int, k: int, overline: bool) -> dict[int, int]:
    """Every legal move's value for ``me`` to move on ``board`` (a game not over), by trying
    every move to the end: each position searched once; a position's search stops at a move
    worth +1, which nothing beats. The lines are checked through the point played only, by
    counting the run each way."""
    cells, n = list(board), len(board)
    you = "o" if me == "x" else "x"
    memo: dict[int, int] = {}

    def makes_line(sq: int, who: str) -> bool:
        r0, c0 = divmod(sq, size)
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                r, c = r0 + sign * dr, c0 + sign * dc
                while 0 <= r < size and 0 <= c < size and cells[r * size + c] == who:
                    run, r, c = run + 1, r + sign * dr, c + sign * dc
            if run == k or (run > k and overline):
                return True
        return False

    def after(key: int, sq: int, who: str) -> int:  # black's stones in bits 0..n-1, white's above
        return key | 1 << (sq if who == "x" else sq + n)

    def v(key: int, me: str, you: str) -> int:
        if key not in memo:
            best = 0 if "." not in cells else -1
            for sq in (i for i in range(n) if cells[i] == "."):
                if makes_line(sq, me):
                    best = 1
                    break
                cells[sq] = me
                best = max(best, -v(after(key, sq, me), you, me))
                cells[sq] = "."
                if best == 1:
                    break
            memo[key] = best
        return memo[key]

    root = 0
    for i, ch in enumerate(board):
        root = after(root, i, ch) if ch != "." else root
    out = {}
    for sq in (i for i in range(n) if cells[i] == "."):
        if makes_line(sq, me):
            out[sq] = 1
            continue
        cells[sq] = me
        out[sq] = -v(after(root, sq, me), you, me)
        cells[sq] = "."
    return out


def check_proof(board: str, me: str, value: int, size: int, k: int, overline: bool,
                witness: Callable[[str, str], int], weights: bool = False) -> int:  # fmt: skip
    """Replay a proof that ``value`` is the value of ``board`` for ``me`` to move; the number of
    claims it holds (AssertionError where one fails). Each bound claimed of a position is
    checked: a lower bound by the move ``witness(board, side)`` names (its child must meet the
    opposite bound), an upper bound by every move. The leaves are finished games (a line, or a
    full board) and boards dead for the side whose win a bound refutes (every line holds a stone
    of the other side); with ``weights``, also a side whose open lines weigh under 1/2 with it
    to move, under 1 with the other side to move, each 2**-(its empty points) (Erdos-Selfridge:
    it cannot complete one). A false claim fails at some leaf, whatever the witnesses."""
    lines = []
    for sq in range(size * size):
        r, c = divmod(sq, size)
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            if 0 <= r + dr * (k - 1) < size and 0 <= c + dc * (k - 1) < size:
                lines.append([(r + dr * i) * size + c + dc * i for i in range(k)])
    seen: set[tuple[str, str, int]] = set()

    def other(side: str) -> str:
        return "o" if side == "x" else "x"

    def finished(b: str) -> int | None:  # the value for the side to move, when the game is over
        return -1 if winner(b, size, k, overline) else 0 if "." not in b else None

    def may_win(b: str, side: str, to_move: str) -> bool:
        open_lines = [line for line in lines if all(b[i] != other(side) for i in line)]
        if not weights:
            return bool(open_lines)
        weight = sum(2.0 ** -sum(b[i] == "." for i in line) for line in open_lines)
        return weight >= (0.5 if side == to_move else 1.0)

    def at_least(b: str, me: str, v: int) -> None:
        if v <= -1 or (b, me, v) in seen:
            return
        seen.add((b, me, v))
        final = finished(b)
        if final is not None:
            assert final >= v, f"{b} {me}: the game is over at {final}, not >= {v}"
            return
        if v == 0 and not may_win(b, other(me), me):
            return
        m = witness(b, me)
        assert b[m] == ".", f"{b} {me}: the witness {m} is not an empty point"
        at_most(b[:m] + me + b[m + 1 :], other(me), -v)

    def at_most(b: str, me: str, v: int) -> None:
        if v >= 1 or (b, me, v - 10) in seen:
            return
        seen.add((b, me, v - 10))  # upper bounds kept apart from lower ones
        final = finished(b)
        if final is not None:
            assert final <= v, f"{b} {me}: the game is over at {final}, not <= {v}"
            return
        if v == 0 and not may_win(b, me, me):
            return
        for m in (i for i, ch in enumerate(b) if ch == "."):
            at_least(b[:m] + me + b[m + 1 :], other(me), -v)

    at_least(board, me, value)
    at_most(board, me, value)
    return len(seen)
