"""Gomoku's threat-space search: every win it proves is a win by brute force, and it settles
the course's 41-empty 7x7 positions that the exact search alone could not."""

import json
import shlex
import time

import pytest

from grader.engines.programs import PYTHON, ProtocolEngine
from grader.games.gomoku import GOMOKU, Gomoku
from grader.games.gomoku_threats import ThreatSearch, Windows
from grader.limits import Limits
from grader.regression.regress import run_regress
from grader.regression.results import RegressSettings
from grader.regression.solutions import Solution, Solutions, key

from reference_gomoku import value as brute_value
from test_gomoku import FIXED, endgames

# The stones of the course's public tests 180, 190 and 200 (black first, in turn): black to
# move on 7x7 with 41 empty points; the course's file expects 'b C5'.
COURSE_HARD = {
    180: "C3 A2 C4 G6 D4 A4 E3 G7",
    190: "C3 A1 C4 G6 D4 A4 E3 G7",
    200: "C3 A2 C4 G6 D4 A4 E3 G2",
}


def course(number: int):
    pos = GOMOKU.start()
    for point in COURSE_HARD[number].split():
        pos = pos.play(GOMOKU.parse_square(point))
    return pos


@pytest.mark.parametrize(
    "size, k, overline, empties, count, least",
    [(5, 4, True, 8, 15, 6), (5, 4, False, 8, 15, 6), (6, 4, True, 8, 12, 6), (6, 4, False, 8, 12, 6),
     (6, 5, True, 8, 10, 3), (7, 5, True, 8, 10, 3), (7, 5, False, 8, 10, 3)],
)  # fmt: skip
def test_every_threat_proof_is_a_win_by_brute_force(size, k, overline, empties, count, least):
    """A proof for the side to move is a brute-force win; for the other side (every reply
    tried), a brute-force loss; the solver's value is brute force's."""
    rules = Gomoku(size, k, overline)
    proofs = 0
    for pos in endgames(rules, empties, count, seed=size * 1000 + k * 10 + overline + empties):
        truth = brute_value(pos.board, pos.token, size, k, overline)
        me, you = pos.token, "o" if pos.token == "x" else "x"
        search = ThreatSearch(Windows(size, k, overline))
        if search.wins(list(pos.board), me, me):
            proofs += 1
            assert truth == 1, pos.board
        if search.wins(list(pos.board), you, me):
            proofs += 1
            assert truth == -1, pos.board
        assert rules.solver("outcome", backend="python").value(pos) == truth, pos.board
    assert proofs >= least  # the search proved something: the test is not vacuous


def test_an_open_three_is_answered_at_its_ends_only():
    """Black's open three C4-E4 on 7x7: B4 and F4 make two winning points each (an open four),
    A4 and G4 one; white's only defences are B4 and F4 (after A4, black's F4 is an open four)."""
    w = Windows(7, 5, True)
    cells = list(GOMOKU.start().board)
    for point in ("C4", "D4", "E4"):
        cells[GOMOKU.parse_square(point)] = "x"
    black = w.open(cells, "x")
    name = GOMOKU.square_name
    assert w.winning_points(black) == set()
    assert {name(m) for m in w.fours(black)} == {"A4", "B4", "F4", "G4"}
    doubles = w.doubles(black)
    assert {name(m) for m in doubles} == {"B4", "F4"}
    common = set.intersection(*doubles.values()) - {i for i, ch in enumerate(cells) if ch != "."}
    assert {name(m) for m in common} == {"B4", "F4"}
    assert {name(m) for m in w.threes(cells, "x", black)} >= {"A4", "G4"}  # a four, then F4 or B4 opens one


@pytest.mark.parametrize("number", sorted(COURSE_HARD))
def test_the_course_41_empty_positions_are_settled_by_threats(number):
    """Black wins, and C5 (the file's answer) wins, found in a few thousand nodes at most (the
    exact search alone ran out of 30 s, over a million nodes, on each)."""
    pos = course(number)
    solver = GOMOKU.solver("outcome", backend="python")
    deadline = time.monotonic() + 120  # a guard only: the assertion is on the nodes searched
    solver.should_stop = lambda: time.monotonic() > deadline
    assert solver.value(pos) == 1
    assert solver.move_value(pos, GOMOKU.parse_square("C5")) == 1
    assert solver.nodes < 5_000


