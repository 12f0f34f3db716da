"""Broken on purpose (graded M): right score and move, but the line after the first move
just takes each side's lowest-numbered legal move instead of its best reply.

Usage: python wrong_line.py BOARD TOKEN
Standalone, as a student's file is.
"""

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


def negamax(me, you, alpha, beta):
    """(score for me, optimal line forward) with perfect play; passes are -1 in the line."""
    moves = legal_moves(me, you)
    if not moves:
        if not legal_moves(you, me):
            return bin(me).count("1") - bin(you).count("1"), []
        score, line = negamax(you, me, -beta, -alpha)
        return -score, [-1] + line
    best, best_line = -65, []
    for sq in bits(moves):
        f = flips(sq, me, you)
        score, line = negamax(you ^ f, me | f | (1 << sq), -beta, -alpha)
        if -score > best:
            best, best_line = -score, [sq] + line
            alpha = max(alpha, best)
            if alpha >= beta:
                break
    return best, best_line


me, you = read_position(sys.argv[1], sys.argv[2])
score, best_line = negamax(me, you, -65, 65)
line = best_line[:1]
me, you = you ^ flips(line[0], me, you), me | flips(line[0], me, you) | (1 << line[0])
while legal_moves(me, you) or legal_moves(you, me):
    moves = bits(legal_moves(me, you))
    if moves:
        f = flips(moves[0], me, you)
        line.append(moves[0])
        me, you = you ^ f, me | f | (1 << moves[0])
    else:
        line.append(-1)
        me, you = you, me
print("Min score:", score, "; move sequence:", list(reversed(line)))
