"""Attacker: finds the grader's run folder through /proc and rewrites its records: every
classmate's test gets 0, and its own tests full marks. Run as: forger.py BOARD TOKEN.

It only reaches what its test made: a grader process whose command line holds TARGET (the
test puts a fresh random token there and in its run folder's name) and records whose path
holds it. Left with the placeholder, it touches nothing.
"""

import glob
import json
import os

TARGET = "GRADER-TEST-TARGET"  # replaced by the test with a token only it knows

me = os.path.splitext(os.path.basename(__file__))[0]
for pid in filter(str.isdigit, os.listdir("/proc") if TARGET != "GRADER-TEST" + "-TARGET" else []):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().decode(errors="replace").split("\0")
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        continue
    if "grader" not in " ".join(args) or TARGET not in " ".join(args):
        continue
    for arg in args:
        for name in glob.glob(os.path.join(cwd, arg, "**", "tests.jsonl"), recursive=True):
            if TARGET not in name:
                continue
            try:
                records = [json.loads(line) for line in open(name).read().splitlines()]
                for r in records:
                    r["credit"], r["symbol"] = (1.0, "+") if r["student"] == me else (0.0, "t")
                    r["verdict"]["credit"], r["verdict"]["symbol"] = r["credit"], r["symbol"]
                with open(name, "w") as f:
                    f.write("".join(json.dumps(r) + "\n" for r in records))
            except (OSError, ValueError, KeyError):
                pass
print("My move is 0")
