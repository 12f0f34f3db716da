"""grader export canvas|moodle: real run folders (a class graded, a regression class) written as the
CSV each LMS imports, matched to the roster it exported."""

import csv
import io

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.runs.lms import CANVAS_IDS, RunGrade, canvas_csv, read_roster

from test_class import klass  # noqa: F401  (a fixture)
from test_formats import engine, near_end
from test_regress_runs import make_class

CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Lab 4 (101),Current Score,Final Score\n"
    "    Points Possible,,,,,10,(read only),(read only)\n"
    '"Doe, Alice",1001,S1,alice,Sec 1,9,90,90\n'
    '"Roe, Bob",1002,S2,bob@school.edu,Sec 1,8,80,80\n'
    '"Student, Test",1003,,test_student,Sec 1,,,\n'
    '"Poe, Dan",1004,S4,dan,Sec 2,7,70,70\n'
)
MOODLE_ROSTER = (
    "First name,Last name,ID number,Institution,Department,Email address,Assignment: Lab 4 (Real),"
    "Last downloaded from this course\n"
    "Alice,Doe,S1,,,alice@school.edu,9.00,1700000000\n"
    "Bob,Roe,S2,,,bob@school.edu,8.00,1700000000\n"
    "Dan,Poe,S4,,,dan@school.edu,-,1700000000\n"
)


def rows(text):
    return list(csv.reader(io.StringIO(text)))


def grades(folder):
    return {r["name"]: r for r in csv.DictReader(io.StringIO((folder / "grades.csv").read_text()))}


def test_a_class_run_goes_to_canvas_with_its_points_possible_row(klass):  # noqa: F811
    assert CliRunner().invoke(main, ["grade", "class", "--boards", "b.txt", "--out", "run"]).exit_code == 0
    (klass / "roster.csv").write_text(CANVAS_ROSTER)
    result = CliRunner().invoke(main, ["export", "canvas", "run", "--roster", "roster.csv",
                                       "--assignment", "Lab 5", "--out", "lab5.csv"])  # fmt: skip
    assert result.exit_code == 0, result.output
    got = rows((klass / "lab5.csv").read_text())
    run = grades(klass / "run")
    assert got[0] == [*CANVAS_IDS, "Lab 5"]
    assert got[1] == ["Points Possible", "", "", "", "", run["alice"]["max"]]
    assert got[2:] == [
        ["Doe, Alice", "1001", "S1", "alice", "Sec 1", run["alice"]["total"]],
        ["Roe, Bob", "1002", "S2", "bob@school.edu", "Sec 1", run["bob"]["total"]],
        ["Poe, Dan", "1004", "S4", "dan", "Sec 2", ""],  # no grade: Canvas leaves it as it is
    ]
    assert "Wrote lab5.csv" in result.output
    assert "Warning: 'carol' is not in the roster (or is twice): their grade is not in the CSV" in result.output


def test_an_address_is_tried_by_its_login_only_where_that_login_is_nobody_elses():
    """Canvas's SIS Login ID 'alice' answers to alice@school.edu, but not when another address
    of the run has that login too (two people of two schools), nor for a student whose own
    address took their row already."""
    roster = read_roster(CANVAS_ROSTER)

    def graded(*names: str) -> tuple[list[list[str]], list[str]]:
        export = canvas_csv([RunGrade(n, 5.0 + k, 10.0, True, "") for k, n in enumerate(names)], roster, "Lab")
        return [(r[3], r[5]) for r in rows(export.text)[2:]], export.unmatched

    assert graded("alice@school.edu", "dan@x.org") == ([("alice", "5"), ("bob@school.edu", ""), ("dan", "6")], [])
    assert graded("alice@school.edu", "alice@elsewhere.org") == (
        [("alice", ""), ("bob@school.edu", ""), ("dan", "")], ["alice@school.edu", "alice@elsewhere.org"])  # fmt: skip
    assert graded("alice", "alice@elsewhere.org") == (
        [("alice", "5"), ("bob@school.edu", ""), ("dan", "")], ["alice@elsewhere.org"])  # fmt: skip


