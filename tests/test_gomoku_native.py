"""Gomoku's C solver (grader._gomoku_native) against brute force (reference_gomoku), the
Python solver, and its own contract: every move's value, symmetries, stops and bad input."""

import os
import random
import signal
import threading
import time

import pytest

from grader.errors import GraderError
from grader.games import gomoku_native
from grader.games.gomoku import GOMOKU, Gomoku
from grader.games.gomoku_native import bitboards
from grader.stop import Stopped

from reference_gomoku import move_values as brute_move_values

if not gomoku_native.available():
    pytest.skip(f"C solver not built: {gomoku_native.unavailable_reason()}", allow_module_level=True)

from grader import _gomoku_native as N  # noqa: E402
from grader.games.gomoku_native import NativeGomokuSolver  # noqa: E402

# The core's two searches alone, and taking turns in laps of a few thousand nodes (the solver's
# laps are longer: few positions brute force can solve last beyond its first).
METHODS = ({"method": "alphabeta"}, {"method": "dfpn"}, {"method": "auto", "lap_nodes": 1})


def random_positions(rules: Gomoku, empties: range, count: int, seed: int) -> list:
    """``count`` positions not over, reached by random legal play, their empty points drawn
    from ``empties``."""
    r, out = random.Random(seed), []
    while len(out) < count:
        target = r.choice(empties)
        pos = rules.start()
        while pos.empties > target and not pos.is_game_over():
            pos = pos.play(r.choice(pos.moves()))
        if not pos.is_game_over():
            out.append(pos)
    return out


def check_every_move(rules: Gomoku, positions: list) -> int:
    """Assert the native value of each position and of every move in it against brute force,
    by the solver (its two searches taking turns) and by each search of the core alone; the
    number of moves checked."""
    checked = 0
    for pos in positions:
        truth = brute_move_values(pos.board, pos.token, rules.size, rules.k, rules.overline)
        solver = rules.solver("outcome", backend="native")
        assert solver.move_values(pos) == truth, (pos.board, pos.token)
        assert solver.value(pos) == max(truth.values()), (pos.board, pos.token)
        for method in METHODS:
            core = N.Solver(rules.size, rules.k, rules.overline)
            for move, value in truth.items():
                after = pos.play(move)
                if not after.is_game_over():
                    assert -core.value(*bitboards(after.board), **method) == value, (pos.board, move, method)
        checked += len(truth)
    return checked


# --- brute force ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "size, k, overline, empties, count",
    [
        (5, 5, True, range(6, 12), 10),  # the course's 5x5 board
        (5, 5, False, range(6, 12), 6),
        (7, 5, True, range(6, 13), 12),  # the course's 7x7 board
        (7, 5, False, range(6, 13), 8),
        (5, 4, True, range(6, 12), 8),
        (6, 4, False, range(6, 12), 8),
        (4, 3, False, range(5, 11), 8),
        (9, 5, True, range(6, 10), 3),  # beyond 64 points: the 128-bit boards
    ],
)
def test_every_moves_value_is_brute_forces(size, k, overline, empties, count):
    rules = Gomoku(size, k, overline)
    assert check_every_move(rules, random_positions(rules, empties, count, seed=size * 1000 + k * 10 + overline)) > 0


@pytest.mark.slow  # brute force of a 5x5 draw of 14 empty points: about 30 s each
@pytest.mark.parametrize("size, empties, count", [(5, range(12, 15), 4), (7, range(10, 13), 40)])
def test_every_moves_value_is_brute_forces_up_to_14_empty_points(size, empties, count):
    rules = GOMOKU.sized(size)
    assert check_every_move(rules, random_positions(rules, empties, count, seed=size)) > 0


def test_the_empty_5x5_board_and_each_first_move_are_draws():
    """The course's test 160: a draw, A1 (and every other first move) keeps it, in milliseconds."""
    five = GOMOKU.sized(5)
    solver = five.solver("outcome", backend="native")
    assert solver.value(five.start()) == 0
    assert set(solver.move_values(five.start()).values()) == {0}
    assert solver.nodes < 100_000


