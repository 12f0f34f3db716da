"""A portal assignment's grades to Canvas and Moodle (grader/portal/course/exports.py, grader export
--portal, the class page's downloads): each student's counted submission, latest or best, with
the course's late days, penalty and extensions applied, checked against the same rules worked
out here by hand, and a column (Moodle's feedback, Canvas's notes CSV) saying so per student."""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
import secrets
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from grader.cli import main  # noqa: E402
from grader.portal.course.course import make_demo_course  # noqa: E402
from grader.portal.course.sync import sync  # noqa: E402
from grader.portal.database.db import default_url  # noqa: E402
from grader.runs.lms import CANVAS_IDS  # noqa: E402

UTC = dt.timezone.utc
OTHELLO_DUE = dt.datetime(2026, 3, 2, 23, 59, tzinfo=UTC)
TICTACTOE_DUE = dt.datetime(2026, 3, 9, 23, 59, tzinfo=UTC)
HOUR = dt.timedelta(hours=1)
RATES = {"othello": 0.10, "tictactoe": 0.25}
DUE = {"othello": OTHELLO_DUE, "tictactoe": TICTACTOE_DUE}
COUNTS = {"othello": "best", "tictactoe": "latest"}
BUDGET = 1  # the course's late days
STUDENTS = {"ann@uni.edu": "Ann Lee", "ben@uni.edu": "Ben Roe", "cat@uni.edu": "Cat Poe", "dan@uni.edu": "Dan Fox",
            "eve@uni.edu": "Eve Kim"}  # fmt: skip
EXTENSIONS = {("cat@uni.edu", "othello"): 2}
# (student, assignment, hours after the deadline, total out of 60 / 10): the class's graded submissions
SUBMISSIONS = [
    ("ann@uni.edu", "othello", -5, 50.0),  # on time
    ("ben@uni.edu", "othello", -2, 30.0),  # on time, lower than ...
    ("ben@uni.edu", "othello", 30, 40.0),  # ... 2 days late: 1 late day, 10%: 36 > 30, the best
    ("cat@uni.edu", "othello", 30, 45.0),  # late by the deadline, on time by her extension of 2 days
    ("dan@uni.edu", "othello", 80, 50.0),  # 4 days late: 1 late day, 30%: 35
    ("dan@uni.edu", "tictactoe", 1, 10.0),  # late days all spent on Othello (due first): 25%
    ("eve@uni.edu", "tictactoe", -3, 10.0),  # on time, full marks, but ...
    ("eve@uni.edu", "tictactoe", 20, 8.0),  # ... the latest counts: 1 day late, her late day: 8
]


def by_hand() -> dict[tuple[str, str], tuple[float, float, str]]:
    """Each student's counted (total as graded, grade) per assignment, by the rules worked out
    again here: days late per started day from the extended deadline, late days spent in the
    order of the deadlines before a penalty of the rate per day, best or latest."""
    out = {}
    for email in STUDENTS:
        left = BUDGET
        for name in ("othello", "tictactoe"):
            due = DUE[name] + dt.timedelta(days=EXTENSIONS.get((email, name), 0))
            mine = [(hours, total) for who, a, hours, total in SUBMISSIONS if who == email and a == name]
            scored = []
            for hours, total in mine:
                late = max(0, math.ceil((DUE[name] + hours * HOUR - due) / dt.timedelta(days=1)))
                spent = min(late, left)
                penalty = min(1.0, (late - spent) * RATES[name])
                scored.append((round(total * (1 - penalty), 2), total, spent, late))
            if not scored:
                continue
            chosen = max(scored, key=lambda s: s[0]) if COUNTS[name] == "best" else scored[-1]
            left -= chosen[2]
            out[(email, name)] = (chosen[1], chosen[0], f"{chosen[3]} late")
    return out


