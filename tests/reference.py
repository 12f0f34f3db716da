"""A second route to the truth: naive Othello rules on a board string and exhaustive minimax.

Shares no code with the grader: it walks the 8 directions square by square.
"""

from __future__ import annotations

import random

START = "." * 27 + "ox" + "." * 6 + "xo" + "." * 27
DIRS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def other(tok: str) -> str:
    return "o" if tok == "x" else "x"


def flipped(board: str, tok: str, sq: int) -> list[int]:
    if board[sq] != ".":
        return []
    opp = other(tok)
    r0, c0 = divmod(sq, 8)
    out = []
    for dr, dc in DIRS:
        r, c, run = r0 + dr, c0 + dc, []
        while 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == opp:
            run.append(r * 8 + c)
            r, c = r + dr, c + dc
        if run and 0 <= r < 8 and 0 <= c < 8 and board[r * 8 + c] == tok:
            out += run
    return out


def moves(board: str, tok: str) -> list[int]:
    return [sq for sq in range(64) if flipped(board, tok, sq)]


def play(board: str, tok: str, sq: int) -> str:
    b = list(board)
    for s in flipped(board, tok, sq) + [sq]:
        b[s] = tok
    return "".join(b)


def score(board: str, tok: str, scoring: str) -> int:
    mine, theirs = board.count(tok), board.count(other(tok))
    diff = mine - theirs
    if scoring == "winner-takes-empties" and diff:
        e = board.count(".")
        return diff + e if diff > 0 else diff - e
    return diff


def move_values(board: str, tok: str, scoring: str) -> dict[int, int]:
    """Exact value of each legal move for ``tok`` by exhaustive minimax."""
    return {sq: -value(play(board, tok, sq), other(tok), scoring) for sq in moves(board, tok)}


def value(board: str, tok: str, scoring: str) -> int:
    ms = moves(board, tok)
    if ms:
        return max(-value(play(board, tok, sq), other(tok), scoring) for sq in ms)
    if moves(board, other(tok)):
        return -value(board, other(tok), scoring)
    return score(board, tok, scoring)


def random_endgame(rng: random.Random, empties: int) -> tuple[str, str] | None:
    """Play random legal moves from the start until ``empties`` squares are left (None if the game ended first)."""
    board, tok = START, "x"
    while board.count(".") > empties:
        ms = moves(board, tok)
        if not ms:
            if not moves(board, other(tok)):
                return None
            tok = other(tok)
            continue
        board = play(board, tok, rng.choice(ms))
        tok = other(tok)
    return board, tok


def optimal_line(board: str, tok: str, scoring: str = "plain", pick=min) -> list[int]:
    """One optimal line to the end (forward, -1 for passes), choosing with ``pick`` among optimal moves."""
    line = []
    while True:
        mv = move_values(board, tok, scoring)
        if not mv:
            if not moves(board, other(tok)):
                return line
            line.append(-1)
            tok = other(tok)
            continue
        best = max(mv.values())
        sq = pick(s for s, v in mv.items() if v == best)
        line.append(sq)
        board, tok = play(board, tok, sq), other(tok)


def teaching_board(seed: int = 3) -> tuple[str, str]:
    """A small endgame (5-6 empties) where the mover has a losing move and, after its best
    move, the opponent has a losing reply: every symbol can be reached on it."""
    rng = random.Random(seed)
    while True:
        found = random_endgame(rng, rng.choice([5, 6]))
        if found is None:
            continue
        board, tok = found
        mv = move_values(board, tok, "plain")
        if len(set(mv.values())) < 2:
            continue
        best = min(s for s, v in mv.items() if v == max(mv.values()))
        after = play(board, tok, best)
        replies = move_values(after, other(tok), "plain")
        if len(set(replies.values())) >= 2:
            return board, tok


def play_out(board: str, tok: str, choose) -> str:
    """The final board when each side plays ``choose(board, tok, legal_moves)`` (passes implied)."""
    while True:
        ms = moves(board, tok)
        if not ms:
            if not moves(board, other(tok)):
                return board
            tok = other(tok)
            continue
        board, tok = play(board, tok, choose(board, tok, ms)), other(tok)