# --- the Python solver, the second route --------------------------------------------------------


@pytest.mark.parametrize(
    "size, empties, count",
    [(7, range(13, 15), 2), pytest.param(7, range(13, 17), 8, marks=pytest.mark.slow),
     pytest.param(6, range(12, 16), 8, marks=pytest.mark.slow)],
)  # fmt: skip
def test_native_and_python_agree_beyond_brute_force(size, empties, count):
    rules = GOMOKU.sized(size)
    for pos in random_positions(rules, empties, count, seed=size + 55):
        native, python = rules.solver("outcome", backend="native"), rules.solver("outcome", backend="python")
        assert native.move_values(pos) == python.move_values(pos), pos.board


def test_the_searches_alone_and_in_laps_agree_beyond_brute_force():
    """Alpha-beta alone, df-pn alone (where it is quick), and the two taking turns in laps from
    a few nodes up (each lap ended in the middle of a search, the position set up again): the
    same values, on positions of thousands of nodes, beyond brute force's reach."""
    switched = 0
    for pos in random_positions(GOMOKU, range(28, 34), 8, seed=49):
        found, nodes = set(), 0
        for method in METHODS:  # alpha-beta first
            core = N.Solver(7, 5, True)
            if method["method"] == "dfpn" and nodes > 50_000:
                continue  # alone, df-pn takes seconds on a draw that alpha-beta settles at once
            found.add(core.value(*bitboards(pos.board), **method))
            nodes = core.nodes
            switched += method.get("lap_nodes") == 1 and nodes > 9
        assert len(found) == 1, pos.board
    assert switched >= 4


def test_symmetric_positions_have_symmetric_values():
    """The table is keyed by the least of a position's eight images: each image, asked
    first or after the others, gives the same values, moves mapped."""
    pos = random_positions(GOMOKU, range(18, 19), 1, seed=3)[0]
    size = GOMOKU.size

    def image(board: str, s: int) -> str:
        out = ["."] * len(board)
        for i, ch in enumerate(board):
            r, c = divmod(i, size)
            m = size - 1
            r2, c2 = [(r, c), (c, m - r), (m - r, m - c), (m - c, r), (r, m - c), (m - r, c), (c, r), (m - c, m - r)][s]
            out[r2 * size + c2] = ch
        return "".join(out)

    shared = GOMOKU.solver("outcome", backend="native")
    values = []
    for s in range(8):
        board = image(pos.board, s)
        alone = GOMOKU.solver("outcome", backend="native").move_values(GOMOKU.parse(board, pos.token))
        again = shared.move_values(GOMOKU.parse(board, pos.token))
        assert alone == again
        values.append(sorted(alone.values()))
    assert all(v == values[0] for v in values)


# --- the core's contract ------------------------------------------------------------------------


def test_windows_keep_the_fail_soft_contract():
    rules = GOMOKU.sized(6)
    for pos in random_positions(rules, range(10, 16), 12, seed=8):
        black, white = bitboards(pos.board)
        exact = N.Solver(6, 5, True).value(black, white)
        for alpha, beta in ((-1, 0), (0, 1), (-1, 1)):
            for method in METHODS:
                v = N.Solver(6, 5, True).value(black, white, alpha, beta, **method)
                assert v == exact or (v <= alpha and exact <= v) or (v >= beta and exact >= v)


