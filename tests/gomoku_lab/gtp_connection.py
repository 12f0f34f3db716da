"""The Go Text Protocol for the Gomoku player: a command a line, '= answer' then a blank line."""

import re
import sys

import numpy as np
from board import BLACK, WHITE, opponent

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def colour_of(word):
    return {"b": BLACK, "w": WHITE}[word.lower()[0]]


def name_of(colour):
    return "b" if colour == BLACK else "w"


def point_name(point):
    return f"{COLUMNS[point[1] - 1]}{point[0]}"


def point_of(text, size):
    found = re.fullmatch(r"([a-hj-z])(\d+)", text.lower())
    if not found:
        raise ValueError(f"bad point {text}")
    col, row = COLUMNS.lower().index(found.group(1)) + 1, int(found.group(2))
    if not (1 <= col <= size and 1 <= row <= size):
        raise ValueError(f"point off the board {text}")
    return row, col


class GtpConnection:
    def __init__(self, engine, board):
        self.engine, self.board = engine, board
        self.timelimit = 1
        self.commands = {
            "protocol_version": lambda args: self.respond("2"),
            "name": lambda args: self.respond(self.engine.name),
            "version": lambda args: self.respond(str(self.engine.version)),
            "boardsize": self.boardsize_cmd,
            "clear_board": lambda args: self.reset(self.board.size),
            "play": self.play_cmd,
            "genmove": self.genmove_cmd,
            "solve": self.solve_cmd,
            "timelimit": self.timelimit_cmd,
            "list_commands": lambda args: self.respond(" ".join(self.commands)),
            "showboard": lambda args: self.respond("\n" + str(np.flipud(self.board.cells[1:-1, 1:-1]))),
            "quit": self.quit_cmd,
        }

    def start_connection(self):
        for line in sys.stdin:
            self.get_cmd(line)

    def get_cmd(self, line):
        line = line.strip()
        if not line or line.startswith("#"):
            return
        line = re.sub(r"^\d+", "", line).strip()
        name, *args = line.split()
        if name not in self.commands:
            self.error("unknown command")
            return
        try:
            self.commands[name](args)
        except (ValueError, IndexError, KeyError) as e:
            self.error(str(e))

    def respond(self, text=""):
        sys.stdout.write(f"= {text}\n\n")
        sys.stdout.flush()

    def error(self, text):
        sys.stdout.write(f"? {text}\n\n")
        sys.stdout.flush()

    def reset(self, size):
        self.board.reset(size)
        self.respond()

    def boardsize_cmd(self, args):
        self.reset(int(args[0]))

    def timelimit_cmd(self, args):
        self.timelimit = int(args[0])
        self.respond(f"max time has changed to {self.timelimit} s" if "--chatty" in self.engine.flags else "")

    def play_cmd(self, args):
        colour, point = colour_of(args[0]), point_of(args[1], self.board.size)
        if not self.board.play(point, colour):
            self.error("illegal move: occupied")
            return
        self.respond()

    def quit_cmd(self, args):
        self.respond()
        sys.exit(0)

    def solve_cmd(self, args):
        answer = self.solve()
        if "--toplay" in self.engine.flags:
            answer += "\n" + name_of(self.board.current_player)
        self.respond(answer)

    def solve(self):
        if self.board.winner is not None:
            return name_of(self.board.winner)
        if not self.board.empty_points():
            return "draw"
        found = self.engine.solver.solve(self.board, self.timelimit)
        if found is None:
            return "unknown"
        value, move = found
        me = self.board.current_player
        if value > 0:
            return f"{name_of(me)} {point_name(move)}"
        if value == 0:
            return f"draw {point_name(move)}"
        return name_of(opponent(me))

    def genmove_cmd(self, args):
        colour = colour_of(args[0])
        if self.board.winner is not None or not self.board.empty_points():
            self.respond("resign" if self.board.winner not in (None, colour) else "pass")
            return
        self.board.current_player = colour
        found = self.engine.solver.solve(self.board, self.timelimit)
        move = found[1] if found is not None else self.board.empty_points()[0]
        self.board.play(move, colour)
        self.respond(point_name(move))
