"""Hostile: does not even parse."""
print("My move is 51"
