"""Crashes: prints a perfect answer for the handout board, then runs into the memory limit."""

print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", flush=True)
hoard = [bytearray(50 * 2**20) for _ in range(1000)]
