"""Hostile: starts 60 busy children, each in a session of its own (setsid: with the kernel's
session autogroups, each would get a scheduling group, and a share of the CPU, of its own),
then goes on as a normal program, so that the others slow down and lose on time. Each child
lowers its own priority (nice 19): against other programs that costs it nothing (an
autogroup's share ignores its tasks' nice), and the hog's own moves stay quick.

  python cpu_hog.py nboard     an NBoard engine: the children start with it and spin for good,
                               between its moves and its games too; it plays the legal move
                               with the lowest square, as tests/nboard/engine.py's 'good'
  python cpu_hog.py BOARD TOKEN  a lab script: the children spin through its test; it answers
                               nothing and waits to be stopped at the time limit
"""

import os
import sys
import time

CHILDREN = 60
FILES = "abcdefgh"
STEPS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def hog() -> None:
    for _ in range(CHILDREN):
        if os.fork() == 0:
            os.setsid()
            os.nice(19)
            while True:
                pass


def flips(board, sq, me):
    you = "o" if me == "x" else "x"
    r, c = divmod(sq, 8)
    out = []
    for dr, dc in STEPS:
        line, rr, cc = [], r + dr, c + dc
        while 0 <= rr < 8 and 0 <= cc < 8 and board[rr * 8 + cc] == you:
            line.append(rr * 8 + cc)
            rr, cc = rr + dr, cc + dc
        if line and 0 <= rr < 8 and 0 <= cc < 8 and board[rr * 8 + cc] == me:
            out += line
    return out


def play(state, text):
    board, me = state
    if text.lower() != "pa":
        sq = FILES.index(text[0].lower()) + 8 * (int(text[1]) - 1)
        for f in flips(board, sq, me):
            board[f] = me
        board[sq] = me
    state[1] = "o" if me == "x" else "x"


def new_game(ggf):
    bo = ggf.split("BO[", 1)[1].split("]", 1)[0].split()
    state = [["x" if ch == "*" else "o" if ch == "O" else "." for ch in "".join(bo[1:9])], "x" if bo[9] == "*" else "o"]
    for part in ggf.split("BO[", 1)[1].split("]", 1)[1].split("]"):
        if part[:2] in ("B[", "W["):
            play(state, part[2:].split("/")[0])
    return state


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def nboard() -> None:
    state = new_game("BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]")
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        if command == "ping":
            say("pong " + rest)
        elif command == "set" and rest.startswith("game "):
            state = new_game(rest[5:])
        elif command == "move":
            play(state, rest.split("/")[0])
        elif command == "go":
            board, me = state
            legal = [sq for sq in range(64) if board[sq] == "." and flips(board, sq, me)]
            say("=== " + (FILES[legal[0] % 8] + str(legal[0] // 8 + 1) if legal else "PA"))


if __name__ == "__main__":
    hog()
    if sys.argv[1:] == ["nboard"]:
        nboard()
    else:
        time.sleep(3600)
