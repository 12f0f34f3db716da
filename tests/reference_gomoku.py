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
