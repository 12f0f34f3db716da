"""Hostile: writes files where it runs and looks for the grader's secrets."""

import json
import os

open("junk.txt", "w").write("x" * 1000)
found = {
    "cwd": os.getcwd(),
    "env": sorted(os.environ),
    "config_here": os.path.exists("config.yaml"),
    "fixtures_here": os.path.exists("fixtures"),
}
print(json.dumps(found))
print("My move is 51")
