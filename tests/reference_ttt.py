"""A second route for tic-tac-toe: plain minimax over board strings, sharing no code with the
grader (it scores from x's view and converts at the end)."""

from __future__ import annotations

WINS = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]]


def won(board: str, tok: str) -> bool:
    return any(all(board[i] == tok for i in w) for w in WINS)


def over(board: str) -> bool:
    return won(board, "x") or won(board, "o") or "." not in board


def final_for_x(board: str, fastest: bool) -> int:
    margin = 1 + board.count(".") if fastest else 1
    return margin if won(board, "x") else -margin if won(board, "o") else 0


def minimax_x(board: str, tok: str, fastest: bool, memo: dict) -> int:
    """The value for x, x maximising and o minimising."""
    key = (board, tok)
    if key not in memo:
        if over(board):
            memo[key] = final_for_x(board, fastest)
        else:
            children = [minimax_x(board[:i] + tok + board[i + 1 :], "o" if tok == "x" else "x", fastest, memo)
                        for i in range(9) if board[i] == "."]  # fmt: skip
            memo[key] = max(children) if tok == "x" else min(children)
    return memo[key]


def move_values(board: str, tok: str, fastest: bool, memo: dict) -> dict[int, int]:
    """Each legal move's value for the side to move."""
    sign = 1 if tok == "x" else -1
    other = "o" if tok == "x" else "x"
    return {
        i: sign * minimax_x(board[:i] + tok + board[i + 1 :], other, fastest, memo) for i in range(9) if board[i] == "."
    }


def all_open_positions() -> list[tuple[str, str]]:
    """Every position reachable from the empty board that is not over, by brute force."""
    seen, stack = set(), [("." * 9, "x")]
    while stack:
        board, tok = stack.pop()
        if (board, tok) in seen:
            continue
        seen.add((board, tok))
        if not over(board):
            stack += [
                (board[:i] + tok + board[i + 1 :], "o" if tok == "x" else "x") for i in range(9) if board[i] == "."
            ]
    return sorted(p for p in seen if not over(p[0]))
