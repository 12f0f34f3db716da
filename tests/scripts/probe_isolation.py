"""Test script: reports what it can see and reach, as JSON, then plays the handout's move.

Usage: probe_isolation.py BOARD TOKEN (reads the port to try from probe_port.txt beside it)
"""

import json
import os
import socket

here = os.path.dirname(os.path.abspath(__file__))
seen = {"pid": os.getpid(), "cwd": os.getcwd(), "own_folder": os.path.exists(os.path.join(here, "canned.py"))}
with open(os.path.join(here, "probe_port.txt")) as f:
    port, secret = f.read().split()
seen["secret_visible"] = os.path.exists(secret)
try:
    socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
    seen["network"] = "connected"
except OSError as e:
    seen["network"] = e.strerror or str(e)
with open("scratch.txt", "w") as f:
    seen["can_write_cwd"] = f.write("x") == 1
print(json.dumps(seen))
print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]")
