"""Hostile: prints a move and a full score line (handout board: all correct), then loops."""

print("My move is 51")
print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]")
while True:
    pass
