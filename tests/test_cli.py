"""The ``grader`` command as a user sees it."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.engines import isolation
from grader.games import get_game

from conftest import FFO20, HANDOUT_BOARD, ROOT

ISOLATION = f"isolation {isolation.choose('auto', sys.executable)} (auto)"
SOLVER = f"{get_game('othello').backend()} solver"  # the exact solver behind the answers: native if built


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no config.yaml here: built-in defaults

    def invoke(*args):
        return CliRunner().invoke(main, [str(a) for a in args])

    return invoke


def test_solve_text(run):
    result = run("solve", HANDOUT_BOARD, "x", "--all")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[:18] == [
        "  a b c d e f g h",
        "1 x x x x x x o +",
        "2 x x x x x o + .",
        "3 x x o o o o o o",
        "4 x o x x o o o o",
        "5 x o x x o o o o",
        "6 x x x o x o o o",
        "7 x x o * o x o o",
        "8 x o o o o o o o",
        "x to move, 4 empties, scoring plain  (* optimal move, + other legal move)",
        "value:         +18",
        "optimal moves: 51 (d7)",
        "line:          51 (d7), pass, 7 (h1), pass, 14 (g2), pass, 15 (h2)",
        "lab format:    score 18 15 -1 14 -1 7 -1 51",
        "  move  square      value",
        "------  --------  -------",
        "    51  d7            +18",
        "     7  h1             -1",
    ]
    assert lines[-1].startswith("solved in ") and lines[-1].endswith(" nodes")


def test_solve_json(run):
    result = run("solve", HANDOUT_BOARD.upper(), "X", "--json", "--all")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert list(data) == [
        "board",
        "token",
        "scoring",
        "value",
        "optimal_moves",
        "line",
        "move_values",
        "nodes",
        "seconds",
        "backend",
    ]
    assert data["board"] == HANDOUT_BOARD and data["token"] == "x" and data["scoring"] == "plain"
    assert data["value"] == 18 and data["optimal_moves"] == [51]
    assert data["line"] == [51, -1, 7, -1, 14, -1, 15]
    assert data["move_values"] == {"7": -1, "14": -1, "51": 18}
    assert data["nodes"] > 0 and data["seconds"] >= 0
    assert "move_values" not in json.loads(run("solve", HANDOUT_BOARD, "x", "--json").output)


def test_solve_boards_file_json_list_and_scoring(run, tmp_path):
    f = tmp_path / "boards.txt"
    f.write_text(f"# two positions\n{HANDOUT_BOARD} x\n20|{FFO20}|X|6|h5|+6|src\n")
    plain = json.loads(run("solve", "--boards", f, "--json").output)
    wte = json.loads(run("solve", "--boards", f, "--json", "--scoring", "winner-takes-empties").output)
    assert [d["value"] for d in wte] == [18, 6]
    assert [d["scoring"] for d in plain] == ["plain", "plain"]
    assert plain[1]["value"] == 1  # FFO 20 ends with 5 empties that plain scoring gives no one
    assert plain[1]["line"] == [39]


def test_solve_boards_text_checks_ffo_answers(run, tmp_path):
    f = tmp_path / "ffo.txt"
    f.write_text(f"20|{FFO20}|X|6|h5|+6|src\n")
    out = run("solve", "--boards", f, "--scoring", "winner-takes-empties").output
    assert "FFO #20\n" in out and "file says:     +6 h5 (matches)" in out
    out = run("solve", "--boards", f).output
    assert "use --scoring winner-takes-empties to compare" in out


def test_scoring_from_config(run, tmp_path):
    (tmp_path / "config.yaml").write_text("scoring: winner-takes-empties\n")
    data = json.loads(run("solve", FFO20.replace("-", "."), "x", "--json").output)
    assert data["scoring"] == "winner-takes-empties" and data["value"] == 6


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["solve", "xx", "x"], 1, "Error: board has 2 characters, expected 64 ('.', 'x' or 'o' each)"),
        (["solve", HANDOUT_BOARD, "q"], 1, "Error: bad token 'q': the side to move must be 'x' or 'o'"),
        (["solve"], 2, "Error: give a BOARD and a TOKEN (x or o), or --boards FILE"),
        (["solve", HANDOUT_BOARD], 2, "Error: give a BOARD and a TOKEN (x or o), or --boards FILE"),
        (
            ["solve", "--boards", "missing.txt"],
            1,
            "Error: board file 'missing.txt' not found: give the path of an existing file",
        ),
        (
            ["solve", HANDOUT_BOARD, "x", "--boards", "b.txt"],
            2,
            "Error: give either BOARD TOKEN or --boards FILE, not both",
        ),
        (
            ["solve", HANDOUT_BOARD, "x", "--config", "nope.yaml"],
            1,
            "Error: config file 'nope.yaml' not found: check the path given to --config",
        ),
        (
            ["solve", HANDOUT_BOARD, "x", "--scoring", "odd"],
            1,
            "Error: othello has no scoring rule 'odd': use one of plain, winner-takes-empties",
        ),
        (
            ["solve", "x...o....", "x", "--game", "chess"],
            1,
            "Error: unknown game 'chess': installed games are gomoku, othello, tictactoe",
        ),
        (
            ["solve", "x...o....", "x"],
            1,
            "Error: board has 9 characters, expected 64 ('.', 'x' or 'o' each) (it is a tictactoe board: use --game tictactoe)",
        ),
        (
            ["solve", "xx.......", "o", "--game", "tictactoe"],
            1,
            "Error: this board cannot arise in play: 2 x and 0 o (x moves first, so x has as many marks as o, or one more)",
        ),
        (
            ["solve", "x........", "x", "--game", "tictactoe"],
            1,
            "Error: wrong token 'x': on this board it is o's turn (1 x, 0 o)",
        ),
        (
            ["solve", "xxxooo...", "x", "--game", "tictactoe"],
            1,
            "Error: this board cannot arise in play: both sides have three in a row",
        ),
    ],
)
def test_errors_are_one_line(run, args, code, message):
    result = run(*args)
    assert result.exit_code == code
    assert message in result.output
    assert "Traceback" not in result.output
    if code == 1:
        assert result.output.strip() == message


def test_bad_config_value_is_one_line(run, tmp_path):
    (tmp_path / "config.yaml").write_text("scoring: lab\n")
    result = run("solve", HANDOUT_BOARD, "x")
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: config.yaml: 'scoring' must be one of plain, winner-takes-empties (for othello), or null; got 'lab'"
    )


def test_python_dash_m_and_bundled_examples():
    result = subprocess.run(
        [sys.executable, "-m", "grader", "solve", "--boards", "fixtures/examples.txt", "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    data = json.loads(result.stdout)
    assert [d["value"] for d in data] == [18, 1, -2]


# --- grader grade ----------------------------------------------------------------

GRADE_TEXT = """\
Grading canned.py: 3 tests (boards from b.txt), time limit 10 s, 2 jobs, scoring plain, ISOLATION, SOLVER
mt+
canned.py: 1.5/3  (3 tests run, boards from b.txt, X s)
symbols: + 1  M 0  Q 0  T 0  m 1  s 0  - 0  t 1

