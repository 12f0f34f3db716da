"""The Gomoku lab as a course runs it: a program in the layout of the course's Assignment 2
starter code (tests/gomoku_lab: Gomoku.py, gtp_connection.py, board.py, solver.py, importing
numpy), run as the README shows ('python3 Gomoku.py'), on regression files in the style of the
course's public tests ('#?[unknown]' tests included). Every position's answer is checked a
second way: brute force (reference_gomoku) or the rules alone (a five to make or block)."""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.engines.interpreters import find_interpreter
from grader.engines.programs import PYTHON, ProtocolEngine
from grader.games import gomoku_native
from grader.games.gomoku import GOMOKU
from grader.limits import Limits
from grader.regression.format import parse_regress, public_tests
from grader.regression.gradescope import regress_results_json
from grader.regression.regress import run_regress
from grader.regression.results import RegressSettings, StudentRegress
from grader.regression.solutions import Solutions

from reference_gomoku import value as brute_value
from reference_gomoku import winner as brute_winner
from test_gomoku import FIXED, WHITE_FOUR, played, wins_at_once

LAB = Path(__file__).parent / "gomoku_lab"

# White to move: black's C4-F4 is open at both ends (B4, G4): white cannot block both, and has
# no five of its own to make: black wins ('b', no move), whatever white plays.
OPEN_FOUR_B = "b C4,w C3,b D4,w D3,b E4,w E3,b F4"
# 5x5, black to move, 9 empty points: its value by brute force below.
SMALL = "b A1,w B1,b C1,w D1,b E2,w A2,b B3,w C3,b D3,w E3,b A4,w B4,b C5,w D5,b E5,w A5"


def setup_lines(stones: str, size: int = 7) -> list[str]:
    return [f"boardsize {size}", "clear_board", *(f"play {s}" for s in stones.split(","))]


def course_style_file(path: Path) -> Path:
    """A file in the layout of the course's public tests: a 'timelimit' test answered by '',
    easy positions, a genmove, then the empty 5x5 board, which the course expects 'unknown' of."""
    lines = ["#test 00 and 10 are easy", "00 timelimit 1", "#?[]", *setup_lines(OPEN_FOUR_B)[1:], "10 solve",
             "#?[b]", "play W F3", "play B A1", "20 solve", "#?[w B3|w G3]", "30 genmove w", "#?[B3|G3]", "",
             "#test 40 is hard", "timelimit 1", "boardsize 5", "40 solve", "#?[unknown]"]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path


def fives(board: str, token: str, size: int = 7) -> set[str]:
    """The empty points where ``token`` would make five, by scanning every line (brute force)."""
    rules = GOMOKU.sized(size)
    return {rules.square_name(i) for i, ch in enumerate(board)
            if ch == "." and brute_winner(board[:i] + token + board[i + 1 :], size, 5, True) == token}  # fmt: skip


def test_the_course_style_positions_are_what_the_rules_and_brute_force_say():
    pos = played(OPEN_FOUR_B)  # white to move, no five to make; black has two: white blocks one, black wins
    assert pos.token == "o" and not fives(pos.board_string(), "o") and fives(pos.board_string(), "x") == {"B4", "G4"}
    assert wins_at_once(played(WHITE_FOUR)) == {"B3", "G3"}  # tests 20 and 30
    small = GOMOKU.sized(5)
    board = small.start().board_string()
    for play in SMALL.split(","):
        sq = small.parse_square(play.split()[1])
        board = board[:sq] + ("x" if play[0] == "b" else "o") + board[sq + 1 :]
    assert brute_value(board, "x", 5, 5, True) == 0  # a draw: 'draw' and a drawing move


# --- the interpreter: the user's python3, with its packages ---------------------------------------


@pytest.fixture(scope="session")
def venvs(tmp_path_factory):
    """Two virtual environments made by the tests: 'with' has numpy in its own site-packages
    (linked from the installed numpy), 'without' has none. numpy is a test dependency because
    the course's programs import it."""
    numpy = pytest.importorskip("numpy", reason="numpy (the course's programs import it) is not installed")
    base = getattr(sys, "_base_executable", sys.executable)
    made = {}
    for name in ("with", "without"):
        folder = tmp_path_factory.mktemp("venvs") / name
        subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
        made[name] = folder
    site = next((made["with"] / "lib").glob("python3*/site-packages"))
    installed = Path(numpy.__file__).parent
    for part in (installed, installed.with_name("numpy.libs")):
        if part.exists():
            (site / part.name).symlink_to(part)
    return made