def test_on_a_course_position_any_winning_move_passes(tmp_path):
    """'b C5' as the file expects, and 'b C2', which wins too though the file's answer names
    only C5: both judged by the solver (the position's value settled once for the run)."""
    lines = ["timelimit 30", "boardsize 7", "clear_board"]
    lines += [f"play {'BW'[i % 2]} {p}" for i, p in enumerate(COURSE_HARD[180].split())]
    lines += ["180 solve", "#?[b C5]", "181 solve", "#?[b C5]", "182 solve", "#?[b C5]"]
    (tmp_path / "hard.gtp").write_text("\n".join(lines) + "\n")
    (tmp_path / "fixed.py").write_text(FIXED)
    engine = ProtocolEngine.from_command(
        shlex.join([PYTHON, str(tmp_path / "fixed.py"), json.dumps(["b C5", "b C2", "w C5"])]), "gtp"
    )
    settings = RegressSettings(limits=Limits(wall_seconds=10), solve_seconds=2)
    tests = run_regress(engine, tmp_path / "hard.gtp", GOMOKU, settings).tests
    assert [(t.symbol, t.judged_by) for t in tests] == [("+", "solver"), ("+", "solver"), ("-", "solver")]
    assert "b C2 is right" in tests[1].note and "the winner is b" in tests[2].note
    cache = json.loads((tmp_path / "hard.gtp.solved.json").read_text())
    (entry,) = cache["positions"].values()
    assert entry["value"] == 1 and "C2" in entry["moves"] and set(entry["moves"].values()) == {1}
    assert "best" not in entry or len(entry["best"]) == 41  # with the C core every move wins, listed in about 1 s


@pytest.mark.parametrize("backend", GOMOKU.backends())
@pytest.mark.parametrize("size, k, overline", [(5, 4, True), (6, 4, False), (7, 5, True)])
def test_a_moves_quick_proof_is_its_brute_force_value(size, k, overline, backend):
    """Every move's value a quick proof settles (``proven_move_value``: a threat proof in
    Python, a search of a few thousand nodes in C) is brute force's."""
    rules = Gomoku(size, k, overline)
    proofs = 0
    for pos in endgames(rules, 8, 8, seed=size * 100 + k + overline):
        solver = rules.solver("outcome", backend=backend)
        for m in pos.moves():
            proven = solver.proven_move_value(pos, m)
            if proven is not None:
                proofs += 1
                after = pos.play(m)
                truth = (
                    -after.score()
                    if after.is_game_over()
                    else -brute_value(after.board, after.token, size, k, overline)
                )
                assert proven == truth, (pos.board, m)
    assert proofs >= 10


@pytest.mark.parametrize(
    "number", [n if i == 0 else pytest.param(n, marks=pytest.mark.slow) for i, n in enumerate(sorted(COURSE_HARD))]
)  # a few CPU seconds each: one in the fast set
def test_the_course_positions_winning_moves_are_listed_by_threats(number):
    """Where the negamax cannot settle a move within the budget, a threat proof lists the course's
    winning moves at once: C5 (the file's answer) and C2 among them; not every move is proven."""
    pos, solver = course(number), GOMOKU.solver("outcome", backend="python")
    proven = {GOMOKU.square_name(m): solver.proven_move_value(pos, m) for m in pos.moves()}
    wins = {m for m, v in proven.items() if v == 1}
    assert {"C5", "C2"} <= wins and len(wins) >= 15
    assert None in proven.values()  # the rest is left to the negamax


