"""The ``grader`` command as a user sees it."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import FFO20, HANDOUT_BOARD, ROOT
from grader.cli import main


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
    assert list(data) == ["board", "token", "scoring", "value", "optimal_moves", "line", "move_values", "nodes", "seconds"]
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
        (["solve", "--boards", "missing.txt"], 1, "Error: board file 'missing.txt' not found: give the path of an existing file"),
        (["solve", HANDOUT_BOARD, "x", "--boards", "b.txt"], 2, "Error: give either BOARD TOKEN or --boards FILE, not both"),
        (["solve", HANDOUT_BOARD, "x", "--config", "nope.yaml"], 1, "Error: config file 'nope.yaml' not found: check the path given to --config"),
        (["solve", HANDOUT_BOARD, "x", "--scoring", "odd"], 2, "Invalid value for '--scoring'"),
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
        "Error: config.yaml: 'scoring' must be one of plain, winner-takes-empties; got 'lab'"
    )


def test_python_dash_m_and_bundled_examples():
    result = subprocess.run(
        [sys.executable, "-m", "grader", "solve", "--boards", "fixtures/examples.txt", "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    data = json.loads(result.stdout)
    assert [d["value"] for d in data] == [18, 1, -2]