def on_path(monkeypatch, venv: Path) -> None:
    """The virtual environment first on PATH, as its activation does."""
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))


def lab_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "a2"
    shutil.copytree(LAB, folder)
    course_style_file(tmp_path / "a2-tests.gtp")
    return folder


def test_python3_in_the_command_is_the_users_with_its_packages(tmp_path, monkeypatch, venvs):
    """'python3 Gomoku.py' runs the python3 the user's shell finds (their virtual environment,
    numpy in its own site-packages), not the sandbox's /usr/bin/python3; the header names it."""
    on_path(monkeypatch, venvs["with"])
    monkeypatch.chdir(lab_folder(tmp_path))
    out = CliRunner().invoke(main, ["regress", "python3 Gomoku.py", "../a2-tests.gtp", "--json", "../r.json"])
    assert out.exit_code == 0, out.output
    found = find_interpreter(str(venvs["with"] / "bin" / "python3"))
    assert found is not None and f"Python {found.describe()}" in out.output.splitlines()[0]
    tests = json.loads((tmp_path / "r.json").read_text())[0]["tests"]
    assert [(t["number"], t["symbol"]) for t in tests] == [(0, "+"), (10, "+"), (20, "+"), (30, "+"), (40, "+")], tests
    assert tests[-1]["note"] == "unknown, as the file expects"


def test_a_program_whose_python_lacks_numpy_cannot_start_and_every_tool_says_so(tmp_path, monkeypatch, venvs):
    on_path(monkeypatch, venvs["without"])
    folder = lab_folder(tmp_path)
    monkeypatch.chdir(folder)
    out = CliRunner().invoke(main, ["regress", "python3 Gomoku.py", "../a2-tests.gtp"])
    # the program's traceback, in a note; exit 1: no test got an answer (as grade's 'no legal move')
    assert out.exit_code == 1 and "Traceback (most recent" in out.output, out.output
    found = find_interpreter("python3")
    assert found is not None and found.executable.startswith(str(venvs["without"]))
    assert (f"stopped at start-up, before line 2 (timelimit 1): the program could not start under Python "
            f"{found.describe()}: crashed: it exited with code 1") in out.output  # fmt: skip
    assert "ModuleNotFoundError: No module named 'numpy'" in out.output and "0.0/100" in out.output
    # the presubmission check, with the course's Python set in config.yaml (a venv's folder)
    (folder / "config.yaml").write_text(f"python: {venvs['without']}\n")
    out = CliRunner().invoke(main, ["check", "Gomoku.py", "--game", "gomoku"])
    assert out.exit_code == 1 and "your program could not start" in out.output, out.output
    assert f"could not start under Python {found.describe()}" in out.output
    out = CliRunner().invoke(main, ["doctor", "--no-attacks"])
    assert f"python3 in a command (the first on PATH): {found.describe()}" in out.output, out.output


def test_the_course_python_setting_names_a_virtual_environment(tmp_path, monkeypatch, venvs):
    """config.yaml's python: a venv's folder; a bare .py file runs with it, numpy and all."""
    folder = lab_folder(tmp_path)
    monkeypatch.chdir(folder)
    (folder / "config.yaml").write_text(f"python: {venvs['with']}\n")
    out = CliRunner().invoke(main, ["regress", "Gomoku.py", "../a2-tests.gtp"])
    assert out.exit_code == 0 and "5 tests counted (every test), 100.0/100" in out.output, out.output
    assert str(venvs["with"] / "bin" / "python3") in out.output.splitlines()[0]


