"""The C solver (grader._othello_native) against grader.games.othello, the pure-Python solver and FFO."""

import os
import random
import signal
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader import stop as stop_module
from grader.games import othello_native as native_solver
from grader.games.othello import (
    FULL,
    OTHELLO,
    PLAIN,
    SCORINGS,
    WINNER_TAKES_EMPTIES,
    Position,
    flips,
    legal_moves,
    random_position,
)
from grader.games.othello_solver import OthelloSolver as Solver
from grader.grading.plans import read_boards
from grader.stop import Stopped

from conftest import FFO_FILE

if not native_solver.available():
    pytest.skip(f"C solver not built: {native_solver.NATIVE.unavailable_reason()}", allow_module_level=True)

from grader import _othello_native as N  # noqa: E402
from grader.games.othello_native import NativeOthelloSolver as NativeSolver  # noqa: E402

bitboards = st.integers(min_value=0, max_value=FULL)


# --- move generation -------------------------------------------------------------


def played_positions(seed: int, count: int) -> list[Position]:
    """Positions met along random games, from the opening to the end."""
    rng, out = random.Random(seed), []
    while len(out) < count:
        pos = Position.start()
        while not pos.is_game_over():
            out.append(pos)
            moves = pos.moves()
            pos = pos.play(rng.choice(moves)) if moves else pos.pass_turn()
    return out


def test_moves_and_flips_agree_on_played_and_random_positions():
    rng = random.Random(1)
    pairs = [(p.player, p.opponent) for p in played_positions(1, 600)]
    for _ in range(600):
        p = rng.getrandbits(64) & rng.getrandbits(64)
        pairs.append((p, rng.getrandbits(64) & ~p))
    for p, o in pairs:
        assert N.legal_moves(p, o) == legal_moves(p, o)
        for path in N._paths:  # every path this CPU runs, "portable" (any CPU) among them
            assert N._moves_by(path, p, o) == legal_moves(p, o), path
            for sq in range(64):
                assert N._flips_by(path, sq, p, o) == flips(sq, p, o), (path, sq, p, o)
        for sq in range(64):
            assert N.flips(sq, p, o) == flips(sq, p, o), (sq, p, o)


@settings(max_examples=300, deadline=None)
@given(bitboards, bitboards, st.integers(min_value=0, max_value=63))
def test_moves_and_flips_agree_on_any_disjoint_bitboards(p, o, sq):
    o &= ~p
    assert N.legal_moves(p, o) == legal_moves(p, o)
    assert N.legal_moves(o, p) == legal_moves(o, p)
    assert N.flips(sq, p, o) == flips(sq, p, o)
    for path in N._paths:
        assert N._moves_by(path, p, o) == legal_moves(p, o), path
        assert N._flips_by(path, sq, p, o) == flips(sq, p, o), path


def test_paths_name_what_this_cpu_runs():
    assert N._paths[0] == "portable"
    with pytest.raises(ValueError, match="no path 'sse9' on this CPU"):
        N._flips_by("sse9", 0, 0, 0)


# --- agreement with the pure-Python solver ----------------------------------------


def endings(seed: int, count: int) -> list[Position]:
    """From the last plies of random games: positions where the mover must pass, and games
    already over with empty squares left (``count`` of each)."""
    rng, must_pass, over = random.Random(seed), [], []
    while len(must_pass) < count or len(over) < count:
        pos = Position.start()
        while not pos.is_game_over():
            if pos.empties <= 12 and pos.must_pass() and len(must_pass) < count:
                must_pass.append(pos)
            moves = pos.moves()
            pos = pos.play(rng.choice(moves)) if moves else pos.pass_turn()
        if pos.empties and len(over) < count:
            over.append(pos)
    return must_pass + over


def agreement_pool() -> list[Position]:
    rng = random.Random(2026)
    sizes = [rng.randint(1, 8) for _ in range(70)] + [rng.randint(9, 11) for _ in range(12)] + [12, 12, 13, 14]
    return [random_position(rng, n) for n in sizes] + endings(7, 6)


