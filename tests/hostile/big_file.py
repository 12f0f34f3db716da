"""Hostile: tries to fill the disk with one file."""

print("My move is 51", flush=True)
with open("big.bin", "wb") as f:
    while True:
        f.write(b"\0" * 2**20)
