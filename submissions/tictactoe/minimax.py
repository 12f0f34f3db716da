"""Example tic-tac-toe lab submission: a perfect minimax player in the lab's format.

Usage: python minimax.py BOARD TOKEN   (BOARD: 9 characters, '.', 'x', 'o'; squares 0-8 row by row)
Prints 'score V' and the optimal line in reverse, so that the last integer is its move:
V is +1 (a forced win), 0 (a draw) or -1 (a forced loss) for the side to move.
Standalone, as a student's file is.
"""

import functools
import sys

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def winner(board):
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


@functools.lru_cache(maxsize=None)
def negamax(board, token):
    """(value for token, optimal line forward): the lowest optimal move at each ply."""
    other = "o" if token == "x" else "x"
    if winner(board) == other:
        return -1, []
    if "." not in board:
        return 0, []
    best, best_line = -2, []
    for sq in range(9):
        if board[sq] == ".":
            value, line = negamax(board[:sq] + token + board[sq + 1 :], other)
            if -value > best:
                best, best_line = -value, [sq] + line
    return best, best_line


board, token = sys.argv[1].lower(), sys.argv[2].lower()
value, line = negamax(board, token)
print("score", value, "line", " ".join(map(str, reversed(line))))