POOL = agreement_pool()


def many_positions(seed: int, sizes: range, count: int) -> list[Position]:
    """``count`` random positions for each number of empties in ``sizes``."""
    rng = random.Random(seed)
    return [random_position(rng, n) for n in sizes for _ in range(count)]


MANY = many_positions(23, range(1, 11), 200) + many_positions(24, range(11, 13), 25)  # 2,050 boards


@pytest.mark.slow  # half a minute; test_solve_and_optimal_moves_match_python checks every 7th of them in the fast set
def test_native_matches_python_on_thousands_of_positions():
    """Values and the sets of optimal moves, 1-12 empties, both scorings; one solver of each
    kind per scoring, so the tables carry bounds from board to board as in a real run."""
    for scoring in SCORINGS:
        py, c = Solver(scoring), NativeSolver(scoring)
        for pos in MANY[:: 1 if scoring == WINNER_TAKES_EMPTIES else 3]:
            expected = (py.value(pos), py.optimal_moves(pos))
            assert (c.value(pos), c.optimal_moves(pos)) == expected, (scoring, pos.board_string(), pos.token)


@pytest.mark.slow
def test_solve_and_optimal_moves_match_python():
    """Solver.solve (value and optimal moves in one search; the moves None once the table knows
    the value) and Solver.optimal_moves (a test of each move against a given value)."""
    for scoring in SCORINGS:
        py, s = Solver(scoring), N.Solver(scoring == WINNER_TAKES_EMPTIES, 16)
        for pos in MANY[::7]:
            expected = (py.value(pos), py.optimal_moves(pos))
            p, o = pos.player, pos.opponent
            assert s.solve(p, o) == expected, (scoring, pos.board_string(), pos.token)
            again = s.solve(p, o)
            assert again in (expected, (expected[0], None)), (scoring, pos.board_string(), pos.token)
            assert s.optimal_moves(p, o, expected[0]) == expected[1], (scoring, pos.board_string(), pos.token)
    assert N.Solver(True, 10).optimal_moves(FULL, 0, 64) == []
    with pytest.raises(ValueError):
        N.Solver(True, 10).optimal_moves(1, 2, 65)


SYMMETRIES = [
    lambda r, c: (r, c),
    lambda r, c: (c, r),
    lambda r, c: (7 - r, 7 - c),
    lambda r, c: (7 - c, 7 - r),
    lambda r, c: (r, 7 - c),
    lambda r, c: (7 - r, c),
    lambda r, c: (c, 7 - r),
    lambda r, c: (7 - c, r),
]


