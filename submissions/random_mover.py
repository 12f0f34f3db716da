"""Example engine: plays a random legal move (the same one for the same position).

Usage: python random_mover.py BOARD TOKEN
Standalone, as a student's file is.
"""

import random
import sys

FULL = (1 << 64) - 1
INNER = 0x7E7E7E7E7E7E7E7E
DIRECTIONS = [(1, INNER), (8, FULL), (7, INNER), (9, INNER)]


def legal_moves(me, you):
    """Bitboard of my legal moves."""
    empty = ~(me | you) & FULL
    moves = 0
    for shift, mask in DIRECTIONS:
        run = you & mask
        f = run & (me << shift)
        for _ in range(5):
            f |= run & (f << shift)
        moves |= f << shift
        f = run & (me >> shift)
        for _ in range(5):
            f |= run & (f >> shift)
        moves |= f >> shift
    return moves & empty


def flips(sq, me, you):
    """Discs flipped by my move at sq."""
    out = 0
    row, col = divmod(sq, 8)
    for dr, dc in ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)):
        r, c, run = row + dr, col + dc, 0
        while 0 <= r < 8 and 0 <= c < 8 and you >> (r * 8 + c) & 1:
            run |= 1 << (r * 8 + c)
            r, c = r + dr, c + dc
        if run and 0 <= r < 8 and 0 <= c < 8 and me >> (r * 8 + c) & 1:
            out |= run
    return out


def bits(bb):
    out = []
    while bb:
        low = bb & -bb
        out.append(low.bit_length() - 1)
        bb ^= low
    return out


def read_position(board, token):
    """(my discs, opponent's discs) as bitboards."""
    board, token = board.lower(), token.lower()
    enemy = "o" if token == "x" else "x"
    me = sum(1 << i for i, ch in enumerate(board) if ch == token)
    you = sum(1 << i for i, ch in enumerate(board) if ch == enemy)
    return me, you


def choose(board, token):
    """A random legal move, seeded by the position (None: no legal move)."""
    moves = bits(legal_moves(*read_position(board, token)))
    return random.Random(board.lower() + token.lower()).choice(moves) if moves else None


if __name__ == "__main__":
    move = choose(sys.argv[1], sys.argv[2])
    if move is not None:
        print(move)
