"""Crashes: prints a perfect answer for the handout board, then kills itself with SIGKILL."""

import os
import signal

print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