def test_a_file_argument_outside_the_programs_folder_is_no_crash(tmp_path):
    """'python3 /path/prog/Gomoku.py /path/lab.gtp': the argument stays where it is (it had
    raised ValueError from relative_to)."""
    folder = lab_folder(tmp_path)
    lab = tmp_path / "a2-tests.gtp"
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(folder / "Gomoku.py"), str(lab)]), "gtp")
    assert engine.argv[1] == "{dir}/Gomoku.py" and engine.argv[2] == str(lab)
    result = run_regress(engine, lab, GOMOKU, RegressSettings(limits=Limits(wall_seconds=5)))
    assert result.symbols == "+++++", result.tests


# --- the answer: everything up to the blank line ------------------------------------------------


@pytest.mark.parametrize("stones", [OPEN_FOUR_B, WHITE_FOUR, "b A1"])  # b; w B3; unknown (one second)
def test_an_answer_of_two_lines_is_wrong_whatever_its_first_line(tmp_path, stones):
    """The course's program printing the side to move after its answer: 'b', 'w B3' and
    'unknown', each then 'w' or 'b', are all wrong, by one rule said in the note."""
    lab = tmp_path / "one.gtp"
    lab.write_text("\n".join(["timelimit 1", *setup_lines(stones), "10 solve", "#?[.*]"]) + "\n")
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(LAB / "Gomoku.py"), "--toplay"]), "gtp")
    settings = RegressSettings(limits=Limits(wall_seconds=5), solve_seconds=0.5)  # the rule needs no solving
    test = run_regress(engine, lab, GOMOKU, settings).tests[0]
    assert (test.symbol, test.judged_by) == ("-", "rule"), test
    assert test.note.startswith("the answer is everything up to the blank line, here 2 lines")


# --- '#? [unknown]' tests ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, symbol, note",
    [
        ("unknown", "+", "unknown, as the file expects"),
        ("draw A3", "+", "draw A3 is right"),  # brute force: a draw, and A3 keeps it
        ("b A3", "-", "said b; the winner is draw"),
    ],
)
def test_where_the_file_expects_unknown_a_result_is_judged_by_the_solver(tmp_path, answer, symbol, note):
    small = GOMOKU.sized(5)
    pos = small.start()
    board = pos.board_string()
    for play in SMALL.split(","):
        sq = small.parse_square(play.split()[1])
        board = board[:sq] + ("x" if play[0] == "b" else "o") + board[sq + 1 :]
    a3 = small.parse_square("A3")
    assert brute_value(board[:a3] + "x" + board[a3 + 1 :], "o", 5, 5, True) == 0  # A3 draws, a second way
    lab = tmp_path / "u.gtp"
    lab.write_text("\n".join([*setup_lines(SMALL, 5), "10 solve", "#?[unknown]"]) + "\n")
    (tmp_path / "f.py").write_text(FIXED)
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(tmp_path / "f.py"), json.dumps([answer])]), "gtp")
    test = run_regress(engine, lab, GOMOKU, RegressSettings(limits=Limits(wall_seconds=5))).tests[0]
    assert (test.symbol, test.credit) == (symbol, 1.0 if symbol == "+" else 0.0)
    assert test.note.startswith(note), test.note


def test_a_result_the_solver_cannot_settle_where_unknown_is_expected_is_unverified(tmp_path):
    """The empty 9x9 board (the course's test 170): 'b E5' is neither confirmed nor wrong."""
    lab = tmp_path / "u.gtp"
    lab.write_text("timelimit 1\nboardsize 9\n170 solve\n#?[unknown]\n")
    (tmp_path / "f.py").write_text(FIXED)
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(tmp_path / "f.py"), json.dumps(["b E5"])]), "gtp")
    settings = RegressSettings(limits=Limits(wall_seconds=5), solve_seconds=0.3, unverified_credit=0.25)
    test = run_regress(engine, lab, GOMOKU, settings).tests[0]
    assert (test.symbol, test.credit) == ("v", 0.25), test
    assert test.note == (
        "unverified: the file expects unknown; the grader's solver could not settle this position within 0.3 s "
        "(regress.solve_seconds in config.yaml)"
    )


# --- what counts: a 'timelimit' answered with text -----------------------------------------------


