#!/usr/bin/python3
# A Gomoku player in the layout of the course's Assignment 2 starter code (Gomoku.py,
# gtp_connection.py, board.py and a solver module, importing numpy), written for the tests.
# Run as 'python3 Gomoku.py [--toplay] [--chatty] [--loser]':
#   --toplay  prints the side to move on a second line after each solve answer
#   --chatty  answers 'timelimit N' with text ('max time has changed to N s'), as a real program does
#   --loser   names a losing move in a drawn position (a real bug the grader caught)

import sys

from board import GomokuBoard
from gtp_connection import GtpConnection
from solver import Solver


class Gomoku:
    def __init__(self, flags):
        self.name = "GomokuAssignment2"
        self.version = 1.0
        self.flags = flags
        self.solver = Solver(loser="--loser" in flags)


def run():
    engine = Gomoku(sys.argv[1:])
    GtpConnection(engine, GomokuBoard(7)).start_connection()


if __name__ == "__main__":
    run()