Most offending tests:

Test 2: x to move, 4 empties: t (0)
board xxxxxxo.xxxxxo..xxooooooxoxxooooxoxxooooxxxoxoooxxo.oxooxooooooo x
  a b c d e f g h
1 x x x x x x o @
2 x x x x x o . .
3 x x o o o o o o
4 x o x x o o o o
5 x o x x o o o o
6 x x x o x o o o
7 x x o * o x o o
8 x o o o o o o o
  (* optimal move, @ the script's move)
printed:  no score line
move:     7 (last integer, in "My move is 7")
exact:    value +18; optimal moves 51 (d7)
verdict:  move 7 (h1) is legal but loses 19 discs: it gives -1, best is 51 (d7) (+18); no score line

Test 1: o to move, 5 empties: m (1/2)
board .x.o.o.oxxooooooxoooooxoxooxxoxoxoxooxooxxooxxxoxoo.xxoooooooooo o
  a b c d e f g h
1 . x . o . o . o
2 x x o o o o o o
3 x o o o o o x o
4 x o o x x o x o
5 x o x o o x o o
6 x x o o x x x o
7 x o o * x x o o
8 o o o o o o o o
  (* optimal move)
printed:  "Min score: 36; move sequence: [0, 2, 4, 6, 51]"
          score +36; line, forward: 51 (d7), 6 (g1), 4 (e1), 2 (c1), 0 (a1)
move:     51 (last integer, in "Min score: 36; move sequence: [0, 2, 4, 6, 51]")
exact:    value +38; optimal moves 51 (d7)
verdict:  move 51 (d7) is optimal (+38); claimed score +36 but perfect play gives +38; line goes wrong at ply 2: \
after 51 (d7), x plays 6 (g1) (+44) but 4 (e1) holds o to +38

"""


@pytest.fixture
def graded_folder(tmp_path):
    """A canned script answering three boards: an 'm', a 't' and a '+'."""
    import shutil

    from test_judge import BOARD, TOKEN, VALUE, bad_line, lab

    fixed2 = "oxxxxxx.ooxoxxoooxooxoooooxxxoooooxxoxoooxooxoooooxxxxo.ooxooooo"
    shutil.copy(ROOT / "tests" / "scripts" / "canned.py", tmp_path / "canned.py")
    spec = {
        f"{BOARD} {TOKEN}": {"out": lab(VALUE - 2, bad_line())},
        f"{HANDOUT_BOARD} x": {"out": "Possible moves for x: 7, 14, 51\nMy move is 7\n"},
        f"{fixed2} x": {"out": "Min score: 6; move sequence: [55, -1, 7]\n"},
    }
    (tmp_path / "canned.json").write_text(json.dumps(spec))
    (tmp_path / "b.txt").write_text(f"{BOARD} {TOKEN}\n{HANDOUT_BOARD} x\n{fixed2} x\n")
    return tmp_path


def test_grade_text_with_the_two_most_offending_tests(run, graded_folder):
    result = run("grade", "canned.py", "--boards", "b.txt", "--jobs", "2")
    assert result.exit_code == 0
    import re

    assert re.sub(r", \d+\.\d s\)", ", X s)", result.output) == GRADE_TEXT.replace("ISOLATION", ISOLATION).replace(
        "SOLVER", SOLVER
    )


def test_grade_json_file(run, graded_folder):
    result = run("grade", "canned.py", "--boards", "b.txt", "--json", "out.json")
    assert result.output.endswith("Results written to out.json\n")
    data = json.loads((graded_folder / "out.json").read_text())
    (script,) = data["scripts"]
    assert (script["script"], script["total"], script["max_total"], script["symbols"], script["seed"]) == (
        "canned.py",
        1.5,
        3,
        "mt+",
        None,
    )
    assert [t["symbol"] for t in script["tests"]] == ["m", "t", "+"]
    assert script["tests"][1]["claimed_score"] is None and script["tests"][1]["move"] == 7


@pytest.mark.parametrize(
    "args, message",
    [
        (["grade", "nope.py"], "Error: script 'nope.py' not found: give the path of a script file"),
        (
            ["grade", "canned.py", "--boards", "missing.txt"],
            "Error: board file 'missing.txt' not found: give the path of an existing file",
        ),
        (
            ["grade", "canned.json"],
            "Error: cannot run 'canned.json': make it executable (chmod +x) or add a command template for '.json' under 'commands' in config.yaml",
        ),
    ],
)
def test_grade_errors(run, graded_folder, args, message):
    result = run(*args)
    assert result.exit_code == 1 and result.output.strip() == message


def test_grade_usage_errors(run, graded_folder):
    assert run("grade").exit_code == 2
    result = run("grade", "canned.py", "--time-limit", "0")
    assert result.exit_code == 2 and "Error: --time-limit must be a number of seconds" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["grade", "canned.py", "--time-limit", "0"],
            "--time-limit must be a number of seconds above 0 and at most 86400, like 10; got '0'",
        ),
        (
            ["grade", "canned.py", "--time-limit", "ten"],
            "--time-limit must be a number of seconds above 0 and at most 86400, like 10; got 'ten'",
        ),
        (
            ["tournament", "a.py", "b.py", "--time-limit", "1e9"],
            "--time-limit must be a number of seconds above 0 and at most 86400, like 10; got '1e9'",
        ),
        (
            ["solve", HANDOUT_BOARD, "x", "--max-seconds", "nan"],
            "--max-seconds must be a number of seconds above 0 and at most 86400, like 10; got 'nan'",
        ),
        (["grade", "canned.py", "--seed", "abc"], "--seed must be a whole number, 0 or more, like 42; got 'abc'"),
        (["boards", "--seed", "-3"], "--seed must be a whole number, 0 or more, like 42; got '-3'"),
        (
            ["plan", "new", "--seed", "4.5", "--out", "p.plan"],
            "--seed must be a whole number, 0 or more, like 42; got '4.5'",
        ),
    ],
)
def test_a_bad_number_says_what_is_wanted(run, args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == f"Error: {message}"


@pytest.mark.slow
def test_grade_prints_the_seed_and_uses_config(run, tmp_path):
    (tmp_path / "config.yaml").write_text("seed: 4242\nlimits:\n  wall_seconds: 5\njobs: 2\n")
    result = run("grade", ROOT / "submissions" / "rule_of_thumb.py")
    first = result.output.splitlines()[0]
    assert first.endswith(
        "100 tests (standard plan, seed 4242), time limit 5 s, 2 jobs, scoring plain, " + ISOLATION + ", " + SOLVER
    )
    symbols = result.output.splitlines()[1]
    assert len(symbols) == 100 and set(symbols) <= {"T", "t"}