def test_a_regression_class_goes_to_moodle_with_feedback(tmp_path):
    cls, files = make_class(tmp_path)
    out = CliRunner().invoke(main, ["regress", str(cls), str(files[0]), "--out", str(tmp_path / "run")])
    assert out.exit_code == 0, out.output
    roster = tmp_path / "moodle.csv"
    roster.write_text(MOODLE_ROSTER.replace("Dan,Poe", "Dave,Poe").replace("dan@", "dave@"))
    result = CliRunner().invoke(main, ["export", "moodle", str(tmp_path / "run"), "--roster", str(roster)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    got = rows("\n".join(line for line in lines if not line.startswith("Warning")))
    assert got[0] == ["First name", "Last name", "ID number", "Email address", "run", "run feedback"]
    assert got[1:] == [
        ["Alice", "Doe", "S1", "alice@school.edu", "100", "100/100"],
        ["Bob", "Roe", "S2", "bob@school.edu", "0", "0/100"],
        ["Dave", "Poe", "S4", "dave@school.edu", "0", "0/100"],
    ]
    assert "Warning: 'carol' is not in the roster" in result.output


def test_a_graded_gauntlet_goes_to_moodle_by_username(tmp_path):
    first, second, reference = engine(tmp_path, "first"), engine(tmp_path, "first_b"), engine(tmp_path, "illegal")
    (tmp_path / "o.txt").write_text(near_end(3) + "\n")
    result = CliRunner().invoke(main, ["tournament", str(first), str(second), "--format", "gauntlet", "--opponents",
                                       str(reference), "--grade", "--openings", str(tmp_path / "o.txt"),
                                       "--out", str(tmp_path / "t")])  # fmt: skip
    assert result.exit_code == 0, result.output
    run = grades(tmp_path / "t")
    result = CliRunner().invoke(main, ["export", "moodle", str(tmp_path / "t"), "--assignment", "Gauntlet"])
    assert result.exit_code == 0, result.output
    assert rows(result.output) == [
        ["Username", "Gauntlet", "Gauntlet feedback"],
        *([name, run[name]["total"], f"{run[name]['total']}/100"] for name in ("first", "first_b")),
    ]


def test_moodle_without_a_roster_names_students_by_username_and_leaves_out_what_is_not_final(tmp_path):
    """An interrupted run's unfinished student had been exported with the total of the tests
    that ran, and the export had exited 0 (issue 51)."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "grades.csv").write_text(
        "name,total,max,complete,note\nalice,87.5,100,yes,\n'=bob,40,100,no,stopped at test 40\n"
    )
    result = CliRunner().invoke(main, ["export", "moodle", str(tmp_path / "run"), "--assignment", "Lab 5"])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "Username,Lab 5,Lab 5 feedback",
        "alice,87.5,87.5/100",
        "Warning: =bob's grade is not final: stopped at test 40",
        f"Error: 1 grade is not final, left out of the CSV (empty): finish the run (grader grade --resume "
        f"{tmp_path / 'run'}) and export it again",
    ]


def test_canvas_leaves_an_interrupted_runs_unfinished_students_empty_and_exits_1(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "grades.csv").write_text(
        "name,total,max,complete,note\nalice,9,10,yes,\nbob@school.edu,0,10,no,incomplete: 0 of 10 tests recorded\n"
    )
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    result = CliRunner().invoke(main, ["export", "canvas", str(tmp_path / "run"), "--roster", str(tmp_path / "roster.csv"),
                                       "--assignment", "Lab 5", "--out", str(tmp_path / "out.csv")])  # fmt: skip
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith("Error: 1 grade is not final, left out of the CSV (empty)")
    assert rows((tmp_path / "out.csv").read_text())[2:4] == [
        ["Doe, Alice", "1001", "S1", "alice", "Sec 1", "9"],
        ["Roe, Bob", "1002", "S2", "bob@school.edu", "Sec 1", ""],  # not 0: Canvas keeps what it has
    ]


@pytest.mark.parametrize(
    "args, roster, message",
    [
        (["canvas", "RUN", "--roster", "R"], MOODLE_ROSTER, "Error: the roster 'R' is Moodle's: give the roster Canvas exported"),
        (["moodle", "RUN", "--roster", "R"], "Name,Mail\nann,a@b\n", "Error: R: neither Canvas's columns (Student, ID, SIS Login ID) nor"),
        (["moodle", "RUN", "--roster", "R"], "", "Error: R: empty: give the roster the LMS exported"),
        (["moodle", "EMPTY"], None, "Error: cannot read 'EMPTY/grades.csv'"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(tmp_path, monkeypatch, args, roster, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "RUN").mkdir()
    (tmp_path / "EMPTY").mkdir()
    (tmp_path / "RUN" / "grades.csv").write_text("name,total,max,complete,note\nalice,1,100,yes,\n")
    if roster is not None:
        (tmp_path / "R").write_text(roster)
    result = CliRunner().invoke(main, ["export", *args])
    assert result.exit_code == 1
    assert result.output.startswith(message) and result.output.count("\n") == 1


def test_canvas_needs_its_roster():
    result = CliRunner().invoke(main, ["export", "canvas", "."])
    assert result.exit_code == 2 and "Missing option '--roster'" in result.output


def test_the_rosters_lms_and_students():
    canvas = read_roster(CANVAS_ROSTER)
    assert canvas.lms == "canvas" and len(canvas.students) == 3  # not the points row, not the test student
    assert {"alice", "s1", "1001", "alice doe"} <= canvas.students[0].keys
    assert {"bob@school.edu", "bob"} <= canvas.students[1].keys
    moodle = read_roster(MOODLE_ROSTER.replace("Last name", "Surname"))
    assert moodle.lms == "moodle" and moodle.students[2].columns == ("Dan", "Poe", "S4", "dan@school.edu")


def test_the_portal_imports_canvas_and_moodle_rosters():
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("argon2")
    from grader.portal.accounts.roster import read_roster as portal_roster

    canvas = CANVAS_ROSTER.replace("alice,Sec", "alice@school.edu,Sec").replace("dan,Sec", "dan@school.edu,Sec")
    assert [(e.email, e.name) for e in portal_roster(canvas)] == [
        ("alice@school.edu", "Doe, Alice"), ("bob@school.edu", "Roe, Bob"), ("dan@school.edu", "Poe, Dan")
    ]  # fmt: skip
    moodle = MOODLE_ROSTER.replace("Last name", "Surname")
    assert [(e.email, e.name) for e in portal_roster(moodle)][0] == ("alice@school.edu", "Alice Doe")


def test_out_naming_the_roster_is_refused_and_the_roster_left_as_it_was(tmp_path, monkeypatch):
    """It had been rewritten in place, the roster lost (issue 51)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "grades.csv").write_text("name,total,max,complete,note\nalice,9,10,yes,\n")
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    result = CliRunner().invoke(main, ["export", "canvas", "run", "--roster", "roster.csv", "--out", "./roster.csv"])
    assert (result.exit_code, result.output) == (
        1, "Error: --out ./roster.csv is the roster itself (--roster): write the grades to another file\n")  # fmt: skip
    assert (tmp_path / "roster.csv").read_text() == CANVAS_ROSTER