def test_a_timelimit_answered_with_text_fails_unless_only_solve_and_genmove_count(tmp_path, monkeypatch):
    folder = lab_folder(tmp_path)
    monkeypatch.chdir(folder)
    command = f"{shlex.quote(sys.executable)} Gomoku.py --chatty"
    out = CliRunner().invoke(main, ["regress", command, "../a2-tests.gtp"])
    assert out.exit_code == 0, out.output
    assert "max time has changed to 1 s" in out.output and "5 tests counted (every test), 80.0/100" in out.output
    out = CliRunner().invoke(main, ["regress", command, "../a2-tests.gtp", "--count", "solve-genmove"])
    assert "4 tests counted (the solve and genmove tests), 100.0/100" in out.output, out.output


# --- each position solved once per run, kept beside the file ---------------------------------------


def test_a_position_is_solved_once_however_many_programs_ask(tmp_path):
    pos = played(WHITE_FOUR)
    solver = GOMOKU.solver("outcome")
    solutions = Solutions(30)
    first = solutions.solve(solver, pos)
    nodes = solver.nodes
    again = solutions.solve(solver, pos)
    assert again is first and solver.nodes == nodes and first.value == 1
    assert {GOMOKU.square_name(m) for m in first.best or ()} == wins_at_once(pos)


def test_the_solutions_kept_beside_the_file_are_read_by_the_next_run(tmp_path):
    lab = tmp_path / "lab.gtp"
    lab.write_text("\n".join([*setup_lines(WHITE_FOUR), "10 solve", "#?[w B3|w G3]"]) + "\n")
    (tmp_path / "f.py").write_text(FIXED)
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(tmp_path / "f.py"), '["w B3"]']), "gtp")
    settings = RegressSettings(limits=Limits(wall_seconds=5))
    assert run_regress(engine, lab, GOMOKU, settings).symbols == "+"
    cache = tmp_path / "lab.gtp.solved.json"
    data = json.loads(cache.read_text())
    (entry,) = data["positions"].values()
    assert entry["value"] == 1 and entry["moves"]["B3"] == 1 and sorted(entry["best"]) == ["B3", "G3"]
    # the next run takes the kept answer without solving: changed here, it changes the verdict
    entry["moves"]["B3"] = 0
    cache.write_text(json.dumps(data))
    assert run_regress(engine, lab, GOMOKU, settings).symbols == "W"
    # kept by another version of the grader: not read (solved again, and right)
    data["grader"] = "0.0.1"
    cache.write_text(json.dumps(data))
    assert run_regress(engine, lab, GOMOKU, settings).symbols == "+"


# --- plan regress: the budget regress judges with -------------------------------------------------


