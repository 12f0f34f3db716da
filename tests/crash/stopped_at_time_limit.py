"""Not a crash: prints a perfect answer, then sleeps until the grader stops it at the time limit."""

import time

print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", flush=True)
time.sleep(60)
