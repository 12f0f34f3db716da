"""Example for the speed phase: negamax.py's search with no cut-off at 11 empties.

It prints its heuristic move first (graded if it runs out of time), then solves the position
exactly however many squares are empty, and prints the score line when the search ends.
`grader grade submissions/deep_negamax.py --plan speed` shows how deep it gets in time.
"""

import sys

from negamax import bits, heuristic_move, legal_moves, negamax, read_position


def main():
    board, token = sys.argv[1].lower(), sys.argv[2].lower()
    me, you = read_position(board, token)
    if not bits(legal_moves(me, you)):
        return
    print("My move is", heuristic_move(me, you), flush=True)
    score, line = negamax(me, you, -65, 65)
    print("Min score:", score, "; move sequence:", list(reversed(line)))


if __name__ == "__main__":
    main()
