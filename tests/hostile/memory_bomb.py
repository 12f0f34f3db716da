"""Hostile: allocates memory without end."""

print("My move is 51", flush=True)
hoard = []
while True:
    hoard.append(bytearray(50 * 2**20))
