"""A broken example for the Gomoku lab: the right winner, but with the first empty point as
its move, winning or not. Usage: python bad_move.py"""

from solver import Player, main


class BadMove(Player):
    def solved(self):
        value, move = super().solved()
        return (None, None) if value is None else (value, self.board.empty()[0])


if __name__ == "__main__":
    main(BadMove())
