"""The board: a numpy array of (size + 2) x (size + 2) points, a border around the playing area."""

import numpy as np

EMPTY, BLACK, WHITE, BORDER = 0, 1, 2, 3
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def opponent(colour):
    return WHITE + BLACK - colour


class GomokuBoard:
    def __init__(self, size):
        self.reset(size)

    def reset(self, size):
        self.size = size
        self.cells = np.full((size + 2, size + 2), BORDER, dtype=np.int8)
        self.cells[1:-1, 1:-1] = EMPTY
        self.current_player = BLACK
        self.winner = None

    def empty_points(self):
        rows, cols = np.nonzero(self.cells[1:-1, 1:-1] == EMPTY)
        return [(int(r) + 1, int(c) + 1) for r, c in zip(rows, cols)]

    def play(self, point, colour):
        r, c = point
        if self.cells[r, c] != EMPTY:
            return False
        self.cells[r, c] = colour
        self.current_player = opponent(colour)
        if self.winner is None and self.makes_five(point, colour):
            self.winner = colour
        return True

    def undo(self, point, winner_before):
        self.cells[point] = EMPTY
        self.current_player = opponent(self.current_player)
        self.winner = winner_before

    def makes_five(self, point, colour):
        r, c = point
        for dr, dc in DIRECTIONS:
            n = 1
            for sign in (1, -1):
                rr, cc = r + sign * dr, c + sign * dc
                while self.cells[rr, cc] == colour:
                    n, rr, cc = n + 1, rr + sign * dr, cc + sign * dc
            if n >= 5:
                return True
        return False

    def key(self):
        return self.cells.tobytes() + bytes([self.current_player])
