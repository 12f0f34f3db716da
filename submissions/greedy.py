"""Example engine: plays the move that flips the most discs (the lowest square on ties).

Usage: python greedy.py BOARD TOKEN
"""

import sys

from negamax import bits, flips, legal_moves, read_position


def choose(board, token):
    """The legal move flipping the most discs (None: no legal move)."""
    me, you = read_position(board, token)
    moves = bits(legal_moves(me, you))
    return max(moves, key=lambda sq: (bin(flips(sq, me, you)).count("1"), -sq)) if moves else None


if __name__ == "__main__":
    move = choose(sys.argv[1], sys.argv[2])
    if move is not None:
        print(move)
