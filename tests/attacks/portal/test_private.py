"""Private tests that no program can carry out: a student's public feedback comes only from
programs that were told no private test, whatever the game or protocol (issue: a GTP program
answered each public test with the last move of the private test before it)."""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path

import pytest
from test_grading import ref_boards

from grader.config import parse_config
from grader.games import get_game
from grader.games.gomoku import GOMOKU
from grader.grading.plans import Plan
from grader.grading.results import Settings
from grader.grading.run import grade_submission
from grader.portal.course import gtplab
from grader.portal.jobs.grading import feedback, grade_program, gtp_feedback
from grader.regression.regress import parse_regress, split_apart
from grader.runs.submissions import find_submission_folder

from conftest import ROOT

ATTACKS = ROOT / "tests" / "attacks"
PUBLIC, PRIVATE = (10, 40, 60), (20, 30, 50, 70)


def regression_file(path: Path, private_last: str) -> Path:
    """A 7x7 file of seven 'solve' tests, each on a board of its own; the private ones end
    with the stone ``private_last``, the public ones the same in every file."""
    lines = [f"# grader: public tests {' '.join(map(str, PUBLIC))}"]
    for n in sorted(PUBLIC + PRIVATE):
        last = private_last if n in PRIVATE else f"{'ABCDEFG'[n // 10 - 1]}7"
        lines += ["boardsize 7", "play b D4", f"play w {last}", f"{n} solve", "#? [.*]"]
    path.write_text("\n".join(lines) + "\n")
    return path


def recaller_feedback(tmp_path: Path, name: str, private_last: str, per_test: bool = False) -> str:
    """The student's feedback on the recalling program, graded as the portal grades it."""
    folder = tmp_path / name
    (folder / "sub").mkdir(parents=True)
    shutil.copy(ATTACKS / "recaller.py", folder / "sub" / "Gomoku.py")
    config = parse_config({"regress": {"per_test": per_test, "solve_seconds": 0.1}}, "config.yaml")  # the regex judges
    tests = gtplab.load_regression(regression_file(folder / "lab.gtp", private_last), config, "gomoku")
    sub = find_submission_folder(folder / "sub", set(config.commands), config.entry)
    student = grade_program(sub, tests, gtplab.regress_settings(config, None), [])
    return gtp_feedback(student, tests, "Gomoku.py").student_text


@pytest.mark.parametrize("per_test", [False, True], ids=["one-program-a-side", "a-program-a-test"])
def test_a_gtp_programs_public_feedback_never_depends_on_a_private_position(tmp_path, per_test):
    """The program answers each test with the last stone of the position before: run on two
    files that differ only in their private tests, the public feedback is the same, byte for
    byte, and shows none of the private stones."""
    first, second = (
        recaller_feedback(tmp_path, "one", "F2", per_test),
        recaller_feedback(tmp_path, "two", "B3", per_test),
    )
    assert first == second
    assert "F2" not in first and "B3" not in first
    assert "-> w A1" in first  # each public test's answer names only public tests' stones (the first: none)


def test_a_public_test_that_goes_on_from_a_private_ones_game_is_set_up_without_it():
    """Tests 10 and 30 public, 20 private, one game played on between them: each program is
    brought to its test's position by the grader's own setup, and is never told another
    side's test."""
    text = "boardsize 5\nplay b A1\n10 solve\n#? [.*]\nplay w B2\n20 solve\n#? [.*]\nplay b C3\n30 solve\n#? [.*]\n"
    commands = parse_regress(text, "f.gtp", GOMOKU)
    public, private = split_apart(commands, frozenset({20}), GOMOKU)
    said = [f"{c.number} {c.text}" if c.number else c.text for c in public]
    assert said == ["boardsize 5", "play b A1", "10 solve", "boardsize 5", "clear_board", "play b A1", "play w B2",
                    "play b C3", "30 solve"]  # fmt: skip
    said = [f"{c.number} {c.text}" if c.number else c.text for c in private]
    assert said == ["boardsize 5", "clear_board", "play b A1", "play w B2", "20 solve"]


def othello_plan(private_boards: list[tuple[str, str]], public_boards: list[tuple[str, str]]) -> Plan:
    """Public tests 1, 3, 5 on ``public_boards``; private 2, 4, 6 on ``private_boards``."""
    game = get_game("othello")
    boards = [b for pair in zip(public_boards, private_boards) for b in pair]
    return Plan(tuple(game.parse(b, t) for b, t in boards), None, "boards", public=frozenset({1, 3, 5}))


def test_a_scripts_public_feedback_never_depends_on_a_private_board(tmp_path):
    """A script that leaves each board it is given in every folder it may write and claims how
    many it found: graded on two plans that differ only in their private boards, its public
    feedback is the same, byte for byte (each test is a process of its own in a fresh folder)."""
    boards = ref_boards(9)
    token = secrets.token_hex(8)
    texts = []
    for name, private in (("one", boards[3:6]), ("two", boards[6:9])):
        (tmp_path / name).mkdir()
        spy = tmp_path / name / "spy.py"
        spy.write_text((ATTACKS / "board_spy.py").read_text().replace("TOKEN", token))
        plan = othello_plan(private, boards[:3])
        sub = find_submission_folder(tmp_path / name, set(), None)
        result = grade_submission(sub, plan, Settings(jobs=1))
        texts.append(feedback(result, "spy.py").student_text)
    left = [
        p
        for p in (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path.home())
        if (p / f"boards-seen-{token}.txt").exists()
    ]
    for folder in left:
        (folder / f"boards-seen-{token}.txt").unlink()
    assert texts[0] == texts[1] and not left
