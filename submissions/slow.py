"""Broken on purpose (graded T): finds and prints its move, then never finishes its search,
so it is killed at the time limit before printing a score line.

Usage: python slow.py BOARD TOKEN
"""

import sys
import time

from negamax import negamax, read_position

me, you = read_position(sys.argv[1], sys.argv[2])
score, line = negamax(me, you, -65, 65)
print("My move is", line[0])
while True:  # "still searching"
    time.sleep(1)
