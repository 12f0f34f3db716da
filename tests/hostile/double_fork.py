"""Hostile: a double fork with setsid leaves the process group and keeps running."""

import os
import sys
import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(10**6)", "grader-hostile:double_fork"])
    os._exit(0)
print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]")
time.sleep(0.2)
