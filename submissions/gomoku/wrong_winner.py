"""A broken example for the Gomoku lab: solves, then names the wrong winner (a win is
reported as a loss and the reverse; a draw stays a draw). Usage: python wrong_winner.py"""

from solver import Player, main


class WrongWinner(Player):
    def solved(self):
        value, move = super().solved()
        return (None, None) if value is None else (-value, move)


if __name__ == "__main__":
    main(WrongWinner())