def test_the_feedback_says_when_the_list_of_winning_moves_may_be_incomplete(tmp_path):
    """A position whose winning moves the run's budget did not all list (kept beside the file
    by an earlier run): a wrong answer's feedback names those settled, and says there may be more."""
    lab = tmp_path / "hard.gtp"
    lines = ["timelimit 30", "boardsize 7", "clear_board"]
    lines += [f"play {'BW'[i % 2]} {p}" for i, p in enumerate(COURSE_HARD[180].split())]
    lab.write_text("\n".join([*lines, "180 solve", "#?[b C5]"]) + "\n")
    solutions = Solutions(2)
    solutions.entries[key(course(180))] = Solution(1, {GOMOKU.parse_square("C5"): 1, GOMOKU.parse_square("C2"): 1,
                                                       GOMOKU.parse_square("D7"): -1}, gave_up=2)  # fmt: skip
    assert solutions.save(lab) is not None
    (tmp_path / "fixed.py").write_text(FIXED)
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(tmp_path / "fixed.py"), '["b D7"]']), "gtp")
    settings = RegressSettings(limits=Limits(wall_seconds=10), solve_seconds=2)
    (test,) = run_regress(engine, lab, GOMOKU, settings).tests
    assert (test.symbol, test.judged_by) == ("W", "solver")
    assert test.note == ("b is right, but D7 gives a loss; one of C2, C5 and perhaps others (the solver did not "
                         "settle every move within 2 s) achieves it")  # fmt: skip
    assert test.best == "C2, C5"


# 9x9, black to move: D5 E5 F5 is an open three (C5 or G5 makes an open four: black wins at once),
# but after A1 white blocks and the game goes on far beyond a second of search.
OPEN_THREE_9 = "D5 A9 E5 J9 F5 A8"


def open_three_9():
    nine = GOMOKU.sized(9)
    pos = nine.start()
    for point in OPEN_THREE_9.split():
        pos = pos.play(nine.parse_square(point))
    return pos


def test_a_move_the_budget_cannot_settle_is_remembered_for_the_next_program(tmp_path):
    """'b A1' on a 9x9 open three: black wins (C5 or G5), but A1's value the solver cannot
    settle in 1 s. The first program's search gives up (the file's answer decides); the run and
    the cache beside the file remember it, so a second program, and a later run, are judged the
    same way without searching it again."""
    lab = tmp_path / "hard.gtp"
    lines = ["timelimit 30", "boardsize 9", "clear_board"]
    lines += [f"play {'BW'[i % 2]} {p}" for i, p in enumerate(OPEN_THREE_9.split())]
    lab.write_text("\n".join([*lines, "180 solve", "#?[b C5|b G5]"]) + "\n")
    (tmp_path / "fixed.py").write_text(FIXED)
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(tmp_path / "fixed.py"), '["b A1"]']), "gtp")
    settings = RegressSettings(limits=Limits(wall_seconds=10), solve_seconds=1)
    solutions = Solutions.load(lab, 1)
    first = run_regress(engine, lab, GOMOKU, settings, solutions=solutions).tests[0]
    note = ("expected [b C5|b G5]; the grader's solver could not settle A1's value within 1 s "
            "(regress.solve_seconds in config.yaml): the file's answer decides")  # fmt: skip
    assert (first.symbol, first.judged_by, first.note) == ("-", "regex", note)
    pos, a1 = open_three_9(), GOMOKU.sized(9).parse_square("A1")
    entry = solutions.entries[key(pos)]
    assert entry.unsettled == {a1: 1.0} and a1 not in entry.moves
    second = run_regress(engine, lab, GOMOKU, settings, solutions=solutions).tests[0]
    assert (second.symbol, second.judged_by, second.note) == ("-", "regex", note)
    solutions.save(lab)
    kept = json.loads((tmp_path / "hard.gtp.solved.json").read_text())
    (cached,) = kept["positions"].values()
    assert cached["unsettled"] == {"A1": 1.0} and cached["value"] == 1
    later = Solutions.load(lab, 1)
    assert later.unsettled(pos, a1, 1.0)
    assert not later.unsettled(pos, a1, 5.0)  # a larger budget tries it again
