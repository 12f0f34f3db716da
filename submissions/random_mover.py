"""Example engine: plays a random legal move (the same one for the same position).

Usage: python random_mover.py BOARD TOKEN
"""

import random
import sys

from negamax import bits, legal_moves, read_position


def choose(board, token):
    """A random legal move, seeded by the position (None: no legal move)."""
    moves = bits(legal_moves(*read_position(board, token)))
    return random.Random(board.lower() + token.lower()).choice(moves) if moves else None


if __name__ == "__main__":
    move = choose(sys.argv[1], sys.argv[2])
    if move is not None:
        print(move)