def transform(bits: int, sym) -> int:
    out = 0
    for sq in range(64):
        if bits >> sq & 1:
            r, c = sym(sq // 8, sq % 8)
            out |= 1 << (r * 8 + c)
    return out


@pytest.mark.slow
def test_native_agrees_with_itself_at_13_to_16_empties():
    """Beyond the Python solver's reach: the 8 symmetric images of each board, each with a fresh
    table (so a different search order and different table contents), and the value from the
    children's values (full windows, a third table) must all agree, and so must the optimal moves."""
    rng = random.Random(1616)
    for n in (13, 14, 15, 16):
        for _ in range(6):
            pos = random_position(rng, n)
            results = set()
            for sym in SYMMETRIES:
                p, o = transform(pos.player, sym), transform(pos.opponent, sym)
                s = N.Solver(True, 16)
                v = s.search(p, o)
                best = [sq for sq in range(64) if N.legal_moves(p, o) >> sq & 1 and child_value(s, p, o, sq, v)]
                assert N.Solver(True, 16).solve(p, o) == (v, best) and s.optimal_moves(p, o, v) == best
                back = {next(t for t in range(64) if transform(1 << t, sym) == 1 << sq) for sq in best}
                results.add((v, frozenset(back)))
            assert len(results) == 1, (pos.board_string(), pos.token, results)
            ((v, best),) = results
            children = N.Solver(True, 18)
            values = {}
            for sq in range(64):
                if N.legal_moves(pos.player, pos.opponent) >> sq & 1:
                    f = N.flips(sq, pos.player, pos.opponent)
                    values[sq] = -children.search(pos.opponent ^ f, pos.player | f | 1 << sq, -64, 64)
            if values:
                assert max(values.values()) == v and {sq for sq, x in values.items() if x == v} == best


def child_value(s, p: int, o: int, sq: int, v: int) -> bool:
    """Is ``sq`` optimal in (p, o) of value ``v``? A null-window test, as the grader makes."""
    f = N.flips(sq, p, o)
    return s.search(o ^ f, p | f | 1 << sq, -v, -v + 1) <= -v


@pytest.mark.parametrize("scoring", list(SCORINGS))
def test_native_matches_python_solver(scoring):
    py, c = Solver(scoring), NativeSolver(scoring)  # one of each: tables shared across positions
    kinds = {"must pass": 0, "game over with empties": 0, "several optimal": 0, "12-14 empties": 0}
    for pos in POOL:
        value, best = py.value(pos), py.optimal_moves(pos)
        assert (c.value(pos), c.optimal_moves(pos)) == (value, best), (pos.board_string(), pos.token)
        kinds["must pass"] += pos.must_pass()
        kinds["game over with empties"] += pos.is_game_over() and pos.empties > 0
        kinds["several optimal"] += len(best) > 1
        kinds["12-14 empties"] += 12 <= pos.empties <= 14
    assert all(n >= 3 for n in kinds.values()), kinds


def test_public_behaviour_matches_python_solver():
    rng = random.Random(3)
    for scoring in SCORINGS:
        py, c = Solver(scoring), NativeSolver(scoring)
        for n in (4, 7, 10):
            pos = random_position(rng, n)
            a, b = py.analyze(pos, all_values=True), c.analyze(pos, all_values=True)
            assert (a.value, a.optimal_moves, a.line, a.move_values) == (
                b.value,
                b.optimal_moves,
                b.line,
                b.move_values,
            )
            assert c.verify_line(pos, a.line).ok
            wrong = next((m for m, v in a.move_values.items() if v < a.value), None)
            if wrong is not None:
                assert c.verify_line(pos, [wrong]) == py.verify_line(pos, [wrong])


def test_nodes_count_and_clear():
    pos = random_position(random.Random(4), 12)
    c = NativeSolver(PLAIN)
    value = c.value(pos)
    first = c.nodes
    assert first > 100
    c.nodes = 0
    assert c.value(pos) == value and c.nodes < 10  # answered from the table
    c.clear()
    assert c.value(pos) == value and c.nodes > first / 2
    with pytest.raises(AttributeError):
        c._core.nodes = 0


def test_windows_keep_the_fail_soft_contract():
    rng = random.Random(5)
    exact = N.Solver(False, 16)
    for _ in range(150):
        pos = random_position(rng, rng.randint(1, 12))
        p, o = pos.player, pos.opponent
        v = exact.search(p, o, -64, 64)
        s = N.Solver(False, 12)  # small fresh tables: bounds meet other windows' bounds
        for _ in range(6):
            a = rng.randint(-66, 64)
            b = rng.choice([a + 1, a + 2, rng.randint(a + 1, 66)])
            w = s.search(p, o, a, b)
            assert -64 <= w <= 64
            if w <= a:
                assert v <= w, (a, b, w, v)
            elif w >= b:
                assert v >= w, (a, b, w, v)
            else:
                assert w == v, (a, b, w, v)
    assert exact.search(p, o, -1000, 1000) == v  # windows beyond the scores are fine


@pytest.mark.slow
def test_windows_at_20_empties():
    """The root's iterative deepening, selective pass and aspiration start at 20 empties: the
    fail-soft contract there, each window on a fresh table (no answer carried over)."""
    boards = [ffo_entries([40])[40].position, *many_positions(20, range(20, 21), 2)]
    for pos in boards:
        p, o = pos.player, pos.opponent
        v = N.Solver(True, 20).search(p, o)
        for a, b in ((-64, 64), (v - 1, v + 1), (v - 12, v - 4), (v + 4, v + 12), (v - 1, v), (v, v + 1)):
            w = N.Solver(True, 20).search(p, o, a, b)
            assert (w <= a and v <= w) or (w >= b and v >= w) or (a < w < b and w == v), (
                pos.board_string(),
                a,
                b,
                w,
                v,
            )


# --- FFO ----------------------------------------------------------------------


def ffo_entries(numbers):
    return {
        int(e.label.split("#")[1]): e for e in read_boards(FFO_FILE, OTHELLO) if int(e.label.split("#")[1]) in numbers
    }


FAST_FFO = list(range(1, 38))  # #1-#37 (up to 22 empties): about 10 s together


@pytest.mark.parametrize("number", FAST_FFO)
def test_ffo_value_and_best_moves(number):
    entry = ffo_entries(FAST_FFO)[number]
    c = NativeSolver(WINNER_TAKES_EMPTIES)
    assert c.value(entry.position) == entry.score
    assert c.optimal_moves(entry.position) == sorted(entry.best_moves)


@pytest.mark.slow
@pytest.mark.parametrize("number", range(38, 50))
def test_ffo_38_to_49_value_and_best_moves(number):
    entry = ffo_entries([number])[number]  # 20-26 empties: seconds each, #38 and #39 included
    c = NativeSolver(WINNER_TAKES_EMPTIES)
    assert c.value(entry.position) == entry.score
    assert c.optimal_moves(entry.position) == sorted(entry.best_moves)


# --- hostile input --------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: N.legal_moves("1", 0), TypeError),
        (lambda: N.legal_moves(1.0, 0), TypeError),
        (lambda: N.legal_moves(None, 0), TypeError),
        (lambda: N.legal_moves(1), TypeError),
        (lambda: N.legal_moves(-1, 0), ValueError),
        (lambda: N.legal_moves(0, -(2**70)), ValueError),
        (lambda: N.legal_moves(2**64, 0), OverflowError),
        (lambda: N.legal_moves(0, 2**200), OverflowError),
        (lambda: N.legal_moves(3, 6), ValueError),
        (lambda: N.flips(64, 1, 2), ValueError),
        (lambda: N.flips(-1, 1, 2), ValueError),
        (lambda: N.flips(2**70, 1, 2), OverflowError),
        (lambda: N.flips("a1", 1, 2), TypeError),
        (lambda: N.flips(3, 1, 1), ValueError),
        (lambda: N._flips_by("portable", 64, 1, 2), ValueError),
        (lambda: N._flips_by("portable\0", 0, 1, 2), ValueError),
        (lambda: N._flips_by(None, 0, 1, 2), TypeError),
        (lambda: N._flips_by("avx2", 0, 3, 6), ValueError),
        (lambda: N._moves_by(b"portable", 1, 2), TypeError),
        (lambda: N._moves_by("portable", -1, 2), ValueError),
        (lambda: N.Solver(1), TypeError),
        (lambda: N.Solver("yes"), TypeError),
        (lambda: N.Solver(), TypeError),
        (lambda: N.Solver(True, 3), ValueError),
        (lambda: N.Solver(True, 31), ValueError),
        (lambda: N.Solver(True, -5), ValueError),
        (lambda: N.Solver(True, 2**70), OverflowError),
        (lambda: N.Solver(True, "22"), TypeError),
        (lambda: N.Solver(True, 10, 5), TypeError),
        (lambda: N.Solver(True, bogus=1), TypeError),
        (lambda: N.Solver(True, 10).search(1, 2, 5, 5), ValueError),
        (lambda: N.Solver(True, 10).search(1, 2, 6, 5), ValueError),
        (lambda: N.Solver(True, 10).search(1, 2, "a", 5), TypeError),
        (lambda: N.Solver(True, 10).search(1, 2, 0.5, 5), TypeError),
        (lambda: N.Solver(True, 10).search(1, 2, -(2**80), 5), OverflowError),
        (lambda: N.Solver(True, 10).search(1, 1, -64, 64), ValueError),
        (lambda: N.Solver(True, 10).search(-1, 0), ValueError),
        (lambda: N.Solver(True, 10).search(2**64, 0), OverflowError),
        (lambda: N.Solver(True, 10).search([], 0), TypeError),
        (lambda: N.Solver(True, 10).search(1), TypeError),
        (lambda: N.Solver(True, 10).clear(1), TypeError),
    ],
)
def test_hostile_input_raises(call, error):
    with pytest.raises(error):
        call()


