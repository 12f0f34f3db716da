"""Hostile: an NBoard engine that answers its first 'go' with one line just under 60 MB
(no line end until the very last byte), then with a legal move, so that a grader holding
a protocol line whole holds 60 MB per engine."""

import sys

LINE = 60 * 2**20
CHUNK = 2**20

for line in sys.stdin:
    command, _, rest = line.strip().partition(" ")
    if command == "ping":
        sys.stdout.write(f"pong {rest}\n")
    elif command == "go":
        sys.stdout.write("status ")
        for _ in range(LINE // CHUNK):
            sys.stdout.write("x" * CHUNK)
        sys.stdout.write("\n=== PA\n")
    sys.stdout.flush()