@pytest.mark.slow
def test_plan_regress_leaves_out_what_the_budget_cannot_settle_and_says_so(tmp_path, monkeypatch):
    """One budget (regress.solve_seconds) for plan regress and regress: a position of 40 empty
    points is beyond 0.1 s on any machine, one of 4 within it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("regress:\n  solve_seconds: 0.1\n")
    out = CliRunner().invoke(main, ["plan", "regress", "--empties", "4-40", "--per-level", "1", "--seed", "3",
                                    "--out", "lab.gtp"])  # fmt: skip
    assert out.exit_code == 0, out.output
    warning = next(line for line in out.output.splitlines() if line.startswith("Warning: "))
    assert warning.endswith("40 empty points) were left out: the solver could not settle them within 0.1 s each "
                            "(regress.solve_seconds in config.yaml), nor could regress judge them"), warning  # fmt: skip
    text = (tmp_path / "lab.gtp").read_text()
    tests = [c for c in parse_regress(text, "lab") if c.number]
    left_out = int(warning.split()[1])
    assert len(tests) == 37 - left_out and "# grader: public tests none" in text and public_tests(text) == frozenset()
    cached = json.loads((tmp_path / "lab.gtp.solved.json").read_text())["positions"]
    assert sum("best" in e for e in cached.values()) == len(tests)  # what regress needs, kept for it
    first = [c.line for c in parse_regress(text, "lab") if c.text == "clear_board"][0]
    plays = [c for c in parse_regress(text, "lab") if c.line > first][: 49 - 4]
    assert all(c.text.startswith("play") for c in plays)  # the first test kept is a 4-empty position


def test_plan_regress_with_nothing_it_can_settle_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("regress:\n  solve_seconds: 0.1\n")
    out = CliRunner().invoke(main, ["plan", "regress", "--empties", "40", "--per-level", "2", "--seed", "1",
                                    "--out", "lab.gtp"])  # fmt: skip  # a seed whose positions no threat settles
    assert out.exit_code == 1 and out.output == (
        "Error: none of the 2 positions drawn could be solved within 0.1 s each (regress.solve_seconds in "
        "config.yaml): choose fewer empty points, or raise the budget\n"
    ), out.output
    assert not (tmp_path / "lab.gtp").exists()


def test_gradescope_gives_a_test_that_does_not_count_no_points(tmp_path, monkeypatch):
    folder = lab_folder(tmp_path)
    command = shlex.join([PYTHON, str(folder / "Gomoku.py"), "--chatty"])
    engine = ProtocolEngine.from_command(command, "gtp")
    settings = RegressSettings(limits=Limits(wall_seconds=5), count="solve-genmove")
    result = run_regress(engine, tmp_path / "a2-tests.gtp", GOMOKU, settings)
    assert result.symbols == "-++++" and result.total == 100
    data = regress_results_json(StudentRegress("ann", command, [result]), [None], 1.0)
    assert [(t["score"], t["max_score"]) for t in data["tests"]] == [(0, 0), (1.0, 1), (1.0, 1), (1.0, 1), (1.0, 1)]
    assert data["tests"][0]["output"] == "- (0), not counted" and data["score"] == 100


def test_an_interpreters_folders_never_include_a_project_folder_on_its_path(tmp_path):
    """A .pth naming a folder outside the interpreter's install (a legacy editable install's
    project, which may hold private files) puts it on sys.path, but the sandbox is not shown it."""
    venv, project = tmp_path / "venv", tmp_path / "project"
    project.mkdir()
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "legacy-editable.pth").write_text(f"{project}\n")
    python = venv / "bin" / "python3"
    on_path = subprocess.run([str(python), "-c", "import sys; print(sys.path)"], capture_output=True, text=True)
    assert str(project) in on_path.stdout  # the interpreter itself sees it
    found = find_interpreter(str(python))
    assert found is not None and str(site) in found.folders and str(venv / "pyvenv.cfg") in found.folders
    assert not any(f == str(project) or f.startswith(f"{project}/") for f in found.folders)


# 5x5, white to move: a draw, but C2, D2, A3, C4 and A5 lose (brute force below)
DRAWN = "b A1,w B1,b D1,w C1,b E1,w A2,b B3,w D3,b C3,w A4,b E3,w B4,b D4,w B5,b E4,w C5,b D5"


def test_a_program_naming_a_losing_move_in_a_drawn_position_gets_the_winner_only(tmp_path):
    """The real bug the grader caught: 'draw' is right, the move is not (W, half credit)."""
    small = GOMOKU.sized(5)
    board = small.start().board_string()
    for play in DRAWN.split(","):
        sq = small.parse_square(play.split()[1])
        board = board[:sq] + ("x" if play[0] == "b" else "o") + board[sq + 1 :]
    values = {small.square_name(m): -brute_value(board[:m] + "o" + board[m + 1 :], "x", 5, 5, True)
              for m, ch in enumerate(board) if ch == "."}  # fmt: skip
    assert brute_value(board, "o", 5, 5, True) == 0
    assert {m for m, v in values.items() if v < 0} == {"C2", "D2", "A3", "C4", "A5"}
    lab = tmp_path / "d.gtp"
    lab.write_text("\n".join(["timelimit 5", *setup_lines(DRAWN, 5), "10 solve", "#?[draw B2|draw E2|draw E5]"]))
    engine = ProtocolEngine.from_command(shlex.join([PYTHON, str(LAB / "Gomoku.py"), "--loser"]), "gtp")
    test = run_regress(engine, lab, GOMOKU, RegressSettings(limits=Limits(wall_seconds=10))).tests[0]
    move = test.answer.split()[1] if test.answer else ""
    assert test.symbol == "W" and values.get(move) == -1, test
    assert test.note == f"draw is right, but {move} gives a loss; one of B2, E2, E5 achieves it"


# --- the course's public file (tests/data, as the course ships it) ------------------------------------

COURSE_FILE = Path(__file__).parent / "data" / "assignment2-public-tests.gtp"
needs_native = pytest.mark.skipif(not gomoku_native.available(), reason="the C solver is not built")


@needs_native
@pytest.mark.parametrize(
    "answer, symbol, note",
    [
        ("draw A1", "+", "draw A1 is right (any of A1, B1, "),  # a draw, and every first move keeps it
        ("b A1", "-", "said b; the winner is draw (A1, B1, "),
        ("draw", "W", "draw is right, but no move: one of A1, B1, "),
        ("unknown", "+", "unknown, as the file expects"),
    ],
)
def test_the_empty_5x5_board_of_the_course_is_judged_by_the_solver(tmp_path, monkeypatch, answer, symbol, note):
    """The course's test 160 ('boardsize 5', then 'solve' on the empty board, the file expecting
    'unknown'): a result is judged by the solver through 'grader regress', never unverified."""
    monkeypatch.chdir(tmp_path)
    lines = COURSE_FILE.read_text().splitlines()
    start = lines.index("#test 160, 170, ..., 200 are hard")
    (tmp_path / "hard.gtp").write_text("\n".join(lines[start : start + 5]) + "\n")  # timelimit 5, boardsize 5, 160
    (tmp_path / "f.py").write_text(FIXED)
    command = shlex.join([PYTHON, "f.py", json.dumps([answer])])
    out = CliRunner().invoke(main, ["regress", command, "hard.gtp", "--json", "r.json"])
    assert out.exit_code == 0, out.output
    (test,) = json.loads((tmp_path / "r.json").read_text())[0]["tests"]
    assert (test["number"], test["symbol"]) == (160, symbol) and test["note"].startswith(note), test
    assert test["judged_by"] == ("regex" if answer == "unknown" else "solver")


# What a correct program answers to each solve and genmove test of the course's file (a move where
# the side to move wins or draws; 'unknown' on the empty 9x9 board, which no solver settles).
COURSE_ANSWERS = ["b", "b", "draw G5", "b A3", "A3", "draw G1", "b", "draw G3", "b C1", "C1", "b", "w B3", "B3",
                  "w D2", "D2", "draw A1", "unknown", "b C5", "b C2", "b G1"]  # fmt: skip


@needs_native
def test_the_course_file_is_judged_by_the_solver_up_to_7x7(tmp_path, monkeypatch):
    """The course's whole public file, as a class's first run meets it: every position up to
    7x7 settled, every move's value known, so each answer is judged by the solver (none
    unverified), the moves the file's regex does not name (C2, G1 in tests 190 and 200) included."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(COURSE_FILE, tmp_path / "a2.gtp")
    (tmp_path / "f.py").write_text(FIXED)
    (tmp_path / "config.yaml").write_text("regress:\n  solve_seconds: 120\n")  # a guard on a loaded machine
    command = shlex.join([PYTHON, "f.py", json.dumps(COURSE_ANSWERS)])
    out = CliRunner().invoke(main, ["regress", command, "a2.gtp", "--json", "r.json"])
    assert out.exit_code == 0 and "21 tests counted (every test), 100.0/100" in out.output, out.output
    tests = json.loads((tmp_path / "r.json").read_text())[0]["tests"]
    assert [t["symbol"] for t in tests] == ["+"] * 21
    judged = {t["number"]: t["judged_by"] for t in tests}
    assert judged.pop(0) == "regex" and judged.pop(170) == "regex"  # 'timelimit', and 'unknown' as expected
    assert set(judged.values()) == {"solver"}
    cache = json.loads((tmp_path / "a2.gtp.solved.json").read_text())["positions"]
    boards = {k.split()[1]: e for k, e in cache.items()}
    hard = [e for b, e in boards.items() if len(b) == 49 and b.count("x") == 4 and b.count("o") == 4]
    assert len(hard) == 3 and all(e["value"] == 1 and len(e["moves"]) == 41 and "unsettled" not in e for e in hard)