junk = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.binary(max_size=3),
)
ERRORS = (TypeError, ValueError, OverflowError)


@settings(max_examples=400, deadline=None)
@given(junk, junk, junk, junk)
def test_fuzzed_arguments_raise_or_answer(a, b, alpha, beta):
    """Anything at all from Python: a clear exception or a sound answer, never a crash (a
    legal board with many empties may take long: the search is stopped after 50 ms)."""
    deadline = time.monotonic() + 0.05
    s = N.Solver(True, 8, lambda: time.monotonic() > deadline)
    for call in (
        lambda: N.legal_moves(a, b),
        lambda: N.flips(alpha, a, b),
        lambda: N._features(a, b),
        lambda: N._evaluate(a, b),
        lambda: s.search(a, b),
        lambda: s.search(a, b, alpha, beta),
        lambda: s.search(player=a, opponent=b, beta=beta),
    ):
        try:
            result = call()
        except (*ERRORS, N.Cancelled):
            continue
        assert isinstance(result, (int, tuple))


@settings(max_examples=300, deadline=None)
@given(bitboards, bitboards, st.integers(-200, 200), st.integers(-200, 200))
def test_fuzzed_bitboards_give_sound_bounds(p, o, alpha, beta):
    """Any two bitboards, overlapping or not, few or many empties (kept small enough to solve
    at once), any window: a ValueError, or a bound that a full-window search confirms."""
    if bin(~(p | o) & FULL).count("1") > 10:
        p |= FULL & ~o & ~0xFF  # at most 8 empties: no stall
    s = N.Solver(False, 8)
    try:
        w = s.search(p, o, alpha, beta)
    except ValueError:
        assert p & o or alpha >= beta
        return
    v = N.Solver(False, 10).search(p, o, -64, 64)
    assert -64 <= v <= 64 and -64 <= w <= 64
    if w <= alpha:
        assert v <= w
    elif w >= beta:
        assert v >= w
    else:
        assert v == w


