"""Example submission of the Gomoku lab: a GTP Gomoku player with a perfect endgame solver.

Usage: python solver.py   (then GTP commands on stdin, as GoGui or the grader sends them)

Free-style Gomoku (five or more in a row wins) on a 7x7 board by default. Commands:
protocol_version, name, version, known_command, list_commands, boardsize N, clear_board,
play COLOR POINT, genmove COLOR, legal_moves COLOR, gogui-rules_final_result,
timelimit SECONDS, time_left COLOR SECONDS STONES, solve, quit. ``solve`` answers 'b', 'w'
or 'draw' for perfect play from the position with the side to move first, followed by a
move that achieves it when the side to move wins or draws; 'unknown' when the time limit
runs out first. ``genmove`` plays the solved move when the solve finishes in time (and in an
eighth of the clock 'time_left' gave), else a random legal move.
Standalone, as a student's file is: no imports from the grader.
"""

import random
import sys
import time

COLUMNS = "ABCDEFGHJKLMNOPQRST"
STEPS = ((0, 1), (1, 0), (1, 1), (1, -1))


class OutOfTime(Exception):
    pass


class Board:
    def __init__(self, size=7):
        self.size = size
        self.cells = ["."] * (size * size)
        self.to_play = "x"

    def point(self, text):
        text = text.strip().upper()
        col, row = COLUMNS.index(text[0]), int(text[1:])
        if col >= self.size or not 1 <= row <= self.size:
            raise ValueError(text)
        return (row - 1) * self.size + col

    def name(self, sq):
        return COLUMNS[sq % self.size] + str(sq // self.size + 1)

    def line_through(self, sq, who):
        r0, c0 = divmod(sq, self.size)
        best = 0
        for dr, dc in STEPS:
            n = 1
            for sign in (1, -1):
                r, c = r0 + sign * dr, c0 + sign * dc
                while 0 <= r < self.size and 0 <= c < self.size and self.cells[r * self.size + c] == who:
                    n += 1
                    r, c = r + sign * dr, c + sign * dc
            best = max(best, n)
        return best

    def winner(self):
        for sq, who in enumerate(self.cells):
            if who != "." and self.line_through(sq, who) >= 5:
                return who
        return None

    def empty(self):
        return [i for i, ch in enumerate(self.cells) if ch == "."]


class Solver:
    """Negamax over outcomes (-1, 0, +1) with alpha-beta, a table and threat-first ordering."""

    def __init__(self, board, seconds):
        self.board, self.deadline, self.table = board, time.monotonic() + seconds, {}

    def solve(self):
        """(value for the side to move, a move achieving it or None)."""
        b, me = self.board, self.board.to_play
        you = "o" if me == "x" else "x"
        best, best_move = -2, None
        for m in self.ordered(me, you):
            b.cells[m] = me
            try:  # out of time or not, the board is left as it was
                v = 1 if b.line_through(m, me) >= 5 else -self.search(you, me, -1, -best if best > -2 else 1)
            finally:
                b.cells[m] = "."
            if v > best:
                best, best_move = v, m
                if best == 1:
                    break
        return best, best_move

    def search(self, me, you, alpha, beta):
        """The value for ``me`` to move, exact when it falls inside (alpha, beta)."""
        if time.monotonic() > self.deadline:
            raise OutOfTime()
        b = self.board
        key = ("".join(b.cells), me)
        if key in self.table:
            return self.table[key]
        empty = b.empty()
        if not empty:
            return 0
        threats = []
        for m in empty:
            for who, found in ((me, None), (you, threats)):
                b.cells[m] = who
                five = b.line_through(m, who) >= 5
                b.cells[m] = "."
                if five and found is None:
                    return 1  # a win at once
                if five:
                    found.append(m)
        if len(threats) >= 2:
            return -1  # two threats: one cannot block both
        best = -1
        for m in threats or self.ordered(me, you):
            b.cells[m] = me
            try:
                v = -self.search(you, me, -beta, -max(alpha, best))
            finally:
                b.cells[m] = "."
            best = max(best, v)
            if best >= beta:
                break
        if alpha < best < beta or best in (-1, 1):  # exact: not a bound from a cut-off
            self.table[key] = best
        return best

    def ordered(self, me, you):
        b = self.board

        def rank(m):
            b.cells[m] = me
            mine = b.line_through(m, me)
            b.cells[m] = you
            theirs = b.line_through(m, you)
            b.cells[m] = "."
            return (-mine, -theirs, m)

        return sorted(b.empty(), key=rank)


class Player:
    def __init__(self, solve_well=True):
        self.board, self.seconds, self.solve_well = Board(), 1, solve_well
        self.clock = None  # seconds left on the game's clock, when 'time_left' says

    def answer(self, line):
        words = line.split()
        if not words:
            return None
        number = words.pop(0) if words[0].isdigit() else ""
        command, args = words[0], words[1:]
        try:
            ok, text = True, self.run(command, args)
        except Exception as e:  # a bad command: '? message'
            ok, text = False, str(e) or type(e).__name__
        return ("=" if ok else "?") + number + (" " + text if text else "") + "\n\n"

    def run(self, command, args):
        b = self.board
        if command == "protocol_version":
            return "2"
        if command == "name":
            return "GomokuSolver"
        if command == "version":
            return "1.0"
        if command in ("known_command", "list_commands"):
            known = "protocol_version name version known_command list_commands boardsize clear_board play genmove legal_moves gogui-rules_final_result timelimit time_left solve quit"
            return (
                ("true" if args and args[0] in known.split() else "false")
                if command == "known_command"
                else known.replace(" ", "\n")
            )
        if command == "boardsize":
            self.board = Board(int(args[0]))
            return ""
        if command == "clear_board":
            self.board = Board(b.size)
            return ""
        if command == "timelimit":
            self.seconds = int(args[0])
            return ""
        if command == "time_left":  # time_left COLOR SECONDS STONES: this side's clock
            self.clock = int(args[1])
            return ""
        if command == "play":
            who = "x" if args[0].lower() in ("b", "black") else "o"
            sq = b.point(args[1])
            if b.cells[sq] != "." or b.winner():
                raise ValueError("illegal move: " + args[1])
            b.cells[sq] = who
            b.to_play = "o" if who == "x" else "x"
            return ""
        if command == "legal_moves":
            return "" if b.winner() else " ".join(sorted(b.name(m) for m in b.empty()))
        if command == "gogui-rules_final_result":
            won = b.winner()
            return {"x": "black", "o": "white"}.get(won, "draw" if not b.empty() else "unknown")
        if command == "genmove":
            b.to_play = "x" if args[0].lower() in ("b", "black") else "o"
            if b.winner() or not b.empty():
                return "resign" if b.winner() else "pass"
            value, move = self.solved()
            self.clock = None  # told before this move, for this move
            if move is None:
                move = random.choice(b.empty())
            b.cells[move] = b.to_play
            b.to_play = "o" if b.to_play == "x" else "x"
            return b.name(move)
        if command == "solve":
            won = b.winner()
            if won or not b.empty():  # the game is over: its result
                return {"x": "b", "o": "w"}.get(won, "draw")
            value, move = self.solved()
            if value is None:
                return "unknown"
            me = "b" if b.to_play == "x" else "w"
            winner = {1: me, 0: "draw", -1: "w" if me == "b" else "b"}[value]
            return winner if value < 0 else winner + " " + b.name(move)
        if command == "quit":
            sys.stdout.write("=\n\n")
            sys.stdout.flush()
            sys.exit(0)
        raise ValueError("unknown command")

    def solved(self):
        """(value, move) within the time limit (and an eighth of the clock, when told), or (None, None)."""
        b = self.board
        if b.winner() or not b.empty():
            return None, None
        try:
            return Solver(b, self.seconds if self.clock is None else min(self.seconds, self.clock / 8)).solve()
        except OutOfTime:
            return None, None


def main(player=None):
    player = player or Player()
    for line in sys.stdin:
        reply = player.answer(line.split("#", 1)[0])
        if reply:
            sys.stdout.write(reply)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
