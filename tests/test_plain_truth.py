"""Results that looked right but were not: a script graded for the wrong game, a student
without a script called complete, counts missing from the summary."""

import csv
import io
import shutil

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.games import get_game

from conftest import HANDOUT_BOARD, ROOT

SUBMISSIONS = ROOT / "submissions"
FIXED = [ln.split("#")[0].strip() for ln in (ROOT / "fixtures" / "standard.txt").read_text().splitlines()]
OTHELLO_BOARDS = "\n".join([ln for ln in FIXED if ln][:6]) + "\n"
TICTACTOE_BOARDS = "x........ o\nxo....... x\nx.o.x.... o\n....x...o x\nxx.oo.... x\nx...o...x o\n"


def grade(tmp_path, *args):
    return CliRunner().invoke(main, ["grade", *map(str, args), "--jobs", "2"])


def test_a_tictactoe_script_graded_as_othello_is_told_so(tmp_path):
    (tmp_path / "b.txt").write_text(OTHELLO_BOARDS)
    got = grade(tmp_path, SUBMISSIONS / "tictactoe" / "minimax.py", "--boards", tmp_path / "b.txt")
    assert got.exit_code == 1, got.output
    last = got.output.splitlines()[-1]
    assert last.startswith("Only ") or last.startswith("No test printed"), last
    assert last.endswith("is it written for Tic-tac-toe? Grade it with --game tictactoe"), last


@pytest.mark.slow
def test_an_othello_script_graded_as_tictactoe_is_told_so(tmp_path):
    game = get_game("tictactoe")
    for line in TICTACTOE_BOARDS.splitlines():  # the boards are open positions of the game
        assert not game.parse(*line.split()).is_game_over()
    (tmp_path / "b.txt").write_text(TICTACTOE_BOARDS)
    got = grade(tmp_path, SUBMISSIONS / "negamax.py", "--game", "tictactoe", "--boards", tmp_path / "b.txt")
    assert got.exit_code == 1, got.output
    assert got.output.splitlines()[-1].endswith("is it written for Othello? Grade it with --game othello")


def test_no_legal_move_at_all_is_said_and_fails(tmp_path):
    (tmp_path / "b.txt").write_text(OTHELLO_BOARDS)
    got = grade(tmp_path, SUBMISSIONS / "illegal.py", "--boards", tmp_path / "b.txt")
    assert got.exit_code == 1, got.output
    assert got.output.splitlines()[-1] == ("No test printed a legal Othello move: is the script written for Othello? "
                                           "(--game chooses the game)")  # fmt: skip
    assert "timeouts: 0  crashes: 0  illegal moves: 6" in got.output


def test_a_right_script_gets_no_such_line(tmp_path):
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    got = grade(tmp_path, SUBMISSIONS / "negamax.py", "--boards", tmp_path / "b.txt")
    assert got.exit_code == 0, got.output
    assert "--game" not in got.output and "illegal moves" not in got.output


def test_a_student_without_a_script_is_not_complete(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "class" / "eve").mkdir(parents=True)
    for name in ("negamax.py", "greedy.py"):
        shutil.copy(SUBMISSIONS / name, tmp_path / "class" / "eve" / name)
    (tmp_path / "class" / "ann").mkdir()
    shutil.copy(SUBMISSIONS / "negamax.py", tmp_path / "class" / "ann" / "negamax.py")
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    got = CliRunner().invoke(main, ["grade", "class", "--boards", "b.txt", "--out", "run", "--jobs", "2"])
    assert got.exit_code == 0, got.output
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO((tmp_path / "run" / "grades.csv").read_text()))}
    assert rows["ann"]["complete"] == "yes"
    assert rows["eve"]["complete"] == "no" and "2 scripts in" in rows["eve"]["note"], rows["eve"]


def test_an_empty_script_on_the_standard_plan_is_said_and_fails(tmp_path):
    """An empty script prints nothing: not a timeout nor a crash, and no move in any test.
    The last line says so and the exit status is 1, as for a script of illegal moves."""
    (tmp_path / "empty.py").write_text("")
    got = grade(tmp_path, tmp_path / "empty.py", "--seed", "7")
    assert got.exit_code == 1, got.output
    assert "0/100" in got.output
    assert got.output.splitlines()[-1] == ("No test printed a legal Othello move: the script printed no move (its "
                                           "move is the last integer it prints)")  # fmt: skip


def test_a_script_that_crashes_in_every_test_is_said_and_fails(tmp_path):
    (tmp_path / "b.txt").write_text(OTHELLO_BOARDS)
    (tmp_path / "boom.py").write_text("raise SystemExit('no idea')\n")
    got = grade(tmp_path, tmp_path / "boom.py", "--boards", tmp_path / "b.txt")
    assert got.exit_code == 1, got.output
    assert got.output.splitlines()[-1] == ("No test printed a legal Othello move: the script crashed in every test; "
                                           "the last line it wrote to stderr: no idea "
                                           "(each test's diagnosis says how)")  # fmt: skip
