"""Hostile: a score line whose last integer has 100000 digits."""

print("score 18 " + "9" * 100_000)
