"""Example submission without negamax: prints only a rule-of-thumb move (graded T or t).

Usage: python rule_of_thumb.py BOARD TOKEN
"""

import sys

from negamax import heuristic_move, legal_moves, read_position

me, you = read_position(sys.argv[1], sys.argv[2])
if legal_moves(me, you):
    print("My move is", heuristic_move(me, you))
