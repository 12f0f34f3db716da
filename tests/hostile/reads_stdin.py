"""Hostile: waits for input (gets end-of-file at once and crashes)."""

print("My move is 51")
answer = input("Which move? ")
print("score", answer)
