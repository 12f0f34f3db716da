"""Hostile: an endless flood of lines, each with an integer."""

import sys

line = b"score 18 15 -1 7 -1 14 -1 51 and 7 more\n" * 1000
while True:
    sys.stdout.buffer.write(line)
