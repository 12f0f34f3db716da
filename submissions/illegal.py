"""Broken on purpose: its last integer is an occupied square, never a legal move (the test fails).

Usage: python illegal.py BOARD TOKEN
"""

import sys

from negamax import bits, read_position

me, you = read_position(sys.argv[1], sys.argv[2])
print("score 0 my move:", bits(me)[0])  # mixes up its own disc with a move
