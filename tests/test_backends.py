"""Solver backends (native and python agree), the cost estimate, the speed plan and a run's
cached answers. The native tests skip when the C extension is not built."""

import json
import random
import subprocess
import sys

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.errors import GraderError
from grader.games import get_game
from grader.games import othello_native as native_solver
from grader.games.cost import deepest_within, duration, estimate, first_over
from grader.games.native import HOW_TO_BUILD, Extension
from grader.games.othello import OTHELLO, PLAIN, SCORINGS, WINNER_TAKES_EMPTIES, random_position
from grader.games.othello_solver import OthelloSolver
from grader.grading.plans import read_plan_file, speed_plan, standard_plan, write_plan_file
from grader.grading.report import class_table, grades_csv, levels_table, summary
from grader.grading.results import Settings
from grader.grading.run import grade
from grader.grading.runfolder import ANSWERS, RunFolder

from conftest import HANDOUT_BOARD, ROOT

NATIVE = native_solver.available()
needs_native = pytest.mark.skipif(not NATIVE, reason="C solver not built")
NOT_BUILT = Extension("grader._no_such_extension")  # as after an install without a compiler

try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # seeded random positions instead
    given = None


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# --- agreement ------------------------------------------------------------------------

_SOLVERS: dict = {}


def both(scoring):
    """One solver of each backend per rule, kept across examples (their tables too)."""
    if scoring not in _SOLVERS:
        _SOLVERS[scoring] = (OTHELLO.solver(scoring, backend="python"), OTHELLO.solver(scoring, backend="native"))
    return _SOLVERS[scoring]


def check_agreement(seed: int, empties: int, scoring: str) -> None:
    pos = random_position(random.Random(seed), empties)
    py, c = both(scoring)
    assert (c.value(pos), c.optimal_moves(pos)) == (py.value(pos), py.optimal_moves(pos)), (
        pos.board_string(),
        pos.token,
    )


if given is not None:

    @needs_native
    @settings(max_examples=120, deadline=None)
    @given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=14), st.sampled_from(SCORINGS))
    def test_backends_agree_on_random_positions(seed, empties, scoring):
        # 13-14 empties cost the Python solver about a second: hypothesis draws them rarely
        if empties >= 13 and seed % 8:
            empties = 12
        check_agreement(seed, empties, scoring)

else:

    @needs_native
    @pytest.mark.parametrize("scoring", SCORINGS)
    @pytest.mark.parametrize("seed", range(60))
    def test_backends_agree_on_random_positions(seed, scoring):
        check_agreement(seed, 1 + seed % 12 if seed % 20 else 13 + seed % 2, scoring)


@needs_native
def test_every_result_records_its_backend():
    pos = random_position(random.Random(1), 8)
    assert OTHELLO.solver(PLAIN, backend="native").analyze(pos).backend == "native"
    assert OTHELLO.solver(PLAIN, backend="python").analyze(pos).backend == "python"
    assert OTHELLO.solver(PLAIN).analyze(pos).backend == "native"  # auto: the fastest built


def test_backend_names_and_missing_backends(monkeypatch):
    ttt = get_game("tictactoe")
    assert ttt.backend("auto") == "python"
    with pytest.raises(GraderError, match="^tictactoe has only the python solver: drop --backend native"):
        ttt.solver("outcome", backend="native")
    with pytest.raises(GraderError, match="unknown solver backend 'fast'"):
        OTHELLO.backend("fast")
    monkeypatch.setattr(native_solver, "NATIVE", NOT_BUILT)  # as after an install without a compiler
    assert OTHELLO.backend("auto") == "python" and isinstance(OTHELLO.solver(PLAIN), OthelloSolver)
    with pytest.raises(GraderError, match="native solver is not built on this machine: install a C compiler"):
        OTHELLO.solver(PLAIN, backend="native")
    assert "not built" in OTHELLO.backend_note()


