"""Gomoku by brute force, for the tests: every line checked, every move tried, no pruning."""

import functools


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
