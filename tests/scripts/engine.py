"""Test engine; its behaviour is chosen by its file name (copy it as first.py, illegal.py ...):

first: the lowest legal square   illegal: 99   crash: a legal move, then exit 1   silent: nothing
slow: a legal move, then sleep past any limit   late: like first for 3 moves of its own, then 99
hang: nothing, sleeping past any limit

Standalone (no import of the grader): it runs in a sandbox that sees only its own folder.
"""

import os
import sys
import time

DIRECTIONS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def legal_moves(board, me):
    you = "o" if me == "x" else "x"
    out = []
    for sq in range(64):
        if board[sq] != ".":
            continue
        for dr, dc in DIRECTIONS:
            r, c, seen = sq // 8 + dr, sq % 8 + dc, 0
            while 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == you:
                r, c, seen = r + dr, c + dc, seen + 1
            if seen and 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == me:
                out.append(sq)
                break
    return out


kind = os.path.splitext(os.path.basename(__file__))[0].split("_")[0]
board, token = sys.argv[1].lower(), sys.argv[2].lower()
moves = legal_moves(board, token)
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
elif kind == "hang":
    time.sleep(60)
elif kind == "late":
    print(moves[0] if (64 - board.count(".")) < 4 + 2 * 3 else 99)
