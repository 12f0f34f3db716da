"""The other side of probe.py's temporary-directory attack: a test that keeps a secret (from
secret.txt beside it) in its own directory for a few seconds while the probe looks for it."""

import os
import time

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "secret.txt")) as f:
    secret = f.read()
with open(f"answers-{secret}.txt", "w") as f:  # the probe looks for this name only
    f.write(secret)
time.sleep(2)
