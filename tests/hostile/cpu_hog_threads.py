"""Hostile: burns CPU in several threads and processes' worth of time."""

import threading

print("My move is 51", flush=True)


def burn():
    while True:
        pass


for _ in range(3):
    threading.Thread(target=burn, daemon=True).start()
burn()
