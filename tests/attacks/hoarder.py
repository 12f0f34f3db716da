"""Hostile: keeps every board it is given in a shared folder (/tmp/grader-hoard-TOKEN, made
world-writable: job slots run as different uids), and prints every board kept there by
earlier tests. Run on private tests before public ones, it would show private boards in a
public test's output. The test copying it puts a token only it knows in place of TOKEN."""

import os
import sys

board = sys.argv[1]
hoard = "/tmp/grader-hoard-TOKEN"
os.makedirs(hoard, exist_ok=True)
try:
    os.chmod(hoard, 0o1777)
except PermissionError:
    pass  # made by another slot's uid
for name in sorted(os.listdir(hoard)):
    print("seen", name)
with open(os.path.join(hoard, board), "w"):
    pass
print("nothing")
