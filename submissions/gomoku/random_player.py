"""Example of the Gomoku lab's starter behaviour: a GTP player that plays random legal moves
and cannot solve ('solve' answers 'unknown'). Usage: python random_player.py"""

import random

from solver import Player, main


class RandomPlayer(Player):
    def solved(self):
        return None, None


if __name__ == "__main__":
    random.seed()
    main(RandomPlayer())
