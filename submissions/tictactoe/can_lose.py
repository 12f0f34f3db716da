"""Broken on purpose: rules of thumb instead of minimax. It wins when it can, blocks a line
when it must, else takes the centre, else the first empty square. A fork beats it.

Usage: python can_lose.py BOARD TOKEN
"""

import sys

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def completing(board, token):
    """A square that gives ``token`` three in a row, if one does."""
    for line in LINES:
        marks = [board[i] for i in line]
        if marks.count(token) == 2 and marks.count(".") == 1:
            return line[marks.index(".")]
    return None


board, token = sys.argv[1].lower(), sys.argv[2].lower()
other = "o" if token == "x" else "x"
for choice in (completing(board, token), completing(board, other), 4 if board[4] == "." else None, board.index(".")):
    if choice is not None:
        print("My move is", choice)
        break
