"""Hostile: an infinite CPU loop, printing nothing."""

while True:
    pass
