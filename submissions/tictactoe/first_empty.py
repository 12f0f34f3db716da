"""Example tic-tac-toe submission without minimax: plays the first empty square (it can lose).

Usage: python first_empty.py BOARD TOKEN
"""

import sys

board = sys.argv[1].lower()
print("My move is", board.index("."))