def test_odd_positions_and_windows():
    s = N.Solver(True, 10)
    assert s.search(0, 0) == 0  # empty board: nobody can move, a draw
    assert s.search(FULL, 0) == 64
    assert s.search(0, FULL) == -64
    assert s.search(1, 1 << 63) == 0  # a1 against h8: no moves, a draw
    assert s.search(1, 2) == 64  # a1 takes b1 by playing c1, then takes the empties
    assert s.search(1, 0) == 64  # the winner takes the 63 empties
    assert N.Solver(False, 10).search(1, 0) == 1
    for board in ("xo" + "." * 62, "xoo" + "." * 61, "x" + "." * 62 + "o"):
        pos = Position.from_string(board, "x")
        assert s.search(pos.player, pos.opponent) == Solver(WINNER_TAKES_EMPTIES).value(pos), board
    assert s.search(1, 0, 70, 80) <= 70  # above every value: an upper bound
    assert s.search(0, 1, -80, -70) >= -70
    assert s.search(1, 0, -(2**40), 2**40) == 64
    assert s.winner_takes_empties is True and s.table_bits == 10


def test_huge_table_is_a_memory_error_or_works():
    try:
        s = N.Solver(False, 30)  # 24 GiB: refused by most machines
    except MemoryError:
        return
    assert s.search(1, 2) == 0


