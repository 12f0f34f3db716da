"""Example lab submission: a correct endgame script in the lab's format.

Usage: python negamax.py BOARD TOKEN

Written the way a student's file is: standalone, no imports from the grader. With fewer than
11 empty squares it runs negamax with alpha-beta to the end of the game and prints
``score V`` followed by the optimal line in reverse (passes as -1), so the last integer is
its move. With more empties it plays a simple heuristic move (used in tournaments).
"""

import sys
import time

FULL = (1 << 64) - 1
INNER = 0x7E7E7E7E7E7E7E7E
CORNERS = {0, 7, 56, 63}
X_SQUARES = {9, 14, 49, 54}
DIRECTIONS = [(1, INNER), (8, FULL), (7, INNER), (9, INNER)]


def legal_moves(me, you):
    """Bitboard of my legal moves."""
    empty = ~(me | you) & FULL
    moves = 0
    for shift, mask in DIRECTIONS:
        run = you & mask
        f = run & (me << shift)
        for _ in range(5):
            f |= run & (f << shift)
        moves |= f << shift
        f = run & (me >> shift)
        for _ in range(5):
            f |= run & (f >> shift)
        moves |= f >> shift
    return moves & empty


def flips(sq, me, you):
    """Discs flipped by my move at sq."""
    out = 0
    row, col = divmod(sq, 8)
    for dr, dc in ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)):
        r, c, run = row + dr, col + dc, 0
        while 0 <= r < 8 and 0 <= c < 8 and you >> (r * 8 + c) & 1:
            run |= 1 << (r * 8 + c)
            r, c = r + dr, c + dc
        if run and 0 <= r < 8 and 0 <= c < 8 and me >> (r * 8 + c) & 1:
            out |= run
    return out


def bits(bb):
    out = []
    while bb:
        low = bb & -bb
        out.append(low.bit_length() - 1)
        bb ^= low
    return out


def negamax(me, you, alpha, beta):
    """(score for me, optimal line forward) with perfect play; passes are -1 in the line."""
    moves = legal_moves(me, you)
    if not moves:
        if not legal_moves(you, me):  # game over: plain disc difference
            return bin(me).count("1") - bin(you).count("1"), []
        score, line = negamax(you, me, -beta, -alpha)
        return -score, [-1] + line
    children = []
    for sq in bits(moves):
        f = flips(sq, me, you)
        child_me, child_you = you ^ f, me | f | (1 << sq)
        # fastest first: fewest replies for the opponent
        children.append((bin(legal_moves(child_me, child_you)).count("1"), sq, child_me, child_you))
    children.sort()
    best, best_line = -65, []
    for _, sq, child_me, child_you in children:
        score, line = negamax(child_me, child_you, -beta, -alpha)
        score = -score
        if score > best:
            best, best_line = score, [sq] + line
            alpha = max(alpha, score)
            if alpha >= beta:
                break
    return best, best_line


def heuristic_move(me, you):
    """Corners first, X-squares last, then fewest replies for the opponent."""

    def rank(sq):
        f = flips(sq, me, you)
        replies = bin(legal_moves(you ^ f, me | f | (1 << sq))).count("1")
        return (sq not in CORNERS, sq in X_SQUARES, replies, sq)

    return min(bits(legal_moves(me, you)), key=rank)


def read_position(board, token):
    """(my discs, opponent's discs) as bitboards."""
    board, token = board.lower(), token.lower()
    enemy = "o" if token == "x" else "x"
    me = sum(1 << i for i, ch in enumerate(board) if ch == token)
    you = sum(1 << i for i, ch in enumerate(board) if ch == enemy)
    return me, you


def choose(board, token):
    """The move main() prints last: exact below 11 empties, else the heuristic (None: no move)."""
    return choose_scored(board, token)[0]


def choose_scored(board, token):
    """choose()'s move and, when it was solved exactly, its value (the final disc difference)."""
    me, you = read_position(board, token)
    if not legal_moves(me, you):
        return None, None
    if board.count(".") < 11:
        score, line = negamax(me, you, -65, 65)
        return line[0], score
    return heuristic_move(me, you), None


def main():
    board, token = sys.argv[1].lower(), sys.argv[2].lower()
    me, you = read_position(board, token)
    start = time.time()
    moves = bits(legal_moves(me, you))
    print("Possible moves for", token + ":", ", ".join(map(str, moves)))
    if not moves:
        return
    print("My move is", heuristic_move(me, you))
    if board.count(".") < 11:
        score, line = negamax(me, you, -65, 65)
        print("Min score:", score, "; move sequence:", list(reversed(line)))
    print("Elapsed time: %.4f" % (time.time() - start))


if __name__ == "__main__":
    main()
