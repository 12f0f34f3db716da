"""Test script: prints what canned.json (beside it) says for this board and token.

canned.json maps "BOARD TOKEN" (or "*") to {"out": text, "err": text, "sleep": s, "exit": n};
its "log" key, if any, names a file where each run appends its script name, board and token.
"""

import json
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "canned.json")) as f:
    spec = json.load(f)
entry = spec.get(f"{sys.argv[1]} {sys.argv[2]}", spec.get("*", {}))
if "log" in spec:
    with open(spec["log"], "a") as log:
        log.write(f"{os.path.basename(__file__)} {sys.argv[1]} {sys.argv[2]}\n")
sys.stdout.write(entry.get("out", ""))
sys.stdout.flush()
sys.stderr.write(entry.get("err", ""))
if entry.get("sleep"):
    time.sleep(entry["sleep"])
sys.exit(entry.get("exit", 0))
