"""The exact solver against exhaustive minimax on a naive board (tests/reference.py)."""

import functools
import random

import pytest

from grader.games import PASS
from grader.games.othello import OTHELLO, PLAIN, SCORINGS, WINNER_TAKES_EMPTIES, Position, random_position
from grader.games.othello_solver import OthelloSolver as Solver

import reference as ref
from conftest import FFO20, FFO_FILE, HANDOUT_BOARD


def endgame_pool(seed: int, count: int, max_empties: int = 7) -> list[tuple[str, str]]:
    """Positions met in random games once at most ``max_empties`` squares are empty,
    including positions where the mover must pass."""
    rng = random.Random(seed)
    pool = []
    while len(pool) < count:
        board, tok = ref.random_endgame(rng, rng.randint(1, max_empties)) or (None, None)
        if board is None:
            continue
        # walk on a few random plies so that passes and early endings show up too
        for _ in range(rng.randint(0, 3)):
            ms = ref.moves(board, tok)
            if ms:
                board = ref.play(board, tok, rng.choice(ms))
            elif not ref.moves(board, ref.other(tok)):
                break
            tok = ref.other(tok)
        pool.append((board, tok))
    return pool


def early_endings(seed: int, count: int) -> list[tuple[str, str]]:
    """Positions a few plies before the end of random games that ended with empties left."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board, tok, history = ref.START, "x", []
        while True:
            ms = ref.moves(board, tok)
            if not ms and not ref.moves(board, ref.other(tok)):
                break
            history.append((board, tok))
            if ms:
                board = ref.play(board, tok, rng.choice(ms))
            tok = ref.other(tok)
        if 0 < board.count(".") <= 4:
            out.append(history[-rng.randint(1, 3)])
    return out


def final_of_line(pos: Position, line: list[int]) -> Position:
    for sq in line:
        pos = pos.play(sq)
    return pos


@functools.cache
def pool() -> list[tuple[str, str]]:
    """The random endgames the solver is checked on (made on first use, not at collection)."""
    return endgame_pool(seed=2026, count=150) + early_endings(seed=7, count=20)


@pytest.mark.parametrize("scoring", list(SCORINGS))
@pytest.mark.parametrize("table_entries", [1_000_000, 8])  # 8: the table is cleared again and again
def test_solver_matches_exhaustive_minimax(scoring, table_entries):
    solver = Solver(scoring, table_entries=table_entries)
    kinds = {"must pass": 0, "game over": 0, "ends with empties": 0, "several optimal": 0}
    for board, tok in pool():
        pos = Position.from_string(board, tok)
        expected = ref.move_values(board, tok, scoring)
        assert solver.value(pos) == ref.value(board, tok, scoring), (board, tok)
        assert solver.move_values(pos) == expected, (board, tok)
        best = max(expected.values(), default=None)
        assert solver.optimal_moves(pos) == sorted(sq for sq, v in expected.items() if v == best)
        line = solver.line(pos)
        end = final_of_line(pos, line)
        assert end.is_game_over()
        sign = 1 if end.token == tok else -1
        assert sign * end.score(scoring) == solver.value(pos)
        assert solver.verify_line(pos, line).ok
        kinds["must pass"] += pos.must_pass()
        kinds["game over"] += pos.is_game_over()
        kinds["ends with empties"] += end.empties > 0
        kinds["several optimal"] += len(solver.optimal_moves(pos)) > 1
    assert all(n >= 3 for n in kinds.values()), kinds


def test_must_pass_value_is_the_opponents_negated():
    board, tok = next((b, t) for b, t in pool() if Position.from_string(b, t).must_pass())
    pos = Position.from_string(board, tok)
    solver = Solver(PLAIN)
    assert solver.optimal_moves(pos) == []
    assert solver.value(pos) == -solver.value(pos.pass_turn())
    assert solver.line(pos)[0] == PASS


def test_handout_example():
    pos = Position.from_string(HANDOUT_BOARD, "x")
    solver = Solver(PLAIN)
    assert solver.move_values(pos) == {7: -1, 14: -1, 51: 18}
    assert solver.optimal_moves(pos) == [51]
    assert solver.value(pos) == 18
    # the handout's line, 'score 18 [15, -1, 7, -1, 14, -1, 51]', read in reverse
    assert solver.verify_line(pos, [51, -1, 14, -1, 7, -1, 15]).ok
    assert solver.verify_line(pos, [51, 14, 7, 15]).ok  # passes may be left out


def test_ffo_20():
    pos = Position.from_string(FFO20.replace("-", "."), "x")
    assert Solver(WINNER_TAKES_EMPTIES).value(pos) == 6
    assert Solver(WINNER_TAKES_EMPTIES).optimal_moves(pos) == [39]  # h5
    board = pos.board_string()
    assert Solver(PLAIN).value(pos) == ref.value(board, "x", "plain")


def test_ffo_20_from_the_suite_file():
    line = next(ln for ln in FFO_FILE.read_text().splitlines() if ln.startswith("20|"))
    entry = OTHELLO.parse_board_line(line, "")
    solver = Solver(WINNER_TAKES_EMPTIES)
    assert solver.value(entry.position) == entry.score
    assert solver.optimal_moves(entry.position) == sorted(entry.best_moves)


def transforms(board: str, sq: int | None = None):
    """The board (or square) under each of the 8 symmetries of the square."""
    maps = [
        lambda r, c: (r, c), lambda r, c: (r, 7 - c), lambda r, c: (7 - r, c), lambda r, c: (7 - r, 7 - c),
        lambda r, c: (c, r), lambda r, c: (c, 7 - r), lambda r, c: (7 - c, r), lambda r, c: (7 - c, 7 - r),
    ]  # fmt: skip
    for f in maps:
        out = ["."] * 64
        for i, ch in enumerate(board):
            r, c = f(*divmod(i, 8))
            out[r * 8 + c] = ch
        yield "".join(out), f


@pytest.mark.parametrize("empties", [8, 10, 12])
def test_value_unchanged_under_the_8_symmetries(empties):
    rng = random.Random(empties)
    for _ in range(3):
        pos = random_position(rng, empties)
        solver = Solver(PLAIN)
        value, best = solver.value(pos), solver.optimal_moves(pos)
        for board, f in transforms(pos.board_string()):
            other = Position.from_string(board, pos.token)
            fresh = Solver(PLAIN)
            assert fresh.value(other) == value
            assert fresh.optimal_moves(other) == sorted(r * 8 + c for r, c in (f(*divmod(s, 8)) for s in best))


def test_results_are_shared_across_calls():
    pos = Position.from_string("..oooo..x.oooo..xxxxooooxxoxoooxxooxxoooxoooxooo..xooo.o.oooooo.", "x")  # 11 empties
    solver = Solver(PLAIN)
    first = solver.analyze(pos, all_values=True)
    assert first.nodes > 100
    again = solver.analyze(pos, all_values=True)
    assert again.nodes < first.nodes / 10
    assert (again.value, again.optimal_moves, again.move_values) == (
        first.value,
        first.optimal_moves,
        first.move_values,
    )


# --- line verification -------------------------------------------------------


def test_verify_line_problems_on_the_handout_board():
    pos = Position.from_string(HANDOUT_BOARD, "x")
    solver = Solver(PLAIN)
    illegal = solver.verify_line(pos, [15])
    assert (illegal.problem, illegal.ply, illegal.move, illegal.best_moves, illegal.best_value) == (
        "illegal",
        1,
        15,
        [51],
        18,
    )
    bad = solver.verify_line(pos, [7, 51])
    assert (bad.problem, bad.ply, bad.mover, bad.move_value, bad.best_value) == ("suboptimal", 1, "x", -1, 18)
    assert bad.describe("x", OTHELLO) == "line goes wrong at ply 1: x plays 7 (h1) (-1) but 51 (d7) gets +18"
    short = solver.verify_line(pos, [51, 14])
    assert (short.problem, short.ply, short.played) == ("too-short", 5, [51, PASS, 14, PASS])
    assert short.best_moves == [7] and short.best_value == 18  # 15 gives only +12 (reference)
    long = solver.verify_line(pos, [51, 14, 7, 15, 3])
    assert (long.problem, long.ply, long.move) == ("too-long", 8, 3)
    assert solver.verify_line(pos, []).problem == "too-short"


def test_verify_line_blames_the_first_suboptimal_ply_of_either_side():
    """Random lines checked against the reference's move values, ply by ply."""
    rng = random.Random(5)
    solver = Solver(PLAIN)
    checked_opponent_errors = 0
    for board, tok in pool()[:80]:
        if not ref.moves(board, tok):
            continue
        # a random legal line to the end, recording the first ply where the mover errs
        b, t, line, first_bad, ply = board, tok, [], None, 0
        while True:
            ms = ref.moves(b, t)
            if not ms:
                if not ref.moves(b, ref.other(t)):
                    break
                t, ply = ref.other(t), ply + 1
                continue
            values = ref.move_values(b, t, "plain")
            sq = rng.choice(ms)
            ply += 1
            if first_bad is None and values[sq] < max(values.values()):
                first_bad = (ply, t, sq)
            line.append(sq)
            b, t = ref.play(b, t, sq), ref.other(t)
        check = solver.verify_line(Position.from_string(board, tok), line)
        if first_bad is None:
            assert check.ok
        else:
            assert (check.problem, check.ply, check.mover, check.move) == ("suboptimal", *first_bad)
            checked_opponent_errors += first_bad[1] != tok
    assert checked_opponent_errors >= 5