def make_class(folder: Path) -> Path:
    """The demo course with this class's roster, deadlines and late policy, its database made by
    grader portal sync and the submissions above written in it as the workers write them."""
    make_demo_course(folder)
    (folder / "roster.csv").write_text("Email,Name\n" + "".join(f"{e},{n}\n" for e, n in STUDENTS.items()))
    text = (folder / "course.yaml").read_text().replace("upload_kb: 256", f"upload_kb: 256\nlate_days: {BUDGET}")
    for name, title in (("othello", "Othello endgame lab"), ("tictactoe", "Tic-tac-toe lab")):
        text = text.replace(f"    title: {title}\n", f"    title: {title}\n    deadline: {DUE[name]:%Y-%m-%d %H:%M}\n"
                            f"    late_penalty: {RATES[name]:.0%}\n    counts: {COUNTS[name]}\n")  # fmt: skip
    (folder / "course.yaml").write_text(text)
    sync(folder, default_url(folder))
    db = sqlite3.connect(folder / ".portal" / "portal.sqlite3")
    ids = dict(db.execute("SELECT email, id FROM users"))
    for (email, name), days in EXTENSIONS.items():
        db.execute("INSERT INTO extensions (user_id, assignment, days, granted_by, granted_at) VALUES (?, ?, ?, ?, ?)",
                   (ids[email], name, days, ids["instructor@example.edu"], "2026-03-01 00:00:00"))  # fmt: skip
    for email, name, hours, total in SUBMISSIONS:
        when = (DUE[name] + hours * HOUR).strftime("%Y-%m-%d %H:%M:%S.000000")
        db.execute(
            "INSERT INTO submissions (id, user_id, assignment, received_at, late, filename, size, sha256, content, "
            "status, total, max_total, gradings) VALUES (?, ?, ?, ?, ?, 'lab.py', 1, '', x'00', 'graded', ?, ?, 1)",
            (secrets.token_urlsafe(16), ids[email], name, when, int(hours > 0), total,
             60 if name == "othello" else 10),
        )  # fmt: skip
    db.commit()
    db.close()
    return folder


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    return make_class(tmp_path_factory.mktemp("lms") / "course")


def table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def number(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Othello endgame lab (77),Current Score,Final Score\n"
    "    Points Possible,,,,,60,(read only),(read only)\n"
    '"Lee, Ann",11,S1,ann,Sec 1,,,\n'
    '"Roe, Ben",12,S2,ben@uni.edu,Sec 1,,,\n'
    '"Poe, Cat",13,S3,cat,Sec 2,,,\n'
    '"Fox, Dan",14,S4,dan,Sec 2,,,\n'
    '"Kim, Eve",15,S5,eve,Sec 2,,,\n'
    '"Student, Test",16,,test_student,Sec 1,,,\n'
)


@pytest.mark.parametrize("name", ["othello", "tictactoe"])
def test_moodle_gets_each_counted_grade_after_the_late_policy_and_feedback_saying_so(course, name):
    expected = by_hand()
    result = CliRunner().invoke(main, ["export", "moodle", "--portal", str(course), "--assignment", name])
    assert result.exit_code == 0, result.output
    got = table(result.output)
    title = {"othello": "Othello endgame lab", "tictactoe": "Tic-tac-toe lab"}[name]
    assert got[0] == ["Email address", title, f"{title} feedback"]
    rows = {r[0]: r[1:] for r in got[1:]}
    assert set(rows) == set(STUDENTS)  # each student: one without a submission too, as in Canvas's
    without = {e: rows.pop(e) for e in STUDENTS if (e, name) not in expected}
    assert all(row == ["", "no graded submission"] for row in without.values()), without
    for email, (grade, feedback) in rows.items():
        total, score, late = expected[(email, name)]
        assert grade == number(score), email
        assert feedback.startswith(f"{number(score)}/{60 if name == 'othello' else 10}; "), feedback
        assert (late == "0 late") == ("on time" in feedback), feedback
    if name == "othello":
        assert rows["ben@uni.edu"][1] == "36/60; 2 days late: 1 day of late days spent, 10% penalty (graded 40)"
        assert rows["cat@uni.edu"][1] == "45/60; on time; deadline extended by 2 days"
        assert rows["dan@uni.edu"][1] == "35/60; 4 days late: 1 day of late days spent, 30% penalty (graded 50)"
    else:
        assert rows["eve@uni.edu"][1] == "8/10; 1 day late: 1 day of late days spent"  # latest, not her best
        assert rows["dan@uni.edu"][1] == "7.5/10; 1 day late: 25% penalty (graded 10)"