def test_should_stop_errors_propagate():
    pos = ffo_entries([41])[41].position

    def boom():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        N.Solver(True, 16, boom).search(pos.player, pos.opponent)

    class Weird:
        def __bool__(self):
            raise ValueError("no truth")

    with pytest.raises(ValueError, match="no truth"):
        N.Solver(True, 16, Weird).search(pos.player, pos.opponent)

    def reenter():  # the solver is busy in this very thread: refused, not a deadlock
        return s.search(1, 1 << 63)

    s = N.Solver(True, 16, reenter)
    with pytest.raises(RuntimeError, match="busy"):
        s.search(pos.player, pos.opponent)
    assert s.search(1, 1 << 63) == 0  # usable again


# --- cancellation and threads ---------------------------------------------------


LONG = 41  # 22 empties: seconds to solve


def test_should_stop_cancels_within_a_second():
    pos = ffo_entries([LONG])[LONG].position
    deadline = time.monotonic() + 0.2
    c = NativeSolver(WINNER_TAKES_EMPTIES, should_stop=lambda: time.monotonic() > deadline)
    with pytest.raises(Stopped):
        c.value(pos)
    assert c.nodes > 0


def test_cancelled_table_stays_consistent():
    entry = ffo_entries([33])[33]  # 20 empties: about a second
    stop = threading.Event()
    c = NativeSolver(WINNER_TAKES_EMPTIES, should_stop=stop.is_set)
    threading.Timer(0.1, stop.set).start()
    with pytest.raises(Stopped):
        c.value(entry.position)
    stop.clear()  # the table keeps what finished before the stop: it must all be exact
    assert c.value(entry.position) == entry.score
    assert c.optimal_moves(entry.position) == sorted(entry.best_moves)


@pytest.mark.parametrize("point", ["solver", "search", "solved"])
def test_ctrl_c_stops_a_long_solve(monkeypatch, point):
    """SIGINT just before the C search, during it (sent by its first look at should_stop, from
    inside the search) and just after it: a KeyboardInterrupt each time. (A timer's signal,
    0.2 s into the solve, made the test hang on the machine's load: it failed once on a busy one.)"""
    pos = ffo_entries([LONG])[LONG].position
    sent = []

    def send_once() -> bool:
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)
        return False

    if point != "search":
        monkeypatch.setattr(stop_module, "_SIGNAL_AT", point)
    c = NativeSolver(WINNER_TAKES_EMPTIES, should_stop=send_once if point == "search" else None)
    with pytest.raises(KeyboardInterrupt):
        c.value(pos)
    assert sent or point != "search"


def test_search_releases_the_gil():
    pos = ffo_entries([LONG])[LONG].position
    stop = threading.Event()
    c = NativeSolver(WINNER_TAKES_EMPTIES, should_stop=stop.is_set)
    errors = []

    def solve():
        try:
            c.value(pos)
        except Stopped as e:
            errors.append(e)

    worker = threading.Thread(target=solve)
    worker.start()
    count, end = 0, time.monotonic() + 0.3
    while time.monotonic() < end:
        count += 1
    still_running = worker.is_alive()
    stop.set()
    worker.join(2)
    assert still_running and not worker.is_alive() and errors
    assert count > 50_000  # the main thread kept running


def test_threads_share_one_solver_and_run_separate_ones():
    rng = random.Random(9)
    positions = [random_position(rng, 11) for _ in range(8)]
    expected = [Solver(PLAIN).value(p) for p in positions]
    shared = N.Solver(False, 18)
    results = {}

    def work(key, solver):
        results[key] = [solver.search(p.player, p.opponent) for p in positions]

    threads = [threading.Thread(target=work, args=(i, shared if i < 2 else N.Solver(False, 18))) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(r == expected for r in results.values())
