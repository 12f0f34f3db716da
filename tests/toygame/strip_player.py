"""A perfect player of the toy game Strip, in the lab's format (usage: strip_player.py BOARD TOKEN)."""

import sys


def pairs(board, tok):
    return sum(board[i] == board[i + 1] == tok for i in range(4))


def negamax(board, tok):
    other = "o" if tok == "x" else "x"
    if "." not in board:
        return pairs(board, tok) - pairs(board, other), []
    best = None
    for i, ch in enumerate(board):
        if ch == ".":
            value, line = negamax(board[:i] + tok + board[i + 1 :], other)
            if best is None or -value > best[0]:
                best = (-value, [i] + line)
    return best


value, line = negamax(sys.argv[1], sys.argv[2])
print("score", value, *reversed(line))