def test_canvas_gets_the_grades_and_a_notes_csv_beside_them(course, tmp_path):
    expected = by_hand()
    (tmp_path / "gradebook.csv").write_text(CANVAS_ROSTER)
    out = tmp_path / "othello.csv"
    result = CliRunner().invoke(main, ["export", "canvas", "--portal", str(course), "--assignment", "othello",
                                       "--roster", str(tmp_path / "gradebook.csv"), "--column",
                                       "Othello endgame lab (77)", "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"Wrote {out}" in result.output and f"Wrote {tmp_path / 'othello-notes.csv'}" in result.output
    got = table(out.read_text())
    assert got[0] == [*CANVAS_IDS, "Othello endgame lab (77)"]  # nothing Canvas would read as another assignment
    assert got[1] == ["Points Possible", "", "", "", "", "60"]
    grades = {r[3]: r[5] for r in got[2:]}
    assert grades == {"ann": number(expected[("ann@uni.edu", "othello")][1]), "ben@uni.edu": "36", "cat": "45",
                      "dan": "35", "eve": ""}  # fmt: skip
    notes = {r[3]: r[5:] for r in table((tmp_path / "othello-notes.csv").read_text())[1:]}
    assert notes["ben@uni.edu"] == ["40", "36", "2 days late: 1 day of late days spent, 10% penalty (graded 40)", ""]
    assert notes["ann"] == ["50", "50", "on time", ""]
    assert "eve" not in notes  # no Othello submission


@pytest.mark.parametrize("lms", ["moodle", "canvas"])
def test_without_an_assignment_every_assignment_is_exported_a_csv_each(course, tmp_path, lms):
    (tmp_path / "gradebook.csv").write_text(CANVAS_ROSTER)
    roster = ["--roster", str(tmp_path / "gradebook.csv")] if lms == "canvas" else []
    out = tmp_path / "grades"
    every = CliRunner().invoke(main, ["export", lms, "--portal", str(course), "--out", str(out), *roster])
    assert every.exit_code == 0, every.output
    assert every.output.strip().splitlines()[-1] == f"Exported 3 assignments for {lms.capitalize()} to {out}"
    notes = ["othello-canvas-notes.csv", "tictactoe-canvas-notes.csv", "gomoku-canvas-notes.csv"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{n}-{lms}.csv" for n in ("othello", "tictactoe", "gomoku")] + (notes if lms == "canvas" else [])
    )
    for name in ("othello", "tictactoe", "gomoku"):
        one = CliRunner().invoke(main, ["export", lms, "--portal", str(course), "--assignment", name, *roster])
        assert (out / f"{name}-{lms}.csv").read_text() == one.output, name  # as each alone


@pytest.mark.parametrize(
    "args, message",
    [
        (["moodle"], "Error: give a run folder or --portal COURSE (one of them)"),
        (["moodle", "--portal", "{course}"], "Error: --portal without --assignment exports every assignment, a CSV "
                                             "each: give --out FOLDER"),
        (["moodle", "--portal", "{course}", "--out", "{moodle}"], "Error: --out {moodle} is a file: give a folder"),
        (["moodle", "--portal", "{course}", "--assignment", "chess"], "Error: the course has no assignment 'chess': "
                                                                       "give one of othello, tictactoe, gomoku"),
        (["canvas", "--portal", "{course}", "--assignment", "othello", "--roster", "{moodle}"],
         "Error: the roster is Moodle's: give the gradebook Canvas exported"),
        (["moodle", "--portal", "{empty}", "--assignment", "othello"], "Error: no portal database at"),
    ],
)  # fmt: skip
def test_a_portal_export_that_cannot_be_made_is_one_line(course, tmp_path, args, message):
    (tmp_path / "moodle.csv").write_text("First name,Last name,Email address\nAnn,Lee,ann@uni.edu\n")
    if "{empty}" in args:
        make_demo_course(tmp_path / "empty")  # a course never served: no database
    given = [a.format(course=course, moodle=tmp_path / "moodle.csv", empty=tmp_path / "empty") for a in args]
    result = CliRunner().invoke(main, ["export", *given])
    expected = message.format(moodle=tmp_path / "moodle.csv")
    assert result.exit_code == 1 and result.output.startswith(expected), result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.slow  # a server of its own: 3-6 s
def test_the_class_page_and_its_json_give_the_exports_to_staff_only(course, tmp_path):
    from portal_server import Client, Server

    server = Server(course, tmp_path)
    try:
        staff = Client(server.url)
        staff.sign_in(server.link)
        cli = CliRunner().invoke(main, ["export", "moodle", "--portal", str(course), "--assignment", "othello"])
        moodle = staff.get("/api/class/othello/moodle.csv").json()
        assert moodle["csv"] == cli.output and moodle["notes"] is None and moodle["not_final"] == []
        assert staff.html("/class/othello/moodle.csv").text == cli.output
        form = staff.html("/class/exports").text  # the LMS exports: a page of their own
        assert 'action="/class/othello/canvas.csv"' in form and 'href="/class/othello/moodle.csv"' in form
        roster = {"roster": ("gradebook.csv", CANVAS_ROSTER.encode(), "text/csv")}
        canvas = staff.post("/class/othello/canvas.csv", {"column": "Othello endgame lab (77)"}, files=roster).json()
        assert table(canvas["csv"])[0] == [*CANVAS_IDS, "Othello endgame lab (77)"]
        assert {r[3]: r[5] for r in table(canvas["csv"])[2:]}["ben@uni.edu"] == "36"
        notes = staff.http.post("/class/othello/canvas.csv", data={"csrf": staff.csrf, "part": "notes"}, files=roster,
                                headers={"Accept": "text/html"})  # fmt: skip
        assert notes.status_code == 200 and notes.text == canvas["notes"].replace(" (77)", "")
        assert 'filename="othello-canvas-notes.csv"' in notes.headers["content-disposition"]
        assert staff.post("/class/othello/canvas.csv", files=roster, csrf=False).status_code == 403
        missing = staff.post("/class/othello/canvas.csv")
        assert missing.status_code == 400 and "Canvas finds students by its IDs" in missing.json()["error"]
        student = Client(server.url)
        student.sign_in(staff.post("/class/links", {"email": "ben@uni.edu"}).json()["links"][0]["link"])
        assert student.get("/class/othello/moodle.csv").status_code == 403
        assert student.post("/class/othello/canvas.csv", files=roster).status_code == 403
    finally:
        server.stop()


def moved_class(folder: Path) -> tuple[Path, dict[str, str]]:
    """This class after the instructor moved Othello's deadline 4 days earlier (``grader portal
    sync``) and reran Ben's Othello submissions (not graded again yet); the submissions' ids."""
    make_class(folder)
    early = OTHELLO_DUE - dt.timedelta(days=4)
    text = (folder / "course.yaml").read_text()
    (folder / "course.yaml").write_text(text.replace(f"deadline: {OTHELLO_DUE:%Y-%m-%d %H:%M}",
                                                     f"deadline: {early:%Y-%m-%d %H:%M}"))  # fmt: skip
    sync(folder, default_url(folder))
    db = sqlite3.connect(folder / ".portal" / "portal.sqlite3")
    ids = {email: sid for sid, email in db.execute("SELECT s.id, u.email FROM submissions s JOIN users u ON "
                                                    "u.id = s.user_id WHERE s.assignment = 'othello'")}  # fmt: skip
    db.execute("UPDATE submissions SET status = 'queued', change_reason = 'the instructor reran it' "
               "WHERE assignment = 'othello' AND user_id = (SELECT id FROM users WHERE email = 'ben@uni.edu')")  # fmt: skip
    db.commit()
    db.close()
    return folder, ids


@pytest.mark.slow  # a server of its own and a browser: 5-10 s
def test_every_view_and_export_says_the_same_of_a_grade_after_a_moved_deadline_and_a_rerun(tmp_path, chromium):
    course, ids = moved_class(tmp_path / "course")
    from portal_server import Client, Server

    server = Server(course, tmp_path)
    try:
        staff = Client(server.url)
        staff.sign_in(server.link)
        cells = {s["email"]: s["assignments"]["othello"] for s in staff.get("/api/class").json()["students"]}
        ann, ben, cat = cells["ann@uni.edu"], cells["ben@uni.edu"], cells["cat@uni.edu"]
        # Ann uploaded 5 hours before the old deadline: 4 days late by the new one, 1 late day, 30%
        assert ann["late"] is True and ann["days_late"] == 4 and ann["score"] == 35 and ann["final"] is True
        assert ann["why"] == "4 days late: 1 day of late days spent, 30% penalty (graded 50)"
        assert cat["extension"] == 2 and cat["why"].endswith("; deadline extended by 2 days") and cat["late"] is True
        assert ben["final"] is False and ben["not_final"] == "being rerun: its new result is not in yet"
        history = staff.get("/api/class/othello/students/ann@uni.edu").json()["submissions"]
        assert [(h["late"], h["days_late"], h["why"]) for h in history] == [(True, 4, ann["why"])]
        assert staff.get(f"/api/s/{ids['ann@uni.edu']}").json()["late"] is True

        got = table(staff.html("/class.csv").text)
        head = got[0]
        rows = {r[1]: dict(zip(head, r)) for r in got[1:]}
        assert rows["ann@uni.edu"]["othello late"] == "yes" and rows["ann@uni.edu"]["othello why"] == ann["why"]
        assert rows["cat@uni.edu"]["othello why"] == cat["why"]
        assert rows["ben@uni.edu"]["othello not final"] == ben["not_final"]

        moodle = staff.get("/api/class/othello/moodle.csv").json()
        lines = {r[0]: r[1:] for r in table(moodle["csv"])[1:]}
        assert "ben@uni.edu" not in lines  # not final: Moodle leaves his grade as it is
        assert moodle["not_final"] == [{"email": "ben@uni.edu", "why": ben["not_final"]}]
        assert lines["ann@uni.edu"] == ["35", f"35/60; {ann['why']}"] and lines["cat@uni.edu"][1].endswith(cat["why"])
        assert lines["eve@uni.edu"] == ["", "no graded submission"]  # kept, as Canvas keeps her
        roster = {"roster": ("gradebook.csv", CANVAS_ROSTER.encode(), "text/csv")}
        canvas = staff.post("/class/othello/canvas.csv", files=roster).json()
        grades = {r[3]: r[5] for r in table(canvas["csv"])[2:]}
        assert grades["ben@uni.edu"] == "" and grades["ann"] == "35" and grades["eve"] == ""  # not final: left out
        notes = {r[3]: r[5:] for r in table(canvas["notes"])[1:]}
        assert notes["ann"][2] == ann["why"] and notes["ben@uni.edu"][3] == ben["not_final"]

        link = CliRunner().invoke(main, ["portal", "link", "instructor@example.edu", str(course)]).output
        browser = chromium.new_context(java_script_enabled=False).new_page()
        browser.goto(re.search(r"(http://\S+/link/\S+)", link).group(1))
        with browser.expect_navigation():
            browser.click("#signin")
        browser.goto(f"{server.url}/class")

        def cell(email: str):  # the student's Othello cell: the column after their name
            return browser.locator("#class tbody tr", has_text=email).locator("td").nth(1)

        assert "late 4d" in cell("ann@uni.edu").inner_text() and "ext +" not in cell("ann@uni.edu").inner_text()
        assert cell("ann@uni.edu").locator("abbr.late").get_attribute("title") == ann["why"]
        assert "ext +2d" in cell("cat@uni.edu").inner_text()
        assert cell("cat@uni.edu").locator("abbr.ext").get_attribute("title") == "deadline extended by 2 days"
        assert "not final" in cell("ben@uni.edu").inner_text()
        assert ben["not_final"] in cell("ben@uni.edu").locator("abbr.nf").get_attribute("title")

        assert staff.get(f"/api/s/{ids['ann@uni.edu']}").json()["private_shown"] is False
        staff.post("/class/release", {"assignment": "othello"})
        assert staff.get(f"/api/s/{ids['ann@uni.edu']}").json()["private_shown"] is True
    finally:
        server.stop()
