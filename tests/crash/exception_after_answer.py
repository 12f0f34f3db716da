"""Crashes: prints a perfect answer for the handout board, then raises an exception."""

print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", flush=True)
raise ValueError("something went wrong after the answer")
