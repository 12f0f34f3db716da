"""Broken on purpose (graded Q): the right line, but the score is the number of discs it
ends with, not the disc difference.

Usage: python wrong_score.py BOARD TOKEN
"""

import sys

from negamax import negamax, read_position

me, you = read_position(sys.argv[1], sys.argv[2])
score, line = negamax(me, you, -65, 65)
discs = (score + bin(me | you).count("1") + len([m for m in line if m >= 0])) // 2  # wrong on purpose
print("Min score:", discs, "; move sequence:", list(reversed(line)))
