"""Broken on purpose: prints a move, then crashes with an exception (graded on what it printed).

Usage: python crash.py BOARD TOKEN
"""

import sys

from negamax import heuristic_move, read_position

me, you = read_position(sys.argv[1], sys.argv[2])
print("My move is", heuristic_move(me, you))
empties = sys.argv[1].count(".")
print("Average per empty:", 60 / (empties - empties))  # ZeroDivisionError
