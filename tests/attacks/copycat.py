"""Attacker: finds the grader through /proc, reads the run folder's records (and classmates'
scripts) and prints a classmate's recorded answer for its board. Run as: copycat.py BOARD TOKEN.

It only reaches what its test made: a grader process whose command line holds TARGET (the
test puts a fresh random token there and in its folders' names) and folders whose path holds
it. Left with the placeholder, it reads nothing.
"""

import glob
import json
import os
import sys

TARGET = "GRADER-TEST-TARGET"  # replaced by the test with a token only it knows

board, token = sys.argv[1], sys.argv[2]
folders = set()
for pid in filter(str.isdigit, os.listdir("/proc") if TARGET != "GRADER-TEST" + "-TARGET" else []):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().decode(errors="replace").split("\0")
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        continue
    if "grader" in " ".join(args) and TARGET in " ".join(args):
        for arg in args:
            folders.add(os.path.join(cwd, arg))
for folder in sorted(f for f in folders if TARGET in f):
    for name in glob.glob(os.path.join(folder, "**", "tests.jsonl"), recursive=True):
        try:
            lines = open(name).read().splitlines()
        except OSError:
            continue
        for line in lines:
            record = json.loads(line)
            if record["board"] == board and record["token"] == token and record["claimed_line"]:
                line = list(reversed(record["claimed_line"]))
                print(f"Min score: {record['claimed_score']}; move sequence: {line}")
                sys.exit(0)
    for script in glob.glob(os.path.join(folder, "**", "alice.py"), recursive=True):  # or run a classmate
        os.execv(sys.executable, [sys.executable, script, board, token])
print("nothing to copy")
