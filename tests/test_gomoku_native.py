"""Gomoku's C solver (grader._gomoku_native) against brute force (reference_gomoku), the
Python solver, and its own contract: every move's value, symmetries, stops and bad input."""

import os
import random
import signal
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.errors import GraderError
from grader.games import gomoku_native
from grader.games.gomoku import GOMOKU, Gomoku
from grader.games.gomoku_native import bitboards
from grader.games.native import Extension
from grader.stop import Stopped

from reference_gomoku import check_proof
from reference_gomoku import move_values as brute_move_values

if not gomoku_native.available():
    pytest.skip(f"C solver not built: {gomoku_native.NATIVE.unavailable_reason()}", allow_module_level=True)

from grader import _gomoku_native as N  # noqa: E402
from grader.games.gomoku_native import NativeGomokuSolver  # noqa: E402

NOT_BUILT = Extension("grader._no_such_extension")  # as after an install without a compiler

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


@pytest.mark.parametrize("size, overline, seed", [(5, True, 4), (5, False, 5)])
def test_pairings_are_brute_forces(size, overline, seed):
    """Four in a row below the board's size: many lines, in runs a pair of points can serve
    (a pairing strategy settles draws), on positions where a pairing claimed too soon (one
    point for each run) is caught."""
    rules = Gomoku(size, 4, overline)
    empties = range(9, 13) if size == 5 else range(9, 12)
    positions = random_positions(rules, empties, 8, seed=seed * 1000 + size * 100 + 40 + overline)
    assert check_every_move(rules, positions) > 0


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


# --- proofs replayed ----------------------------------------------------------------------------

COURSE_FILE = Path(__file__).parent / "data" / "assignment2-public-tests.gtp"


def course_positions() -> dict[int, object]:
    """The position of each 'solve' and 'genmove' test of the course's public file, by number."""
    out, rules = {}, GOMOKU
    pos = rules.start()
    for line in COURSE_FILE.read_text().splitlines():
        words = line.split()
        if words and words[0].isdigit():
            number, words = int(words[0]), words[1:]
            if words[0] in ("solve", "genmove"):
                out[number] = pos
        if words[:1] == ["boardsize"]:
            rules = GOMOKU.sized(int(words[1]))
        if words[:1] in (["boardsize"], ["clear_board"]):
            pos = rules.start()
        elif words[:1] == ["play"]:
            pos = pos.play(rules.parse_square(words[2]))
    return out


def witnesses(size: int, k: int = 5, overline: bool = True):
    """The witness of a proof's lower bounds: an optimal move (by the C core's values), the
    first in the order of the live lines through it (the checker trusts none of it)."""
    core, values = N.Solver(size, k, overline, 22), {}
    lines = [line for line in Gomoku(size, k, overline).lines(size)]

    def value(board: str) -> int:
        if board not in values:
            values[board] = core.value(*bitboards(board))
        return values[board]

    def weight(board: str, m: int, me: str) -> int:
        out = 0
        for line in (line for line in lines if m in line):
            cells = [board[i] for i in line]
            out += 4 ** cells.count(me) if (cells.count(".") + cells.count(me)) == k else 0
            out += 3 ** (k - cells.count(".")) if me not in cells else 0
        return out

    def witness(board: str, me: str) -> int:
        best = value(board)
        for m in sorted((i for i, ch in enumerate(board) if ch == "."), key=lambda m: -weight(board, m, me)):
            if -value(board[:m] + me + board[m + 1 :]) == best:
                return m
        raise AssertionError(f"{board} {me}: no move achieves {best}")

    return witness, value


def replay_every_move(pos, weights: bool = False) -> int:
    """Replay the proofs of a position's value and of every move's; the claims checked."""
    rules = pos.game
    witness, value = witnesses(rules.size, rules.k, rules.overline)
    claims = check_proof(pos.board, pos.token, value(pos.board), rules.size, rules.k, rules.overline, witness, weights)
    for m in pos.moves():
        after = pos.play(m)
        claims += check_proof(after.board, after.token, value(after.board), rules.size, rules.k, rules.overline,
                              witness, weights)  # fmt: skip
    return claims


def test_the_course_positions_proofs_replay_every_move():
    """Tests 30 to 150 of the course's file (7x7, up to 17 empty points): the value of the
    position and of every move, each replayed down to finished games and dead boards."""
    positions = course_positions()
    done = set()
    for number in range(30, 160, 10):
        pos = positions[number]
        if pos.board not in done and not pos.is_game_over():
            done.add(pos.board)
            assert replay_every_move(pos) > 0
    assert len(done) == 9


@pytest.mark.parametrize("number", [180, 190, 200])
def test_the_course_41_empty_positions_are_won_by_c5_by_replayed_proofs(number):
    """Black wins, C5 (the file's answer) wins: a proof down to finished games, a few thousand
    claims (every move's proof together is millions: left to the search's own tests)."""
    pos = course_positions()[number]
    witness, _ = witnesses(7)
    assert pos.empties == 41 and check_proof(pos.board, "x", 1, 7, 5, True, witness) < 50_000
    after = pos.play(GOMOKU.parse_square("C5"))
    assert check_proof(after.board, "o", -1, 7, 5, True, witness) < 50_000


def test_the_empty_5x5_board_is_a_draw_by_a_replayed_proof():
    """The course's test 160: the empty 5x5 board and each first move are draws. Down to dead
    boards alone the proof is beyond a test (positions of 4 stones run for minutes): its
    leaves are also sides whose open lines weigh too little to complete one (Erdos-Selfridge)."""
    five = course_positions()[160]
    assert five.board == "." * 25
    assert replay_every_move(five, weights=True) > 25


def test_a_false_claim_fails_its_replay_whatever_the_witnesses():
    five = GOMOKU.sized(5)
    witness, _ = witnesses(5)
    for pos in random_positions(five, range(8, 11), 6, seed=5):
        truth = max(brute_move_values(pos.board, pos.token, 5, 5, True).values())
        assert check_proof(pos.board, pos.token, truth, 5, 5, True, witness) > 0
        for wrong in {-1, 0, 1} - {truth}:
            for chosen in (witness, lambda b, me: b.index(".")):
                with pytest.raises(AssertionError):
                    check_proof(pos.board, pos.token, wrong, 5, 5, True, chosen)


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


def test_auto_is_the_native_solver_and_python_stays_the_second_route(monkeypatch, tmp_path):
    assert GOMOKU.backends() == ("native", "python") and GOMOKU.backend_note() is None
    five = GOMOKU.sized(5)
    assert five.solver("outcome").analyze(five.start(), all_values=True).backend == "native"
    assert GOMOKU.solver("outcome", backend="python").backend == "python"
    monkeypatch.setattr(gomoku_native, "NATIVE", NOT_BUILT)  # as after an install without a compiler
    assert GOMOKU.backend("auto") == "python" and GOMOKU.solver("outcome").backend == "python"
    with pytest.raises(GraderError, match="native solver is not built on this machine: install a C compiler"):
        GOMOKU.solver("outcome", backend="native")
    assert "not built" in (GOMOKU.backend_note() or "")
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["doctor", "--no-attacks"])
    assert "\nsolver (gomoku): the native Gomoku solver is not built, so the Python one is used" in out.output
    monkeypatch.undo()
    out = CliRunner().invoke(main, ["doctor", "--no-attacks"])
    assert "\nsolver (othello): native, python built (native used)\n" in out.output
    assert "\nsolver (gomoku): native, python built (native used)\n" in out.output
