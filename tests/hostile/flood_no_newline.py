"""Hostile: an endless flood of output with no newline at all."""

import sys

chunk = b"51 " * 100_000
while True:
    sys.stdout.buffer.write(chunk)
