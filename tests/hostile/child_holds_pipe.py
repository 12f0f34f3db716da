"""Hostile: a background child keeps the output pipe open after the script exits."""

import subprocess
import sys

subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10**6)", "grader-hostile:child_holds_pipe"])
print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]")
