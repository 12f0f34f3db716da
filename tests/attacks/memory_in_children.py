"""Hostile: four children each fill 150 MiB (under a per-process limit of 300 MiB, 600 MiB
together) and hold it 3 s, so that all four hold theirs at once, then exit; the parent
reports how they ended ("children: 0 0 -9 0": exit codes, -9 killed) and exits 1 if one was
killed."""

import os
import sys
import time

pids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        hoard = bytearray(150 * 2**20)
        for i in range(0, len(hoard), 4096):
            hoard[i] = 1  # resident, not just reserved
        time.sleep(3)  # all four hold theirs at once
        os._exit(0)
    pids.append(pid)
codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
print("children:", *codes)
print("Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]", flush=True)
sys.exit(1 if any(c < 0 for c in codes) else 0)
