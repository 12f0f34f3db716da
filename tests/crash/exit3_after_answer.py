"""Crashes: prints a perfect answer for the handout board, then exits with code 3."""

import sys

print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", flush=True)
sys.exit(3)
