"""Crashes: prints a perfect answer for the handout board, then dies of a segmentation fault."""

import ctypes

print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", flush=True)
ctypes.string_at(0)
