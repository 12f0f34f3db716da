"""A broken example for the Gomoku lab: its 'solve' ignores 'timelimit' and searches on
(here: for ever), so the grader stops it at the time limit. Usage: python slow.py"""

from solver import Player, main


class Slow(Player):
    def solved(self):
        while True:
            pass


if __name__ == "__main__":
    main(Slow())
