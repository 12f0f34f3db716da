"""Exact negamax with alpha-beta and a table; gives up (None) when its time is over."""

import time

from board import opponent


class OutOfTime(Exception):
    pass


class Solver:
    def __init__(self, loser=False):
        self.loser = loser

    def solve(self, board, seconds):
        """(value for the side to move: 1, 0, -1, and a move achieving it), or None: out of time."""
        self.deadline = time.monotonic() + seconds
        self.table = {}
        try:
            best, best_move = -2, None
            for move in self._moves(board):
                value = self._child(board, move, -1, 1)
                if value > best:
                    best, best_move = value, move
                if best == 1:
                    break
        except OutOfTime:
            return None
        if self.loser and best == 0:
            for move in board.empty_points():
                if self._child(board, move, -1, 1) < 0:
                    return best, move
        return best, best_move

    def _moves(self, board):
        """A winning move alone; else the opponent's winning points (to block); else every empty point."""
        empty = board.empty_points()
        me = board.current_player
        for colour in (me, opponent(me)):
            wins = [p for p in empty if board.makes_five(p, colour)]
            if wins:
                return wins[:1] if colour == me else wins
        return empty

    def _child(self, board, move, alpha, beta):
        winner = board.winner
        colour = board.current_player
        board.play(move, colour)
        try:
            if board.winner == colour:
                return 1
            return -self._value(board, -beta, -alpha)
        finally:
            board.undo(move, winner)

    def _value(self, board, alpha, beta):
        if time.monotonic() > self.deadline:
            raise OutOfTime()
        key = board.key()
        if key in self.table:
            return self.table[key]
        moves = self._moves(board)
        if not moves:
            return 0
        best = -1
        for move in moves:
            value = self._child(board, move, max(alpha, best), beta)
            if value > best:
                best = value
            if best >= beta:
                break
        if alpha < best < beta or best == 1 or best == -1:
            self.table[key] = best
        return best
