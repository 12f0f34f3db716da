"""grader check: real scripts with each mistake the check must name (they reuse the example
negamax for their answers, so only the printing differs)."""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_grading import ref_boards

from grader.cli import main
from grader.games import get_game
from grader.grading.check import check, easy_positions
from grader.grading.plans import standard_plan

from conftest import HANDOUT_BOARD, ROOT

HEAD = """import sys
if len(sys.argv[1]) != 64:
    sys.exit("not an Othello board")  # the check's probes of other games end at once, not at their limit
from negamax import negamax, read_position
me, you = read_position(sys.argv[1].lower(), sys.argv[2].lower())
score, line = negamax(me, you, -65, 65)
"""
PRINTS = {
    "good": 'print("score", score, *reversed(line), flush=True)',
    "date_last": 'print("score", score, *reversed(line))\nprint("Done on 23/11/2026")',
    "forward": 'print("Min score:", score, "; move sequence:", line)',
    "wrong_side": 'print("score", -score, *reversed(line))',
    # the grader runs Python unbuffered; a buffer of the script's own is lost like C's stdio one
    "buffered": 'import os, time\nout = open(1, "w", buffering=65536, closefd=False)\n'
    'print("score", score, *reversed(line), file=out)\ntime.sleep(20)',
    "passes_as_squares": 'print("score", score, *[64 if m == -1 else m for m in reversed(line)])',
    "crashes": 'print("score", score, *reversed(line), flush=True)\n'
    'def helper():\n    raise RuntimeError("the helper broke")\nhelper()',
}


def script(tmp_path: Path, kind: str) -> Path:
    d = tmp_path / kind
    d.mkdir()
    shutil.copy(ROOT / "submissions" / "negamax.py", d / "negamax.py")
    (d / "main.py").write_text(HEAD + PRINTS[kind] + "\n")
    return d / "main.py"


@pytest.fixture
def where(tmp_path, monkeypatch):
    """A public plan holding the handout's board (whose line passes), and a limit of 10 s that
    an honest script meets on a loaded machine too."""
    monkeypatch.chdir(tmp_path)
    Path("config.yaml").write_text("limits:\n  wall_seconds: 10\n")
    Path("b.txt").write_text(f"{HANDOUT_BOARD} x\n" + "".join(f"{b} {t}\n" for b, t in ref_boards(4)))
    runner = CliRunner()
    assert (
        runner.invoke(main, ["plan", "new", "--boards", "b.txt", "--public", "5", "--out", "lab.plan"]).exit_code == 0
    )
    assert runner.invoke(main, ["plan", "public", "lab.plan", "--out", "lab.public.plan"]).exit_code == 0
    return tmp_path


def run_check(where, kind):
    return CliRunner().invoke(
        main, ["check", str(script(where, kind)), "--plan", "lab.public.plan", "--config", "config.yaml"]
    )


def test_a_correct_script_passes(where):
    done = run_check(where, "good")
    assert done.exit_code == 0, done.output
    assert done.output.count("score line yes, line is optimal") == 5
    assert "of 10 s" in done.output  # the time against the limit
    assert "The output can be read on every position checked." in done.output


def test_a_date_printed_last(where):
    done = run_check(where, "date_last")
    assert done.exit_code == 1, done.output
    assert done.output.count("looks like a date or a time: print your move last") == 5
    assert "every test would fail" in done.output


def test_a_line_printed_forward(where):
    done = run_check(where, "forward")
    assert "the line is printed from the first move forward: print it in reverse" in done.output, done.output


def test_a_score_from_the_wrong_side(where):
    done = run_check(where, "wrong_side")
    assert done.exit_code == 0, done.output  # readable, but every nonzero score is wrong
    assert "is the other side's: print the score for the side to move" in done.output


@pytest.mark.slow
def test_output_lost_in_a_buffer(where):
    Path("config.yaml").write_text("limits:\n  wall_seconds: 1\n")  # the script waits 20 s past its limit
    done = run_check(where, "buffered")
    assert done.exit_code == 1, done.output
    assert done.output.count("nothing was printed before the time limit") == 5
    assert "flush" in done.output


def test_passes_written_as_squares(where):
    done = run_check(where, "passes_as_squares")
    assert "write a pass as -1" in done.output, done.output


def test_easy_positions_are_public_and_few_empties():
    plan = standard_plan(5)
    chosen = easy_positions(get_game("othello"), plan)
    assert [p.empties for p in chosen.positions] == [1, 2, 3, 4, 5]
    assert all(p in plan.positions for p in chosen.positions)


def test_check_from_the_library(tmp_path):
    found = check(script(tmp_path, "good"))
    assert not found.all_fail and all(c.readable and not c.problems for c in found.checked)


def test_a_folder_is_checked_through_its_one_script_or_named_with_its_scripts(where):
    one = script(where, "good").parent
    (one / "negamax.py").rename(one / "_negamax_lib.py")  # hide the second script: one left
    (one / "main.py").write_text((one / "main.py").read_text().replace("from negamax", "from _negamax_lib"))
    done = CliRunner().invoke(main, ["check", str(one), "--plan", "lab.public.plan", "--config", "config.yaml"])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines()[0].startswith(f"Checking {one / 'main.py'} on 5 easy public positions")
    two = script(where, "forward").parent
    done = CliRunner().invoke(main, ["check", str(two), "--plan", "lab.public.plan", "--config", "config.yaml"])
    assert done.exit_code == 1
    assert done.output == (
        f"Error: '{two}' is a folder, not a script: 2 scripts in {two} (main.py, negamax.py): "
        "set 'entry' in config.yaml to the one to run (or give the script itself)\n"
    )


def test_a_crash_shows_the_end_of_its_stderr_with_the_students_file_name(where):
    done = run_check(where, "crashes")
    assert done.exit_code == 1, done.output
    assert "fix the error its stderr ends with:" in done.output
    assert "Traceback (most recent call last):" in done.output and "RuntimeError: the helper broke" in done.output
    assert 'File "main.py", line ' in done.output and "grader-scripts-" not in done.output


def test_a_legal_line_that_is_not_optimal_says_where_it_goes_wrong(tmp_path):
    """The handout board's optimal line (x: 51, then 7, 14, 15 while o passes) with x's second
    move replaced by another legal one that the brute force says loses discs."""
    import reference as ref

    game = get_game("othello")
    after = ref.play(HANDOUT_BOARD, "x", 51)  # o must pass: x moves again
    values = ref.move_values(after, "x", "plain")
    worse = min(values, key=values.get)
    assert values[worse] < max(values.values())
    d = tmp_path / "s"
    d.mkdir()
    (d / "main.py").write_text(f"print('score 18', {worse}, -1, 51)\n")  # reversed: 51, pass, worse
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    plan = CliRunner().invoke(main, ["plan", "new", "--boards", str(tmp_path / "b.txt"), "--public", "1", "--out",
                                     str(tmp_path / "p.plan")])  # fmt: skip
    assert plan.exit_code == 0, plan.output
    public = CliRunner().invoke(main, ["plan", "public", str(tmp_path / "p.plan"), "--out", str(tmp_path / "q.plan")])
    assert public.exit_code == 0, public.output
    done = CliRunner().invoke(main, ["check", str(d / "main.py"), "--plan", str(tmp_path / "q.plan")])
    assert "line goes wrong" in done.output and "does not replay" not in done.output, done.output
    assert f"   line: line goes wrong at ply 3: after 51 (d7), pass, x plays {game.move_text(worse)}" in done.output
