"""Broken on purpose (graded M): right score and move, but the line after the first move
just takes each side's lowest-numbered legal move instead of its best reply.

Usage: python wrong_line.py BOARD TOKEN
"""

import sys

from negamax import bits, flips, legal_moves, negamax, read_position

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
