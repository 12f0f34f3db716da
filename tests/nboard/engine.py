"""A tiny NBoard engine for the tests, misbehaving on purpose: python engine.py MODE.

MODE (the first word; this file's name is also in its processes' command lines, so a test
finds them by the name of its own copy):
  good      plays the legal move with the lowest square, answers '=== f5/EVAL/TIME' after a
            'status' line and a 'search' line; says 'status depth N' to 'set depth N'
  edax      as good, but answers as Edax writes it: '=== F5 1.00 0.0'
  nan       as good, but its evaluation is 'nan' and its time 'inf': '=== f5/nan/inf'
  early     answers '=== a1' (an illegal move) as soon as it reads 'ping', before its pong,
            then its real move after it: the early answer must not be trusted
  mute      reads its input and never prints anything (not even a pong)
  silent    answers pings, never a move
  illegal   answers a1, an occupied or illegal square
  garbage   answers '=== zz'
  crash     exits with code 3 at its first 'go'
  raise     raises an exception at its first 'go' (its traceback on stderr)
  bare      answers its move without the '=== ' ('f5')
  flood     prints status lines without end at its first 'go'
  linger    starts a child that sleeps for an hour (its command line names this file), then plays as good
  sleepy    as good, but sleeps 0.15 s before each answer (wall time, next to no CPU time)
  burner    as good, but before each answer a child of its burns 0.4 s of CPU time
  thinker   as good, but thinks (burns CPU) 0.05 s before each answer, as a real engine would
"""

import os
import subprocess
import sys
import time

MODE = sys.argv[1]
FILES = "abcdefgh"
STEPS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


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


def main():
    state = new_game("BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]")
    if MODE == "linger":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", os.path.abspath(__file__)])
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        if MODE == "mute":
            continue
        if command == "ping":
            if MODE == "early":
                say("=== a1")
            say("pong " + rest)
        elif command == "set" and rest.startswith("game "):
            state = new_game(rest[5:])
        elif command == "set" and rest.startswith("depth "):
            say("status depth " + rest[6:])
        elif command == "move":
            play(state, rest.split("/")[0])
        elif command == "go":
            if MODE == "crash":
                sys.exit(3)
            if MODE == "raise":
                raise RuntimeError("the opening book is missing")
            if MODE == "flood":
                while True:
                    say("status thinking very hard " * 20)
            if MODE == "silent":
                continue
            if MODE == "thinker":
                until = time.process_time() + 0.05
                while time.process_time() < until:
                    pass
            if MODE == "sleepy":
                time.sleep(0.15)
            if MODE == "burner":
                child = os.fork()
                if child == 0:
                    while time.process_time() < 0.4:
                        pass
                    os._exit(0)
                os.waitpid(child, 0)
            board, me = state
            legal = [sq for sq in range(64) if board[sq] == "." and flips(board, sq, me)]
            name = FILES[legal[0] % 8] + str(legal[0] // 8 + 1) if legal else "PA"
            if MODE == "illegal":
                name = "a1" if board[0] != "." or not legal or legal[0] != 0 else "h8"
            if MODE == "garbage":
                name = "zz"
            say("status thinking")
            say("search %s 1.50 0 2" % name)
            if MODE == "nan":
                say("=== %s/nan/inf" % name)
            elif MODE == "bare":
                say(name)
            else:
                say("=== %s 1.00 0.0" % name.upper() if MODE == "edax" else "=== %s/-2.50/0.01" % name)


if __name__ == "__main__":
    main()