def test_a_node_limit_gives_none_and_keeps_the_table_exact():
    pos = random_positions(GOMOKU, range(30, 31), 1, seed=1)[0]
    black, white = bitboards(pos.board)
    core = N.Solver(7, 5, True)
    if core.value(black, white, max_nodes=1) is None:
        assert core.value(black, white) == NativeGomokuSolver(GOMOKU, "outcome").value(pos)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: N.Solver(3, 3, True), ValueError, "size must be in 4..11"),
        (lambda: N.Solver(12, 5, True), ValueError, "size must be in 4..11"),
        (lambda: N.Solver(7, 8, True), ValueError, "k must be in 3..7"),
        (lambda: N.Solver(7, 5, True, 40), ValueError, "table_bits"),
        (lambda: N.Solver(5, 5, True).value(1, 1), ValueError, "same point"),
        (lambda: N.Solver(5, 5, True).value(3, 0), ValueError, "2 black and 0 white"),
        (lambda: N.Solver(5, 5, True).value(1 << 25, 0), ValueError, "bitboard of the 5x5 board"),
        (lambda: N.Solver(5, 5, True).value(-1, 0), ValueError, "bitboard of the 5x5 board"),
        (lambda: N.Solver(5, 5, True).value("x", 0), TypeError, "int bitboard"),
        (lambda: N.Solver(5, 5, True).value(0, 0, 1, 0), ValueError, "alpha < beta"),
        (lambda: N.Solver(5, 5, True).value(0, 0, should_stop=3), TypeError, "callable"),
        (lambda: N.Solver(5, 5, True).value(0, 0, method="magic"), ValueError, "method must be 'auto'"),
    ],
)
def test_bad_input_raises(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_boards_over_the_cores_size_go_to_the_python_search():
    big = Gomoku(13, 5, True)
    pos = big.start()
    for point in "C4 A13 D4 C13 E4 E13 F4".split():  # black's four is open at both ends: white loses
        pos = pos.play(big.parse_point(point, 13))
    solver = big.solver("outcome", backend="native")
    assert solver.value(pos) == -1 and solver.nodes < 1_000


# --- stops ----------------------------------------------------------------------------------------

NINE = Gomoku(9, 5, True)  # the empty 9x9 board: beyond any test's patience


def test_should_stop_stops_within_a_second_and_the_table_stays_exact():
    deadline = time.monotonic() + 0.2
    solver = NINE.solver("outcome", backend="native", should_stop=lambda: time.monotonic() > deadline)
    start = time.monotonic()
    with pytest.raises(Stopped):
        solver.value(NINE.start())
    assert time.monotonic() - start < 5 and solver.nodes > 0
    pos = random_positions(NINE, range(12, 13), 1, seed=4)[0]  # the same cores, after the stop
    solver.should_stop = None
    assert solver.move_values(pos) == brute_move_values(pos.board, pos.token, 9, 5, True)


def test_should_stop_errors_propagate():
    def broken():
        raise RuntimeError("broken should_stop")

    with pytest.raises(RuntimeError, match="broken should_stop"):
        N.Solver(9, 5, True).value(0, 0, should_stop=broken)


def test_ctrl_c_stops_a_long_solve():
    solver = NINE.solver("outcome", backend="native")
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        solver.value(NINE.start())
    assert time.monotonic() - start < 30  # the signal, not the end of the solve, stopped it
    timer.join()


def test_the_search_releases_the_gil():
    stop = threading.Event()
    solver = NINE.solver("outcome", backend="native", should_stop=stop.is_set)
    errors = []

    def solve():
        try:
            solver.value(NINE.start())
        except Stopped as e:
            errors.append(e)

    worker = threading.Thread(target=solve)
    worker.start()
    count, end = 0, time.monotonic() + 0.3
    while time.monotonic() < end:
        count += 1
    still_running = worker.is_alive()
    stop.set()
    worker.join(5)
    assert still_running and not worker.is_alive() and errors
    assert count > 50_000  # the main thread kept running


# --- backends ---------------------------------------------------------------------------------------


def test_auto_is_the_native_solver_and_python_stays_the_second_route(monkeypatch):
    assert GOMOKU.backends() == ("native", "python") and GOMOKU.backend_note() is None
    five = GOMOKU.sized(5)
    assert five.solver("outcome").analyze(five.start(), all_values=True).backend == "native"
    assert GOMOKU.solver("outcome", backend="python").backend == "python"
    monkeypatch.setattr(gomoku_native, "_native", None)  # as after an install without a compiler
    assert GOMOKU.backend("auto") == "python" and GOMOKU.solver("outcome").backend == "python"
    with pytest.raises(GraderError, match="native solver is not built on this machine: install a C compiler"):
        GOMOKU.solver("outcome", backend="native")
    assert "not built" in (GOMOKU.backend_note() or "")
