"""An NBoard engine around a move script: python engine.py SCRIPT.

SCRIPT is one of the bundled engines (negamax.py, greedy.py, random_mover.py): a file with a
``choose(board, token)`` function that returns a square (0-63) or None. This program speaks
the NBoard protocol (nboard, set depth, set game, move, ping, go, hint, learn, quit) on
stdin/stdout, keeps the game's position between moves, and answers ``go`` with
``=== MOVE/EVAL/TIME`` (the evaluation when the script's ``choose_scored`` gives one, as
negamax.py does for the endgames it solves; else empty). Standalone like a student's file: no imports from the grader.
"""

import importlib.util
import os
import random
import re
import sys
import time

FILES = "abcdefgh"
DIRECTIONS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def load(path):
    spec = importlib.util.spec_from_file_location("engine_" + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flips(board, sq, token):
    """Squares ``token`` flips by playing ``sq`` on ``board`` (a list of 64 '.', 'x', 'o')."""
    enemy = "o" if token == "x" else "x"
    r, c = divmod(sq, 8)
    out = []
    for dr, dc in DIRECTIONS:
        line, rr, cc = [], r + dr, c + dc
        while 0 <= rr < 8 and 0 <= cc < 8 and board[rr * 8 + cc] == enemy:
            line.append(rr * 8 + cc)
            rr, cc = rr + dr, cc + dc
        if line and 0 <= rr < 8 and 0 <= cc < 8 and board[rr * 8 + cc] == token:
            out += line
    return out


def square(text):
    text = text.strip().lower()
    if text == "pa":
        return None
    return FILES.index(text[0]) + 8 * (int(text[1]) - 1)


def name(sq):
    return "PA" if sq is None else FILES[sq % 8] + str(sq // 8 + 1)


class Game:
    def __init__(self):
        self.board = list("." * 27 + "ox" + "." * 6 + "xo" + "." * 27)
        self.token = "x"

    def play(self, sq):
        if sq is not None:
            for f in flips(self.board, sq, self.token):
                self.board[f] = self.token
            self.board[sq] = self.token
        self.token = "o" if self.token == "x" else "x"

    @classmethod
    def from_ggf(cls, text):
        game = cls()
        bo = re.search(r"BO\[([^\]]*)\]", text).group(1).split()
        cells = "".join(bo[1:9])
        game.board = ["x" if ch == "*" else "o" if ch == "O" else "." for ch in cells]
        game.token = "x" if bo[9] == "*" else "o"
        for colour, move in re.findall(r"\b([BW])\[([^\]/]*)", text[text.index("BO[") :]):
            game.play(square(move))
        return game


def main():
    engine = load(sys.argv[1])
    game = Game()
    say = lambda text: print(text, flush=True)  # noqa: E731
    for line in sys.stdin:
        command, _, rest = line.strip().partition(" ")
        if command == "ping":
            say("pong " + rest)
        elif command == "set" and rest.startswith("game "):
            game = Game.from_ggf(rest[5:])
        elif command == "set" and rest.startswith("depth "):
            say("set myname " + os.path.basename(sys.argv[1])[:-3])
        elif command == "move":
            game.play(square(rest.split("/")[0]))
        elif command == "go":
            position = ("".join(game.board), game.token)
            start = time.perf_counter()
            scored = getattr(engine, "choose_scored", None)  # the move and its value, if the engine knows it
            sq, value = scored(*position) if scored else (engine.choose(*position), None)
            evaluation = "" if value is None else "%.2f" % value
            say("=== %s/%s/%.3f" % (name(sq), evaluation, time.perf_counter() - start))
        elif command == "hint":
            say("status hints are not given by this engine")
        elif command == "quit":
            return
        elif command in ("nboard", "learn", ""):
            pass
        else:
            say("status unknown command " + command)


if __name__ == "__main__":
    random.seed()
    main()