def test_the_games_load_no_c_extension_until_a_solver_asks_and_a_missing_one_says_how_to_build_it():
    """One loader for both C extensions: importing the games (every command that names one)
    loads neither; the first solver, or the first question whether it is built, loads it; one
    that cannot be imported says why, and how to build it."""
    probe = ("import sys, grader.games; from grader.games import gomoku_native, othello_native; "
             "print(sorted(m for m in sys.modules if m.startswith('grader._'))); "
             "print(othello_native.available(), sorted(m for m in sys.modules if m.startswith('grader._')))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0] == "[]", done.stdout + done.stderr
    assert lines[1] == ("True ['grader._othello_native']" if NATIVE else "False []")
    assert NOT_BUILT.available() is False and NOT_BUILT.missing() == HOW_TO_BUILD
    assert "grader._no_such_extension could not be imported (No module named" in (NOT_BUILT.unavailable_reason() or "")
    with pytest.raises(ImportError, match="could not be imported"):
        NOT_BUILT.load()


def test_cli_backend_lines(monkeypatch):
    r = invoke("solve", "x...o....", "x", "--game", "tictactoe", "--backend", "native")
    assert (
        r.exit_code == 1
        and r.output == "Error: tictactoe has only the python solver: drop --backend native (or use auto)\n"
    )
    monkeypatch.setattr(native_solver, "NATIVE", NOT_BUILT)
    board = random_position(random.Random(2), 6).board_string()
    r = invoke("solve", board, "x", "--backend", "native")
    assert (
        r.exit_code == 1 and "Error: the native solver is not built on this machine: install a C compiler" in r.output
    )
    r = invoke("solve", board, "x", "--json")
    assert r.exit_code == 0 and "Note: the native solver is not built" in r.output
    assert '"backend": "python"' in r.output


# --- FFO -------------------------------------------------------------------------------


@needs_native
def test_ffo_40_natively():
    from grader.grading.plans import read_boards

    from conftest import FFO_FILE

    entry = next(e for e in read_boards(FFO_FILE, OTHELLO) if e.label == "FFO #40")
    a = OTHELLO.solver(WINNER_TAKES_EMPTIES, backend="native").analyze(entry.position)
    assert (a.value, a.optimal_moves) == (entry.score, sorted(entry.best_moves))


# --- the cost estimate -------------------------------------------------------------------


def test_estimates_grow_with_empties_and_name_the_backend():
    small, large = estimate(OTHELLO, 10, "python"), estimate(OTHELLO, 30, "python")
    assert 0 < small.seconds < 1 < large.seconds
    assert large.describe().startswith("about") and "python solver at" in large.describe()
    assert 10 <= deepest_within(OTHELLO, 1.0, "python") <= 18
    assert deepest_within(get_game("tictactoe"), 1.0) is None  # no model: never refused
    assert first_over([random_position(random.Random(3), 30)], OTHELLO, "python", 60)[1].empties == 30
    assert first_over([random_position(random.Random(3), 8)], OTHELLO, "python", 60) is None
    assert duration(0.25) == "0.2 s" and duration(90) == "90 s" and duration(600) == "10 min"
    assert duration(1e12) == "more than 1000 years"


@needs_native
def test_native_estimate_is_honest_at_16_empties():
    """The model's median at 16 empties against real solves: within a factor of 5."""
    est = estimate(OTHELLO, 16, "native")
    solver = OTHELLO.solver(PLAIN, backend="native")
    nodes = []
    for pos in OTHELLO.random_positions(5, range(16, 17), 5):
        before = solver.nodes
        solver.analyze(pos)
        nodes.append(solver.nodes - before)
        solver.clear()
    median = sorted(nodes)[2]
    assert est.nodes / 5 < median < est.nodes * 5


def test_solve_refuses_beyond_max_seconds():
    board = random_position(random.Random(4), 40)
    r = invoke("solve", board.board_string(), board.token, "--max-seconds", "5")
    assert r.exit_code == 1
    line = r.output.strip()
    assert line.startswith("Error: the board has 40 empties: solving it would take") and "over --max-seconds 5" in line
    assert "\n" not in line


def test_grade_refuses_a_plan_the_grader_cannot_solve(tmp_path):
    deep = random_position(random.Random(5), 34)
    boards = tmp_path / "deep.txt"
    boards.write_text(f"{deep.board_string()} {deep.token}\n")
    r = invoke("grade", "submissions/negamax.py", "--boards", boards)
    assert r.exit_code == 1 and r.output.startswith("Error: test 1 has 34 empties: the grader would need about")
    assert "over max_solve_seconds (60 s in config.yaml)" in r.output and len(r.output.splitlines()) == 1
    r = invoke("gradescope", "--submission", tmp_path, "--results", tmp_path / "r.json", "--boards", boards)
    assert r.exit_code == 1 and "test 1 has 34 empties" in r.output


def test_adjudication_is_capped(monkeypatch):
    from grader.tournaments.settings import adjudication_cap

    cap = adjudication_cap(OTHELLO, 40, "python")
    assert cap < 40 and cap == deepest_within(OTHELLO, 1.0, "python")
    assert adjudication_cap(OTHELLO, 3, "python") == 3
    assert adjudication_cap(get_game("tictactoe"), 9) == 9


# --- the speed plan ---------------------------------------------------------------------------


def test_speed_plan_named_and_from_a_plan_file(tmp_path):
    plan = standard_plan(3, "othello", "speed")
    assert plan.empties == (11, 16) and [p.empties for p in plan.positions] == sorted(p.empties for p in plan.positions)
    assert {p.empties for p in plan.positions} == set(range(11, 17)) and len(plan.positions) == 30
    write_plan_file(plan, tmp_path / "s.plan")
    again = read_plan_file(tmp_path / "s.plan")
    assert again.positions == plan.positions and again.empties == (11, 16)
    short = tmp_path / "short.plan"
    short.write_text("format: grader-plan 1\nplan: full\ngame: othello\nempties: 12-13\nseed: 4\n")
    made = read_plan_file(short)
    assert made.empties == (12, 13) and made.positions == speed_plan((12, 13), 4).positions
    short.write_text("format: grader-plan 1\nplan: full\nempties: 13-12\n")
    with pytest.raises(GraderError, match="short.plan: bad empties '13-12'"):
        read_plan_file(short)
    short.write_text("format: grader-plan 1\nplan: full\nempties: 12-13\n")
    with pytest.raises(GraderError, match="short.plan: a speed plan without its tests needs 'seed'"):
        read_plan_file(short)
    r = invoke("plan", "new", "--seed", "4", "--empties", "12-13", "--out", tmp_path / "new.plan")
    assert r.exit_code == 0 and read_plan_file(tmp_path / "new.plan").positions == made.positions


def test_speed_run_reports_levels_and_caches_answers(tmp_path):
    plan = speed_plan((3, 5), seed=2, per_level=2)
    settings = Settings(jobs=2, backend="python")
    result = grade("submissions/negamax.py", plan, settings, out=tmp_path / "run")
    levels = result.levels()
    assert [(lv.empties, lv.tests) for lv in levels] == [(3, 2), (4, 2), (5, 2)]
    assert all(lv.right == 2 and lv.median_seconds > 0 for lv in levels)
    assert result.deepest == 5 and result.to_json()["deepest"] == 5
    assert "deepest level: 5 empties" in summary(result)
    assert "empties" in levels_table(result)
    folder = RunFolder.open(tmp_path / "run")
    results = folder.results()
    assert "deepest" in class_table(results).splitlines()[0]
    assert grades_csv(results).splitlines()[0].startswith("name,total,max,deepest,")
    assert grades_csv(results).splitlines()[1].split(",")[3] == "5"
    assert json.loads((tmp_path / "run" / "results.json").read_text())["scripts"][0]["deepest"] == 5
    assert results[0].backend == "python" and folder.meta["settings"]["backend"] == "python"
    # each board solved once, sealed; a changed line is dropped and solved again
    lines = (tmp_path / "run" / ANSWERS).read_text().splitlines()
    assert len(lines) == 6
    cached = folder.answers(plan, settings.scoring or PLAIN)
    assert sorted(cached) == list(range(6))
    forged = json.loads(lines[0])
    forged["value"] = 99
    (tmp_path / "run" / ANSWERS).write_text("\n".join([json.dumps(forged), *lines[1:]]) + "\n")
    assert sorted(folder.answers(plan, PLAIN)) == [i for i in range(6) if i != forged["test"] - 1]


def test_not_a_speed_plan_has_no_deepest_column():
    plan = standard_plan(1)
    assert plan.empties is None


def test_othello_has_its_solvers_however_it_is_imported():
    """A fresh interpreter that imports only the Othello module can solve (the solver modules
    give Othello its backends when the games package loads, not when a registry call runs)."""
    import subprocess
    import sys

    code = ("from grader.games.othello import OTHELLO; "
            "print(OTHELLO.backends()[-1], OTHELLO.solver('plain').value(OTHELLO.parse(" + repr(HANDOUT_BOARD) + ", 'x')))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["python", "18"], done.stderr
