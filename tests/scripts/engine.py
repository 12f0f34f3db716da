"""Test engine; its behaviour is chosen by its file name (copy it as first.py, illegal.py ...):

first: the lowest legal square   illegal: 99   crash: a legal move, then exit 1   silent: nothing
slow: a legal move, then sleep past any limit   late: like first for 3 moves of its own, then 99
"""

import os
import sys
import time

from grader.board import Position

kind = os.path.splitext(os.path.basename(__file__))[0].split("_")[0]
pos = Position.from_string(sys.argv[1], sys.argv[2])
moves = pos.moves()
if kind == "first":
    print(moves[0])
elif kind == "illegal":
    print(99)
elif kind == "crash":
    print(moves[0], flush=True)
    sys.exit("engine broke")
elif kind == "slow":
    print(moves[-1], flush=True)
    time.sleep(60)
elif kind == "late":
    print(moves[0] if (64 - pos.empties) < 4 + 2 * 3 else 99)
