"""A toy game from another package, found through the 'grader.games' entry point: it proves
that nothing above grader.games assumes Othello.

Strip: five squares in a row; x and o take turns placing a mark on an empty square; when
the strip is full, each side scores its pairs of neighbouring squares both its own, and the
value for a side is its pairs minus the other's.
"""

import random
from dataclasses import dataclass

from grader.errors import BoardError
from grader.games import Game
from grader.games.drawing import grid_svg, grid_text
from grader.games.solving import ExactSolver

FILES = "abcde"


def pairs(board: str, tok: str) -> int:
    return sum(board[i] == board[i + 1] == tok for i in range(4))


@dataclass(frozen=True)
class Position:
    board: str
    token: str

    @property
    def game(self):
        return STRIP

    @property
    def empties(self) -> int:
        return self.board.count(".")

    def board_string(self) -> str:
        return self.board

    def moves(self) -> list[int]:
        return [i for i, ch in enumerate(self.board) if ch == "."]

    def is_legal(self, move: int) -> bool:
        return 0 <= move < 5 and self.board[move] == "."

    def play(self, move: int) -> "Position":
        if not self.is_legal(move):
            raise BoardError(f"{move} is not a legal move")
        return Position(self.board[:move] + self.token + self.board[move + 1 :], "o" if self.token == "x" else "x")

    def pass_turn(self):
        raise BoardError("no passes in strip")

    def must_pass(self) -> bool:
        return False

    def is_game_over(self) -> bool:
        return "." not in self.board

    def score(self, scoring: str) -> int:
        other = "o" if self.token == "x" else "x"
        return pairs(self.board, self.token) - pairs(self.board, other)


class Strip(Game):
    name, title, board_length = "strip", "Strip", 5
    scorings, tournament_scoring, max_score = ("pairs",), "pairs", 4
    examples, empties_allowed = "submissions", range(1, 6)

    def parse(self, board, token):
        if len(board) != 5 or set(board) - set(".xo") or token not in ("x", "o"):
            raise BoardError("a strip board is 5 characters of '.', 'x', 'o', then x or o")
        if token != ("x" if board.count("x") == board.count("o") else "o"):
            raise BoardError("wrong token for this strip board")
        return Position(board, token)

    def start(self):
        return Position(".....", "x")

    def square_name(self, sq):
        return FILES[sq]

    def parse_square(self, text):
        t = text.strip().lower()
        if t in FILES and t:
            return FILES.index(t)
        if t.isdigit() and int(t) < 5:
            return int(t)
        raise BoardError(f"bad square {text!r}")

    def parse_transcript(self, text):
        return [self.parse_square(ch) for ch in text.strip()]

    def render(self, pos, marks=None):
        return grid_text(pos.board, 5, FILES, marks)

    def svg(self, pos, best, played):
        return grid_svg(pos.board, 5, FILES, lambda ch, x, y: f'<text x="{x}" y="{y}">{ch}</text>', "#eee", best,
                        played, played is not None and pos.is_legal(played), "strip")  # fmt: skip

    def solver(self, scoring, should_stop=None, backend="auto"):
        return ExactSolver(self, self.scoring(scoring), should_stop)

    def random_positions(self, seed, empties, count):
        out = []
        for e in empties:
            rng = random.Random(f"{seed}:{e}")
            for _ in range(count):
                pos = self.start()
                while pos.empties > e:
                    pos = pos.play(rng.choice(pos.moves()))
                out.append(pos)
        return out

    def make_plan(self, name, seed):
        return self.random_positions(seed, range(1, 6), 2)


STRIP = Strip()
