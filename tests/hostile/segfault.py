"""Hostile: prints a move, then dies of a segmentation fault."""

import ctypes

print("My move is 51", flush=True)
ctypes.string_at(0)
