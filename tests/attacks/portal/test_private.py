"""Private tests that no program can carry out: a student's public feedback comes only from
programs that were told no private test, whatever the game or protocol (issue: a GTP program
answered each public test with the last move of the private test before it)."""

from __future__ import annotations

import json
import re
import secrets
import shutil
import textwrap
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

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

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


ECHO = """\
import sys
said, before = [], []
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    print(line, end="", file=sys.stderr, flush=True)
    number = words.pop(0) if words[0].isdigit() else ""  # GTP: '10 solve' is answered '=10 ...'
    if words[0] == "play":
        said += words[1:]
        print(f"={number}\\n", flush=True)
    elif words[0] == "solve":  # the stones of the test before: its position, on one line or two
        two = int(number) // 10 % 3 == 1
        print(f"={number} " + ("b\\n" if two else "") + " ".join(before) + "\\n", flush=True)
        said, before = [], said
    else:
        print(f"={number}\\n", flush=True)
"""


def test_a_gtp_program_echoing_its_input_leaks_no_private_position(portal):
    """A GTP program that answers each test with the stones of the test before (on one line,
    or on a second line, which a note quotes), and writes every command to its stderr: the
    staff see the private positions in the answers of the private tests' program; the student
    sees none of them, in no page and no JSON: the public tests' program, told no private
    test, is shown as it answered."""
    tests = portal["course"].assignments["gomoku"].plan
    text = tests.path.read_text()
    positions: dict[int, str] = {}
    stones: list[str] = []
    for line in text.splitlines():
        if line.startswith("play "):
            stones.append(line[5:])
        elif line.split()[1:2] == ["solve"]:
            positions[int(line.split()[0])] = " ".join(stones)
            stones = []
    public = [positions[n] for n in tests.public]
    private = [" ".join(positions[n].split()[:10]) for n in tests.private]  # its first 5 stones: test_line shows 6
    private = [p for p in private if not any(q.startswith(p) for q in public)]  # those no public test starts with
    assert len(private) >= 4
    me = portal["students"]["s5@example.edu"]
    sid = me.upload(ECHO.encode(), name="echo.py", assignment="gomoku").json()["id"]
    seen = me.graded(sid)
    staff = portal["instructor"].get(f"/s/{sid}").json()["full_feedback"]
    assert any(p in staff for p in private)  # the private tests' program did pass them on
    assert re.search(r"here 2 lines \('b', then 'b ", staff) and re.search(r"here 2 lines", seen["feedback"])
    for page in (me.get(f"/s/{sid}").text, me.html(f"/s/{sid}").text, me.get("/a/gomoku").text,
                 me.html("/a/gomoku").text, json.dumps(seen)):  # fmt: skip
        for p in private:
            assert p not in page and p.replace(" ", "") not in page


def test_a_private_tests_board_never_reaches_a_student(portal):
    """A script that prints its board: the boards of private tests are in the staff's view, never in the student's."""
    tmp = portal["tmp"]
    script = tmp / "prints_its_board.py"
    script.write_text('import sys\nprint("score 0 board", sys.argv[1], sys.argv[2])\nprint("no move")\n')
    me = portal["students"]["s3@example.edu"]
    sid = me.upload(script, name="prints_its_board.py").json()["id"]
    seen = me.graded(sid)
    plan = portal["course"].assignments["othello"].plan
    private = [p.board_string() for i, p in enumerate(plan.positions, 1) if not plan.is_public(i)]
    public = [p.board_string() for i, p in enumerate(plan.positions, 1) if plan.is_public(i)]
    staff = portal["instructor"].get(f"/s/{sid}").json()["full_feedback"]
    assert any(b in staff for b in private)  # printed by the script, and kept for staff
    assert any(b in seen["feedback"] for b in public)  # public boards are shown to the student
    for page in (me.get(f"/s/{sid}").text, me.html(f"/s/{sid}").text, me.get("/a/othello").text,
                 me.html("/a/othello").text, me.get("/").text):  # fmt: skip
        assert not any(b in page for b in private)


def test_a_script_cannot_read_the_course_folder_or_the_database(portal):
    """A script that reads the plan file (every private board) and the database and crashes
    with what it read: the grader's sandbox keeps both out of its reach, as for grade."""
    course = portal["course"].folder
    script = portal["tmp"] / "thief.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        found = []
        for path in ({str(course / "othello-endgame.plan")!r}, {str(course / ".portal" / "portal.sqlite3")!r}):
            try:
                found.append(open(path, "rb").read(300).hex())
            except OSError as e:
                found.append(type(e).__name__)
        sys.exit("STOLEN " + " ".join(found))
    """)
    )
    me = portal["students"]["s4@example.edu"]
    sid = me.upload(script, name="thief.py").json()["id"]
    me.graded(sid)
    full = portal["instructor"].get(f"/s/{sid}").json()["full_feedback"]
    stolen = re.search(r"STOLEN (\S+) (\S+)", full)
    assert stolen, full  # the script ran and said what it found
    assert stolen.groups() == ("FileNotFoundError", "FileNotFoundError") or all(
        g in ("FileNotFoundError", "PermissionError") for g in stolen.groups()
    ), stolen.groups()
    assert b"grader-plan".hex() not in full


def scrubbed(text: str, sid: str) -> str:
    """A page or answer with what differs between any two uploads taken out: the submission's
    id, the session's CSRF token, times and durations."""
    text = text.replace(sid, "ID")
    text = re.sub(r'("csrf": ?"|name="csrf" value=")[^"]+', r"\1CSRF", text)
    text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?(\+00:00| UTC)?", "TIME", text)
    text = re.sub(r'(<time datetime="TIME"[^>]*>)[^<]*(</time>)', r"\1TIME\2", text)  # the time as people read it
    text = re.sub(
        r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d\d \w{3}( \d{4})? \d\d:\d\d [A-Z]{3,5}\b", "WHEN", text
    )  # a link's
    return re.sub(r"\d+(\.\d+)? s\b", "SECONDS s", text)


@pytest.mark.slow  # two servers, a grading on each: about half a minute
def test_over_http_a_gtp_programs_public_feedback_never_depends_on_a_private_position(tmp_path):
    """The recalling program uploaded through the portal to two courses whose Gomoku labs
    differ only in their private tests (the files of the test above): what its student sees,
    the submission's page and JSON and the lab's, is the same byte for byte but for ids and
    times, and shows none of the private stones."""
    pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
    from portal_server import make_course, open_portal

    seen = []
    for name, last in (("one", "F2"), ("two", "B3")):
        course = make_course(tmp_path / name / "course")
        regression_file(course / "gomoku.gtp", last)
        (course / "config.yaml").write_text("entry: Gomoku.py\nregress: {solve_seconds: 0.1}\n")
        opened = open_portal(course, tmp_path / name)
        try:
            me = opened["students"]["s1@example.edu"]
            sid = me.upload(ATTACKS / "recaller.py", name="Gomoku.py", assignment="gomoku").json()["id"]
            assert me.graded(sid)["status"] == "graded"
            pages = (me.get(f"/s/{sid}").text, me.html(f"/s/{sid}").text, me.get("/a/gomoku").text,
                     me.html("/a/gomoku").text)  # fmt: skip
            seen.append([scrubbed(page, sid) for page in pages])
        finally:
            opened["server"].stop()
    assert seen[0] == seen[1]
    assert not any(stone in page for page in seen[0] for stone in ("F2", "B3"))
    assert "-> w A1" in json.loads(seen[0][0])["feedback"]  # the first public test's answer: no stone before it
