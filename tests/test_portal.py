"""The course portal (grader serve) end to end: a real server process on a free port, real
HTTP, real grading of real scripts; and attacks on it: another student's submission, a form
without its CSRF token, an upload over the limit, a private test's board, markup in output."""

from __future__ import annotations

import contextlib
import csv
import datetime
import io
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import threading
import time
import zipfile
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select  # noqa: E402

from grader.config import Config  # noqa: E402
from grader.errors import GraderError  # noqa: E402
from grader.files import SHARE  # noqa: E402
from grader.grading import gradescope, report  # noqa: E402
from grader.grading.plans import new_plan, write_plan_file  # noqa: E402
from grader.grading.run import grade, grade_class  # noqa: E402
from grader.grading.runfolder import RunFolder  # noqa: E402
from grader.portal.accounts.roster import RosterEntry, import_roster, read_roster  # noqa: E402
from grader.portal.course.course import load_course, make_demo_course  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.models import User  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NEGAMAX = ROOT / "submissions" / "negamax.py"
GOMOKU = ROOT / "submissions" / "gomoku"
WRONG = ROOT / "submissions" / "wrong_score.py"
STUDENTS = [(f"s{i}@example.edu", f"Student {i}") for i in range(1, 7)]
UPLOAD_KB = 16
GRADED_WITHIN = 180  # seconds: a loaded machine grades 10 boards in far less


def make_course(folder: Path, per_day: int = 3) -> Path:
    """The demo course with a roster of six students, a small upload limit and ``per_day``
    uploads; its config.yaml names the program an upload holding several runs (Gomoku.py)."""
    make_demo_course(folder)
    (folder / "config.yaml").write_text("entry: Gomoku.py\n")
    (folder / "roster.csv").write_text("Email,Name\n" + "".join(f"{e},{n}\n" for e, n in STUDENTS))
    text = (folder / "course.yaml").read_text()
    text = text.replace("upload_kb: 256", f"upload_kb: {UPLOAD_KB}").replace("per_day: 10", f"per_day: {per_day}", 1)
    (folder / "course.yaml").write_text(text)
    return folder


class Server:
    """``grader serve [COURSE] --port 0`` as its own process; its address and instructor link read from its output."""

    def __init__(self, course: Path | None, cwd: Path, database: str | None = None, *options: str):
        args = [sys.executable, "-m", "grader", "serve", *([str(course)] if course else []), "--port", "0", *options]
        if database:
            args += ["--database", database]
        self.proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            m = re.match(r"One-time sign-in link for (\S+): (https?://\S+)", line)
            if m:
                self.link = m.group(2)
                self.url = re.search(r"Portal at (http://\S+)/", "".join(self.lines)).group(1)
                threading.Thread(target=self._drain, daemon=True).start()
                self._wait_listening()
                return
        self.stop()
        raise AssertionError("the server did not start:\n" + "".join(self.lines))

    def _drain(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    def _wait_listening(self) -> None:
        for _ in range(100):
            try:
                httpx.get(self.url + "/signin", timeout=5)
                return
            except httpx.TransportError:
                time.sleep(0.1)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Client:
    """A browser's part over HTTP: its cookies, the session's CSRF token, JSON answers."""

    def __init__(self, url: str):
        self.url = url
        self.http = httpx.Client(base_url=url, headers={"Accept": "application/json"}, timeout=30)
        self.csrf = ""

    def get(self, path: str, **kw) -> httpx.Response:
        r = self.http.get(path, **kw)
        if r.headers.get("content-type", "").startswith("application/json"):
            self.csrf = r.json().get("csrf", self.csrf)
        return r

    def html(self, path: str) -> httpx.Response:
        return self.http.get(path, headers={"Accept": "text/html"})

    def post(self, path: str, data: dict | None = None, csrf: bool = True, **kw) -> httpx.Response:
        fields = dict(data or {})
        if csrf:
            fields["csrf"] = self.csrf
        r = self.http.post(path, data=fields, **kw)
        if r.headers.get("content-type", "").startswith("application/json"):
            self.csrf = r.json().get("csrf", self.csrf)
        return r

    def sign_in(self, link: str) -> None:
        path = link[len(self.url) :]
        assert self.get(path).status_code == 200
        r = self.post(path)
        assert r.status_code == 200, r.text
        self.get("/")

    def upload(self, script: Path | bytes, name: str = "lab.py", assignment: str = "othello", **kw) -> httpx.Response:
        content = script if isinstance(script, bytes) else script.read_bytes()
        return self.post(f"/a/{assignment}", files={"script": (name, content, "text/x-python")}, **kw)

    def graded(self, sid: str) -> dict:
        deadline = time.monotonic() + GRADED_WITHIN
        while time.monotonic() < deadline:
            data = self.get(f"/s/{sid}").json()
            if data["status"] in ("graded", "failed"):
                return data
            time.sleep(0.3)
        raise AssertionError(f"submission {sid} not graded within {GRADED_WITHIN} s: {data}")


@pytest.fixture(scope="module")
def portal(tmp_path_factory):
    """One server for the module's tests: the course, the server, the instructor and each student's client."""
    tmp = tmp_path_factory.mktemp("portal")
    course = make_course(tmp / "course")
    server = Server(course, tmp)
    instructor = Client(server.url)
    instructor.sign_in(server.link)
    links = instructor.post("/class/links").json()["links"]
    students = {}
    for entry in links:
        c = Client(server.url)
        c.sign_in(entry["link"])
        students[entry["email"]] = c
    yield {"course": load_course(course), "server": server, "instructor": instructor, "students": students, "tmp": tmp}
    server.stop()


def library_result(course, script: Path, assignment: str = "othello"):
    """What grader.grading gives for the script on the assignment's plan and settings."""
    a = course.assignments[assignment]
    return grade(script, a.plan, course.settings(a))


@pytest.fixture(scope="module")
def graded_pair(portal):
    """negamax.py and wrong_score.py, each uploaded by student 1 and graded by the portal."""
    me = portal["students"]["s1@example.edu"]
    out = {}
    for script in (NEGAMAX, WRONG):
        r = me.upload(script, name=script.name)
        assert r.status_code == 201, r.text
        out[script.name] = me.graded(r.json()["id"])
    return out


@pytest.mark.parametrize("script", [NEGAMAX, WRONG], ids=["negamax", "wrong_score"])
def test_the_portal_gives_the_verdicts_grade_gives(portal, graded_pair, script):
    seen = graded_pair[script.name]
    assert seen["status"] == "graded"
    course = portal["course"]
    plan = course.assignments["othello"].plan
    expected = library_result(course, script)
    public = "".join(t.symbol for t in expected.tests if plan.is_public(t.index))
    assert seen["public_symbols"] == public
    assert seen["public_total"] == sum(t.verdict.credit for t in expected.tests if plan.is_public(t.index))
    offending = report.offending_report(expected, public_only=True)
    for line in offending.splitlines():
        if line.startswith(("Test ", "board ", "exact:", "verdict:")) or line == "All tests perfect.":
            assert line in seen["feedback"], line
    staff = portal["instructor"].get(f"/s/{seen['id']}").json()
    assert staff["symbols"] == expected.symbols and staff["total"] == expected.total
    if script == WRONG:
        assert expected.total < expected.max_total  # the check would pass on any answer otherwise


@pytest.mark.slow  # 100 tests, graded twice (by the portal and by grade): 10-15 s
def test_the_tictactoe_lab_is_graded_as_grade_grades_it(portal):
    script = ROOT / "submissions" / "tictactoe" / "can_lose.py"
    me = portal["students"]["s6@example.edu"]
    seen = me.graded(me.upload(script, name="can_lose.py", assignment="tictactoe").json()["id"])
    expected = library_result(portal["course"], script, "tictactoe")
    staff = portal["instructor"].get(f"/s/{seen['id']}").json()
    assert staff["symbols"] == expected.symbols and staff["total"] == expected.total < expected.max_total
    plan = portal["course"].assignments["tictactoe"].plan
    assert seen["public_symbols"] == "".join(t.symbol for t in expected.tests if plan.is_public(t.index))


def gtp_archive(program: Path, *helpers: Path) -> bytes:
    """A .tar.gz of a program folder as a student packs it (tar czf lab.tar.gz lab): the program as
    Gomoku.py (the course's config.yaml names it), its helpers beside it."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        tf.add(program, "lab/Gomoku.py")
        for helper in helpers:
            tf.add(helper, f"lab/{helper.name}")
    return out.getvalue()


def gradescope_of(course, folder: Path) -> tuple[str, dict]:
    """What 'grader gradescope --game gomoku --plan gomoku.gtp' gives the program in ``folder``:
    each test's symbol (from the grading call it makes) and its results.json."""
    from grader.labs import gradescope_results
    from grader.regression.runs import regress_submission
    from grader.runs.submissions import find_submission_folder

    a = course.assignments["gomoku"]
    sub = find_submission_folder(folder, set(), course.config.entry)
    student = regress_submission(sub, [a.plan.path], a.plan.game)
    results = gradescope_results(folder, course.config, game_name="gomoku", plan_name=str(a.plan.path))
    return student.results[0].symbols, results


@pytest.mark.parametrize("upload", ["solver.py", "wrong_winner.tar.gz", "command.zip", "starter.zip"])
def test_the_gomoku_lab_over_gtp_gives_the_verdicts_gradescope_gives(portal, upload, tmp_path):
    """A GTP program, uploaded alone or as an archive of its folder (its program the one
    config.yaml's entry names, or the one its COMMAND file starts), graded by the portal as
    'grader gradescope' grades it on the assignment's regression file."""
    folder = tmp_path / "program"
    folder.mkdir()
    if upload == "solver.py":
        content = (GOMOKU / "solver.py").read_bytes()
        (folder / "solver.py").write_bytes(content)
    elif upload in ("wrong_winner.tar.gz", "command.zip"):
        if upload == "wrong_winner.tar.gz":
            content = gtp_archive(GOMOKU / "wrong_winner.py", GOMOKU / "solver.py")
        else:  # no Gomoku.py: the program is the one COMMAND starts
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w") as zf:
                for name in ("wrong_winner.py", "solver.py"):
                    zf.write(GOMOKU / name, f"lab/{name}")
                zf.writestr("lab/COMMAND", "python3 wrong_winner.py\n")
            content = out.getvalue()
        (folder / "Gomoku.py").write_bytes((GOMOKU / "wrong_winner.py").read_bytes())
        (folder / "solver.py").write_bytes((GOMOKU / "solver.py").read_bytes())
    else:  # the course's starter code (numpy, four modules), zipped as 'zip -r starter.zip gomoku_lab'
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted((ROOT / "tests" / "gomoku_lab").glob("*.py")):
                zf.write(f, f"gomoku_lab/{f.name}")
                (folder / f.name).write_bytes(f.read_bytes())
        content = out.getvalue()
    me = portal["students"]["s2@example.edu"]
    r = me.upload(content, name=upload, assignment="gomoku")
    assert r.status_code == 201, r.text
    seen = me.graded(r.json()["id"])
    symbols, results = gradescope_of(portal["course"], folder)
    tests = portal["course"].assignments["gomoku"].plan
    staff = portal["instructor"].get(f"/s/{seen['id']}").json()
    assert staff["symbols"] == symbols and staff["total"] == results["score"] and staff["max_total"] == 100
    public = "".join(sym for n, sym in zip(tests.numbers, symbols) if tests.is_public(n))
    assert seen["public_symbols"] == public and seen["public_tests"] == 4 and seen["private_tests"] == 6
    shown = [t for t in results["tests"] if "private test" not in t["name"]]
    assert len(shown) == 4
    for t in shown:  # each public test's line, as Gradescope's output shows it
        number = t["number"]
        assert re.search(rf"^  {re.escape(t['output'][0])} +{number} ", seen["feedback"], re.M), (t, seen["feedback"])
    if upload in ("wrong_winner.tar.gz", "command.zip"):
        assert "-" in symbols and "-" in seen["public_symbols"]  # the check would pass on any program otherwise
    else:  # the example's solver, and the starter code's: both solve every test
        assert symbols == "+" * 10


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


def test_a_hostile_archive_is_refused_at_upload_and_nothing_lands_outside(portal, tmp_path):
    """A zip whose member climbs out of its folder: refused at once in one line (400), not
    queued, not counted; no file of that name anywhere around the course."""
    me = portal["students"]["s6@example.edu"]
    before = me.get("/a/gomoku").json()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("Gomoku.py", "print(1)\n")
        zf.writestr("../../../escaped-by-upload.py", "print(2)\n")
    r = me.upload(out.getvalue(), name="lab.zip", assignment="gomoku")
    assert r.status_code == 400
    assert r.json()["error"] == ("the archive's member '../../../escaped-by-upload.py' climbs out of the folder "
                                 "with '..': pack only the program's folder, by relative paths")  # fmt: skip
    page = me.html("/a/gomoku")
    assert page.status_code == 200
    after = me.get("/a/gomoku").json()
    assert len(after["submissions"]) == len(before["submissions"]) and after["left_today"] == before["left_today"]
    course = portal["course"].folder
    assert not any(list(root.rglob("escaped-by-upload.py")) for root in (course, portal["tmp"]))
    tmp = Path(tempfile.gettempdir())  # where the portal checks an upload: three folders up is /
    assert not list(tmp.glob("*escaped-by-upload.py")) and not list(tmp.glob("*/escaped-by-upload.py"))
    assert not Path("/escaped-by-upload.py").exists()
    r = me.upload(b"my notes", name="notes.txt", assignment="gomoku")
    assert r.status_code == 400 and "not a program the lab runs" in r.json()["error"]


def test_a_student_sees_earlier_submissions_and_uploads_left_today(portal, graded_pair):
    page = portal["students"]["s1@example.edu"].get("/a/othello").json()
    ids = [s["id"] for s in page["submissions"]]
    assert {graded_pair[n]["id"] for n in ("negamax.py", "wrong_score.py")} <= set(ids)
    assert page["left_today"] == page["per_day"] - len(ids)
    html = portal["students"]["s1@example.edu"].html(f"/s/{graded_pair['negamax.py']['id']}").text
    assert graded_pair["negamax.py"]["public_symbols"] in html and "Receipt" in html


def test_the_class_table_shows_each_students_counted_submission(portal, graded_pair):
    table = portal["instructor"].get("/class").json()
    row = next(s for s in table["students"] if s["email"] == "s1@example.edu")
    latest = graded_pair["wrong_score.py"]  # uploaded last: the one that counts
    assert row["assignments"]["othello"]["submission"] == latest["id"]
    staff = portal["instructor"].get(f"/s/{latest['id']}").json()
    assert row["assignments"]["othello"]["symbols"] == staff["symbols"]
    assert all(s["assignments"]["othello"] is None for s in table["students"] if s["email"] != "s1@example.edu")


def test_staff_see_a_students_history_and_the_queue_and_a_student_neither(portal, graded_pair):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    history = instructor.get("/class/othello/students/s1@example.edu").json()
    rows = history["submissions"]
    assert {graded_pair[n]["id"] for n in ("negamax.py", "wrong_score.py")} <= {r["id"] for r in rows}
    assert [r["received_at"] for r in rows] == sorted((r["received_at"] for r in rows), reverse=True)
    graded = [r for r in rows if r["status"] == "graded" or r["previous"]]
    assert [r["counts"] for r in rows if r["counts"]] == [True] and graded[0]["counts"]  # the latest graded
    staff = instructor.get(f"/s/{graded_pair['negamax.py']['id']}").json()
    row = next(r for r in rows if r["id"] == staff["id"])
    assert (row["symbols"], row["total"], row["late"], row["why"]) == (staff["symbols"], staff["total"], False, "")
    assert history["student"] == {"name": "Student 1", "email": "s1@example.edu"}
    page = instructor.html("/class/othello/students/s1@example.edu").text
    assert staff["symbols"] in page and "Student 1" in page
    assert instructor.get("/class/othello/students/nobody@example.edu").status_code == 404
    assert instructor.get("/class/nope/students/s1@example.edu").status_code == 404
    queue = instructor.get("/class/queue").json()
    assert queue["queued"] + queue["running"] == len(queue["jobs"])
    assert all(j["state"] in ("queued", "running") and (j["worker"] is not None) == (j["state"] == "running")
               for j in queue["jobs"])  # fmt: skip
    assert "Queue" in instructor.html("/class/queue").text
    html = {"Accept": "text/html"}
    for path in ("/class/queue", "/class/othello/students/s1@example.edu", "/class/othello/students/s2@example.edu"):
        assert me.get(path).status_code == 404, path  # a student's own history included: it is the staff's page
        r = me.http.get("/api" + path, headers=html)
        assert r.status_code == 404 and r.headers["content-type"].startswith("application/json"), path
        assert me.html(path).status_code == 404 and graded_pair["negamax.py"]["id"] not in me.html(path).text
        assert Client(portal["server"].url).get(path).status_code == 401


def test_an_instructor_imports_a_roster_in_the_browser(portal):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    sheet = b"Student,SIS Login ID,Role\nStudent 6,s6@example.edu,Student\nTess Assistant,TA1@example.edu,TA\n"
    files = {"roster": ("gradebook export.csv", sheet, "text/csv")}
    assert me.post("/class/roster", files=files).status_code == 404  # instructors only
    assert instructor.post("/class/roster", files=files, csrf=False).status_code == 403
    r = instructor.post("/class/roster", files=files)
    assert r.status_code == 200, r.text
    assert {k: v for k, v in r.json().items() if k != "csrf"} == {"file": "gradebook export.csv", "people": 2,
                                                                  "added": 1, "updated": 1}  # fmt: skip
    log = instructor.get("/class/audit").json()["entries"]
    assert log[-1]["action"] == "roster upload" and log[-1]["detail"] == "gradebook export.csv: 2 people, 1 added"
    r = instructor.post("/class/roster", files=files)
    assert r.json()["added"] == 0  # imported again: nothing new
    assert "ta1@example.edu" not in [s["email"] for s in instructor.get("/class").json()["students"]]  # a TA
    bad = {"roster": ("r.csv", b"Email,Name\ns9@example.edu,Nine\nnine-at-example,Nine\n", "text/csv")}
    r = instructor.post("/class/roster", files=bad)
    assert r.status_code == 400 and r.json()["error"] == (
        "r.csv: line 3: 'nine-at-example' is not an e-mail address: give each person's address in the e-mail column"
    )
    assert "s9@example.edu" not in instructor.get("/class").text  # nothing of a bad file is imported
    page = instructor.http.post("/class/roster", data={"csrf": instructor.csrf}, files=bad,
                                headers={"Accept": "text/html"})  # fmt: skip
    assert page.status_code == 400 and "line 3: &#39;nine-at-example&#39; is not an e-mail address" in page.text
    latin = {"roster": ("r.csv", "Email,Name\nz@example.edu,Zoë\n".encode("latin-1"), "text/csv")}
    r = instructor.post("/class/roster", files=latin)
    assert r.status_code == 400 and r.json()["error"] == "r.csv: not UTF-8 text: export the roster as CSV (UTF-8)"


def test_an_api_token_is_good_for_the_arenas_and_the_ladders_api_only(portal):
    """A token made for ``grader arena`` does not sign an instructor's other requests (sign-in
    links for the class, the roster, exports) nor make more tokens: a leaked one reaches no further."""
    instructor = portal["instructor"]
    token = instructor.post("/arena/token", {"label": "cli"}).json()["token"]
    signed = httpx.Client(base_url=portal["server"].url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    try:
        for path in ("/api/arena", "/api/ladders"):  # what the command line asks
            assert signed.get(path).status_code == 200, path
        for method, path in (("POST", "/api/class/links"), ("GET", "/api/class"), ("GET", "/api/class.csv"),
                             ("POST", "/api/arena/token"), ("GET", "/api/")):  # fmt: skip
            r = signed.request(method, path, data={"email": "s1@example.edu", "label": "more"})
            assert r.status_code == 403 and "/link/" not in r.text and "grader_" not in r.text, (path, r.text)
            assert r.json()["error"].startswith("an API token signs the arena's and the ladders' requests only"), path
    finally:
        signed.close()


def test_an_arena_id_too_large_for_the_database_is_one_line_not_a_server_error(portal):
    """An id past what a table holds (SQLite: OverflowError) answers 404 or 400 in one line."""
    me, huge = portal["students"]["s2@example.edu"], "9" * 25
    for path in (f"/api/arena/e/{huge}", f"/api/arena/g/{huge}", f"/api/arena/g/{huge}/game.ggf"):
        r = me.get(path)
        assert r.status_code == 404 and "larger than any id" in r.json()["error"], path
    eid = me.post("/api/arena", {"name": "huge", "protocol": "nboard", "game": "othello"}).json()["id"]
    r = me.post(f"/api/arena/e/{eid}/tests", {"new": huge, "base": "1"})
    assert r.status_code == 400 and r.json()["error"].startswith(f"new '{huge}' is too large a number"), r.text


def test_a_roster_cannot_change_its_uploaders_own_role(portal):
    """An instructor's roster making themselves a student (so the course could lose its last
    instructor) is refused whole, and they stay an instructor."""
    instructor, me = portal["instructor"], portal["course"].instructors[0]
    sheet = f"Email,Name,Role\ns5@example.edu,Student Five,TA\n{me.upper()},Me,Student\n".encode()
    r = instructor.post("/class/roster", files={"roster": ("r.csv", sheet, "text/csv")})
    assert r.status_code == 400 and r.json()["error"] == (
        f"the roster makes you ({me.lower()}) a student: a roster cannot change its uploader's own role; "
        "give your row the role instructor"
    )
    assert instructor.get("/class/audit").status_code == 200  # still staff
    assert "s5@example.edu" in [s["email"] for s in instructor.get("/class").json()["students"]]  # nothing written
    same = f"Email,Name,Role\n{me},{me.split('@')[0]},Instructor\n".encode()
    assert instructor.post("/class/roster", files={"roster": ("r.csv", same, "text/csv")}).status_code == 200


def test_a_roster_cannot_demote_an_instructor_course_yaml_names(tmp_path):
    """course.yaml's instructors keep their role: a roster making one of them a student (the
    uploader being another instructor) is refused whole; only course.yaml changes it."""
    engine = connect(f"sqlite:///{tmp_path / 'portal.sqlite3'}")
    upgrade(engine)
    make = sessions(engine)
    yaml_names = ("head@example.edu", "second@example.edu")
    with make.begin() as s:
        import_roster(s, [RosterEntry(e, e, "instructor") for e in yaml_names])
    sheet = read_roster("Email,Name,Role\nnew@example.edu,New,Student\nSECOND@example.edu,Two,Student\n")
    with pytest.raises(GraderError) as e, make.begin() as s:
        head = s.scalar(select(User).where(User.email == "head@example.edu"))
        import_roster(s, sheet, head, yaml_names)
    assert str(e.value) == ("the roster makes second@example.edu a student, but course.yaml names them an "
                            "instructor: give their row the role instructor, or change course.yaml")  # fmt: skip
    with make() as s:
        assert {u.email: u.role for u in s.scalars(select(User))} == dict.fromkeys(yaml_names, "instructor")
    engine.dispose()


@pytest.mark.slow  # five argon2 hashings: over a second on a loaded machine
def test_changing_a_password_needs_the_current_one(portal):
    """A stolen session cannot lock the owner out: a password once set is changed only with it
    (a wrong one counts against the sign-in limit, as a wrong sign-in does)."""
    me = portal["students"]["s4@example.edu"]
    assert me.post("/password", {"password": "first password 1"}).json() == {"password_set": True}  # none before
    r = me.post("/password", {"password": "thief's password"})
    assert r.status_code == 403 and r.json()["error"] == "give your current password ('current') to change it"
    r = me.post("/password", {"current": "a guess at it", "password": "thief's password"})
    assert r.status_code == 403 and r.json()["error"] == "the current password is wrong: give the one you sign in with"
    assert me.post("/password", {"current": "first password 1", "password": "second password 2"}).status_code == 200
    owner = Client(portal["server"].url)
    owner.get("/signin")
    assert owner.post("/signin", {"email": "s4@example.edu", "password": "second password 2"}).status_code == 200
    page = me.html("/").text
    assert 'name="current"' in page and 'autocomplete="current-password"' in page


def _cookie(r: httpx.Response) -> list[str]:
    """The session cookie's attributes as Set-Cookie gives them (its value left out), lower case."""
    (header,) = [h for h in r.headers.get_list("set-cookie") if h.startswith("grader_session=")]
    return sorted(part.strip().lower() for part in header.split(";")[1:])


def test_the_session_cookie_is_httponly_lax_and_secure_behind_a_tls_proxy(portal):
    """Over http: HttpOnly, SameSite=Lax, not Secure; through a proxy uvicorn trusts (this
    machine, by default) that says X-Forwarded-Proto: https, Secure too."""
    url = portal["server"].url
    plain = _cookie(httpx.get(url + "/signin"))
    assert "httponly" in plain and "samesite=lax" in plain and "secure" not in plain
    proxied = _cookie(httpx.get(url + "/signin", headers={"X-Forwarded-Proto": "https"}))
    assert "httponly" in proxied and "samesite=lax" in proxied and "secure" in proxied


@pytest.mark.slow  # two servers of their own
def test_the_session_cookie_is_secure_at_an_https_public_url_and_an_untrusted_proxy_is_ignored(tmp_path):
    course = make_course(tmp_path / "course")
    public = Server(course, tmp_path, None, "--workers", "0", "--public-url", "https://grader.example.edu/")
    try:
        assert public.link.startswith("https://grader.example.edu/link/")
        assert f"Portal at {public.url}/, reached at https://grader.example.edu/ " in "".join(public.lines)
        assert "secure" in _cookie(httpx.get(public.url + "/signin"))  # the proxy's https is not needed to say so
    finally:
        public.stop()
    untrusting = Server(course, tmp_path, None, "--workers", "0", "--forwarded-allow-ips", "10.9.9.9")
    try:
        said = _cookie(httpx.get(untrusting.url + "/signin", headers={"X-Forwarded-Proto": "https"}))
        assert "secure" not in said and "httponly" in said  # this machine is no trusted proxy here
    finally:
        untrusting.stop()


def test_a_public_url_that_is_no_http_address_is_one_line(tmp_path):
    from click.testing import CliRunner

    from grader.cli import main

    result = CliRunner().invoke(main, ["serve", str(tmp_path), "--public-url", "grader.example.edu"])
    assert (result.exit_code, result.output) == (
        1, "Error: --public-url 'grader.example.edu' is no http(s) address: give https://HOST[/PATH]\n")  # fmt: skip


def test_a_student_cannot_reach_another_students_submission(portal, graded_pair):
    theirs = graded_pair["negamax.py"]["id"]
    other = portal["students"]["s2@example.edu"]
    assert len(theirs) >= 20 and re.fullmatch(r"[A-Za-z0-9_-]+", theirs)  # 128 random bits
    mine = portal["students"]["s1@example.edu"].get(f"/s/{theirs}")
    assert mine.status_code == 200
    for r in (other.get(f"/s/{theirs}"), other.html(f"/s/{theirs}")):
        assert r.status_code == 404 and theirs not in r.text and "negamax" not in r.text
    missing = other.get("/s/" + "A" * len(theirs))
    assert missing.status_code == 404 and missing.json()["error"] == other.get(f"/s/{theirs}").json()["error"]
    assert theirs not in other.get("/a/othello").text
    assert other.get("/class").status_code == 404  # the class table is staff's
    assert other.post("/class/links").status_code == 404
    anonymous = Client(portal["server"].url)
    assert anonymous.get(f"/s/{theirs}").status_code == 401
    assert other.get(f"/s/{theirs}/events").status_code == 404  # its page's live status too
    assert anonymous.get(f"/s/{theirs}/events").status_code == 401


def test_a_submissions_page_is_told_its_status_by_server_sent_events(portal, graded_pair):
    """The live update's stream (static/live.js listens to it): a graded submission's says so and ends."""
    sid = graded_pair["wrong_score.py"]["id"]
    r = portal["students"]["s1@example.edu"].get(f"/s/{sid}/events")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert r.text == "retry: 1000\ndata: graded\n\n"


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


def test_output_is_escaped_and_pages_carry_a_content_security_policy(portal):
    script = portal["tmp"] / "markup.py"
    script.write_text('print("score 0 <script>alert(1)</script>")\nprint("<b>x</b>")\n')
    me = portal["students"]["s4@example.edu"]
    sid = me.upload(script, name="<img src=x onerror=alert(2)>.py").json()["id"]
    seen = me.graded(sid)
    assert "<script>alert(1)</script>" in seen["feedback"]  # the test would pass on output never shown
    page = me.html(f"/s/{sid}")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text and "<script>alert" not in page.text
    assert "<img src=x" not in page.text and "&lt;img src=x onerror=alert(2)&gt;.py" in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert me.html("/signin").headers["content-security-policy"] == csp


def test_a_form_without_its_csrf_token_is_refused(portal):
    me = portal["students"]["s5@example.edu"]
    before = len(me.get("/a/othello").json()["submissions"])
    r = me.upload(NEGAMAX, csrf=False)
    assert r.status_code == 403 and "CSRF" in r.json()["error"]
    forged = me.post("/a/othello", {"csrf": "x" * 43}, files={"script": ("a.py", b"print(1)", "text/x-python")},
                     csrf=False)  # fmt: skip
    assert forged.status_code == 403
    assert me.post("/signout", csrf=False).status_code == 403
    assert me.post("/password", {"password": "a long new password"}, csrf=False).status_code == 403
    assert len(me.get("/a/othello").json()["submissions"]) == before
    assert me.get("/").status_code == 200  # still signed in: the forged sign-out did nothing


def _raw(url: str, request: bytes, body_after: bytes = b"") -> tuple[bytes, float]:
    """Send ``request`` (headers, perhaps a first part of the body) on a socket; the answer read."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(request)
        if body_after:
            try:
                s.sendall(body_after)
            except OSError:
                pass  # the server closed the connection: it answered already
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer, 0.0


def test_an_upload_over_the_limit_is_refused_before_its_body_is_read(portal):
    me = portal["students"]["s6@example.edu"]
    cookie = "; ".join(f"{k}={v}" for k, v in me.http.cookies.items())
    host = portal["server"].url.split("//")[1]
    head = (f"POST /a/othello HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nAccept: application/json\r\n"
            "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000000\r\n\r\n").encode()  # fmt: skip
    answer, _ = _raw(portal["server"].url, head)  # a gigabyte announced, not one byte of it sent
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    chunk = b"x" * 4096
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(UPLOAD_KB // 4 + 20))
    chunked = head.replace(b"Content-Length: 1000000000", b"Transfer-Encoding: chunked")
    answer, _ = _raw(portal["server"].url, chunked, body)  # no length said: refused once the bytes pass the limit
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    over = me.upload(b"#" * (UPLOAD_KB * 1024 + 1) + b"\n", name="big.py")
    assert over.status_code == 413 and f"{UPLOAD_KB} KiB" in over.json()["error"]
    assert me.get("/a/othello").json()["submissions"] == []
    assert me.upload(b"print(1)\n", name="../../etc/passwd").status_code == 400  # not .py: refused, never a path
    sid = me.upload(b"print(19)\n", name="../../../escape.py").json()["id"]
    assert me.get(f"/s/{sid}").json()["filename"] == "escape.py"


def test_the_daily_limit_refuses_the_upload_past_it(portal):
    me = portal["students"]["s5@example.edu"]
    per_day = portal["course"].assignments["othello"].per_day
    assert per_day == 3
    codes = []
    lock = threading.Lock()

    def one() -> None:
        c = httpx.Client(base_url=me.url, cookies=me.http.cookies, headers={"Accept": "application/json"}, timeout=30)
        r = c.post("/a/othello", data={"csrf": me.csrf}, files={"script": ("m.py", b"print(19)\n")})
        with lock:
            codes.append(r.status_code)

    threads = [threading.Thread(target=one) for _ in range(per_day + 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [201] * per_day + [429] * 3
    page = me.get("/a/othello").json()
    assert page["left_today"] == 0 and len(page["submissions"]) == per_day


def test_a_sign_in_link_works_once(portal):
    links = portal["instructor"].post("/class/links", {"email": "s6@example.edu"}).json()["links"]
    assert [entry["email"] for entry in links] == ["s6@example.edu"]
    first, second = Client(portal["server"].url), Client(portal["server"].url)
    first.sign_in(links[0]["link"])
    path = links[0]["link"][len(second.url) :]
    second.get(path)
    r = second.post(path)
    assert r.status_code == 400 and "used already" in r.json()["error"]
    assert second.get("/").status_code == 401 and second.html("/").status_code == 303  # not signed in


def test_a_password_signs_in_and_guessing_is_stopped(portal):
    me = portal["students"]["s3@example.edu"]
    assert me.post("/password", {"password": "short"}).status_code == 400
    assert me.post("/password", {"password": "correct horse battery"}).json() == {"password_set": True}
    with sqlite3.connect(portal["course"].folder / ".portal" / "portal.sqlite3") as db:
        (stored,) = db.execute("SELECT password_hash FROM users WHERE email = 's3@example.edu'").fetchone()
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    other = Client(portal["server"].url)
    other.get("/signin")
    r = other.post("/signin", {"email": "S3@example.edu", "password": "correct horse battery"})
    assert r.status_code == 200 and r.json()["signed_in"]["email"] == "s3@example.edu"
    assert other.post("/signout").status_code == 200 and other.get("/").status_code == 401
    guesser = Client(portal["server"].url)
    guesser.get("/signin")
    codes = [
        guesser.post("/signin", {"email": "s3@example.edu", "password": f"guess {i}"}).status_code for i in range(5)
    ]
    assert codes == [401] * 5
    blocked = guesser.post("/signin", {"email": "s3@example.edu", "password": "correct horse battery"})
    assert blocked.status_code == 429 and "too many failed sign-ins" in blocked.json()["error"]


def test_every_page_answers_json_and_html(portal):
    me = portal["students"]["s1@example.edu"]
    for path in ("/", "/a/othello"):
        assert me.get(path).headers["content-type"].startswith("application/json")
        assert me.html(path).headers["content-type"].startswith("text/html")
    assert portal["instructor"].html("/class").headers["content-type"].startswith("text/html")


def test_every_page_answers_json_at_its_api_path_whatever_the_accept_header(portal, graded_pair):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    sid = graded_pair["negamax.py"]["id"]
    html = {"Accept": "text/html"}
    for client, path in ((me, "/"), (me, "/a/othello"), (me, f"/s/{sid}"), (instructor, "/class"),
                         (instructor, "/class/audit"), (instructor, f"/s/{sid}")):  # fmt: skip
        api = client.http.get("/api" + path, headers=html)
        assert api.status_code == 200, (path, api.text)
        assert api.headers["content-type"].startswith("application/json"), path
        assert "content-security-policy" in api.headers
        plain = client.get(path).json()
        assert {k: v for k, v in api.json().items() if k != "csrf"} == {k: v for k, v in plain.items() if k != "csrf"}
    assert me.http.get(f"/api/s/{sid}").json()["id"] == sid
    # an upload through the API: the receipt as JSON, graded as any other
    other = portal["students"]["s2@example.edu"]
    r = other.http.post("/api/a/othello", data={"csrf": other.csrf}, headers=html,
                        files={"script": ("lab.py", WRONG.read_bytes(), "text/x-python")})  # fmt: skip
    assert r.status_code == 201 and r.json()["status"] in ("queued", "running", "graded"), r.text
    assert other.graded(r.json()["id"])["public_symbols"] == graded_pair["wrong_score.py"]["public_symbols"]
    # what a page refuses, its API path refuses, in JSON
    for client, path, status in ((other, f"/s/{sid}", 404), (me, "/class", 404), (me, "/no/such/page", 404),
                                 (Client(portal["server"].url), "/a/othello", 401)):  # fmt: skip
        r = client.http.get("/api" + path, headers=html)
        assert r.status_code == status and r.headers["content-type"].startswith("application/json"), (path, r.text)
        assert "error" in r.json() and sid not in r.text
    assert me.http.post("/api/signout", headers=html).status_code == 403  # no CSRF token: refused as the form is


def test_staff_download_the_gradescope_json_grader_gradescope_writes(portal, graded_pair):
    instructor, course = portal["instructor"], portal["course"]
    r = instructor.http.get("/class/othello/gradescope.json")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"], r.text
    data = r.json()
    assert data["assignment"] == "othello"
    mine = next(s for s in data["students"] if s["email"] == "s1@example.edu")
    assert mine["submission"] == graded_pair["wrong_score.py"]["id"]  # the counted one: the latest graded
    expected = gradescope.results_json(library_result(course, WRONG), 0.0)  # what grader gradescope writes
    got = mine["results"]
    assert got["tests"] == expected["tests"] and got["tests"]
    assert (got["score"], got["max_score"]) == (expected["score"], expected["max_score"]) and got["score"] < 10
    assert got["output"].splitlines()[1:] == expected["output"].splitlines()[1:]  # the first line names the student
    assert all(t["visibility"] == "after_published" for t in got["tests"] if t["name"].startswith("Private"))
    assert {s["email"] for s in data["students"]} <= {e for e, _ in STUDENTS}


def test_a_student_cannot_download_the_classs_results(portal, graded_pair):
    me = portal["students"]["s1@example.edu"]
    for path in ("/class/othello/gradescope.json", "/class/othello/run.zip"):
        for r in (me.get(path), me.html(path), me.http.get("/api" + path)):
            assert r.status_code == 403 and graded_pair["wrong_score.py"]["id"] not in r.text, (path, r.text)
        assert Client(portal["server"].url).get(path).status_code == 401
    assert portal["instructor"].get("/class/no-such-lab/run.zip").status_code == 404


def test_staff_download_the_run_folder_grade_class_writes_as_a_zip(portal, graded_pair, tmp_path, monkeypatch):
    course = portal["course"]
    a = course.assignments["othello"]
    with portal["instructor"].http.stream("GET", "/class/othello/run.zip") as r:
        assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
        assert "content-length" not in r.headers and r.headers["transfer-encoding"] == "chunked"  # streamed
        body = b"".join(r.iter_bytes())
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        assert all(not n.startswith("/") and ".." not in n.split("/") for n in zf.namelist())
        zf.extractall(tmp_path / "zip")
    top = tmp_path / "zip" / "othello"
    assert (top / "submissions" / "s1@example.edu" / "submission.py").read_bytes() == WRONG.read_bytes()
    theirs = grade_class([WRONG], a.plan, course.settings(a), out=tmp_path / "theirs")
    written = sorted(p.name for p in theirs.folder.path.iterdir() if p.name != "answers.jsonl")  # a cache for --resume
    assert sorted(p.name for p in (top / "run").iterdir()) == written
    monkeypatch.setenv("GRADER_KEYS", str(top / "keys"))  # the run's key came in the zip
    ours = {r.name: r for r in RunFolder.open(top / "run").results()}
    s1, expected = ours["s1@example.edu"], theirs.results[0]
    assert (s1.symbols, s1.total, s1.stopped) == (expected.symbols, expected.total, expected.stopped)
    assert [t.record()["verdict"] for t in s1.tests] == [t.record()["verdict"] for t in expected.tests]
    grades = (top / "run" / "grades.csv").read_text()
    assert grades.splitlines()[0] == (theirs.folder.path / "grades.csv").read_text().splitlines()[0]
    report = subprocess.run([sys.executable, "-m", "grader", "report", str(top / "run")], capture_output=True,
                            text=True, env={**os.environ, "GRADER_KEYS": str(top / "keys")})  # fmt: skip
    assert report.returncode == 0 and "s1@example.edu" in report.stdout, report.stderr


@pytest.mark.slow  # grades the program twice more: as grader gradescope and as grader regress
def test_staff_download_a_gtp_labs_results_as_gradescope_and_regress_write_them(portal, tmp_path, monkeypatch):
    """The Gomoku lab's Gradescope JSON is what 'grader gradescope' writes for the counted
    program, and its run.zip the run folder 'grader regress' writes for the class."""
    from grader.portal.course.gtplab import regress_settings
    from grader.regression.runs import RegressFolder, regress_class

    course, instructor = portal["course"], portal["instructor"]
    a = course.assignments["gomoku"]
    me = portal["students"]["s5@example.edu"]
    r = me.upload(gtp_archive(GOMOKU / "wrong_winner.py", GOMOKU / "solver.py"), name="lab.tar.gz", assignment="gomoku")
    assert me.graded(r.json()["id"])["status"] == "graded"
    program = tmp_path / "class" / "s5@example.edu"
    program.mkdir(parents=True)
    (program / "Gomoku.py").write_bytes((GOMOKU / "wrong_winner.py").read_bytes())
    (program / "solver.py").write_bytes((GOMOKU / "solver.py").read_bytes())
    symbols, expected = gradescope_of(course, program)
    expected = json.loads(json.dumps(expected).replace(str(a.plan.path), a.plan.name))  # the portal names no path
    r = instructor.http.get("/class/gomoku/gradescope.json")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"], r.text
    got = next(s for s in r.json()["students"] if s["email"] == "s5@example.edu")["results"]
    assert "-" in symbols and got["tests"] and got["tests"] == expected["tests"]
    assert {k: v for k, v in got.items() if k != "execution_time"} == {
        k: v for k, v in expected.items() if k != "execution_time"}  # fmt: skip
    with instructor.http.stream("GET", "/class/gomoku/run.zip") as r:
        assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
        body = b"".join(r.iter_bytes())
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        zf.extractall(tmp_path / "zip")
    top = tmp_path / "zip" / "gomoku"
    theirs = regress_class([tmp_path / "class"], [a.plan.path], a.plan.game, regress_settings(course.config, a.limits),
                           out=tmp_path / "theirs", entry=course.config.entry)  # fmt: skip
    assert sorted(p.name for p in (top / "run").iterdir()) == sorted(p.name for p in theirs.folder.path.iterdir())
    monkeypatch.setenv("GRADER_KEYS", str(top / "keys"))  # the run's key came in the zip
    ours = {s.name: s for s in RegressFolder.open(top / "run").results()}
    (expected_student,) = theirs.students
    mine = ours["s5@example.edu"]
    assert [(x.file, x.symbols, x.total) for x in mine.results] == [
        (a.plan.name, x.symbols, x.total) for x in expected_student.results]  # fmt: skip
    assert mine.results[0].symbols == symbols
    grades = (top / "run" / "grades.csv").read_text().splitlines()
    assert grades[0] == (theirs.folder.path / "grades.csv").read_text().splitlines()[0].replace(
        str(a.plan.path), a.plan.name
    )
    report = subprocess.run([sys.executable, "-m", "grader", "report", str(top / "run")], capture_output=True,
                            text=True, env={**os.environ, "GRADER_KEYS": str(top / "keys")})  # fmt: skip
    assert report.returncode == 0 and "s5@example.edu" in report.stdout, report.stderr


def test_an_instructor_reruns_a_students_counted_submission(portal, graded_pair):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    sid = graded_pair["wrong_score.py"]["id"]  # s1's counted submission: the latest graded
    left = me.get("/a/othello").json()["left_today"]
    assert me.post("/class/rerun", {"assignment": "othello"}).status_code == 404  # instructors only
    assert (
        instructor.post("/class/rerun", {"assignment": "othello", "email": "s1@example.edu"}, csrf=False).status_code
        == 403
    )
    r = instructor.post("/class/rerun", {"assignment": "othello", "email": "s1@example.edu"})
    assert r.status_code == 200, r.text
    assert r.json()["rerun"] == [{"email": "s1@example.edu", "submission": sid, "reason": "rerun by the instructor"}]
    # while it is rerun (or once it is), it still counts, with its old result meanwhile; asked again, nothing
    # else is rerun in its place (an earlier submission of s1's)
    again = instructor.post("/class/rerun", {"assignment": "othello", "email": "s1@example.edu"}).json()["rerun"]
    assert all(entry["submission"] == sid for entry in again)
    row = next(s for s in instructor.get("/class").json()["students"] if s["email"] == "s1@example.edu")
    assert row["assignments"]["othello"]["submission"] == sid
    after = me.graded(sid)
    assert after["status"] == "graded" and after["public_symbols"] == graded_pair["wrong_score.py"]["public_symbols"]
    previous = after["previous"]
    assert previous["reason"] == "rerun by the instructor"
    assert previous["public_symbols"] == graded_pair["wrong_score.py"]["public_symbols"]
    assert "total" not in previous and "symbols" not in previous  # private results not released: not shown
    staff = instructor.get(f"/s/{sid}").json()
    assert staff["previous"]["total"] == staff["total"] and staff["previous"]["symbols"] == staff["symbols"]
    assert "rerun by the instructor" in me.html(f"/s/{sid}").text
    assert me.get("/a/othello").json()["left_today"] == left  # a rerun takes none of the student's uploads
    reruns = [e for e in instructor.get("/class/audit").json()["entries"] if e["action"] == "rerun"]
    assert reruns and all(e["by"] == "instructor@example.edu" for e in reruns)
    assert reruns[0]["detail"] == "othello: s1@example.edu (rerun by the instructor)"
    missing = instructor.post("/class/rerun", {"assignment": "othello", "email": "nobody@example.edu"})
    assert missing.status_code == 404 and "no graded submission" in missing.json()["error"]


@pytest.mark.slow
def test_after_a_plan_change_every_counted_submission_is_rerun_and_says_why(tmp_path):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        link = instructor.post("/class/links", {"email": "s2@example.edu"}).json()["links"][0]["link"]
        me = Client(server.url)
        me.sign_in(link)
        sid = me.upload(WRONG).json()["id"]
        before = me.graded(sid)
        assert len(before["public_symbols"]) == 4
    finally:
        server.stop()
    plan = new_plan(Config(), "othello", boards=SHARE / "fixtures" / "standard.txt", public=6).plan
    write_plan_file(plan, course / "six-public.plan")
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text.replace("plan: othello-endgame.plan", "plan: six-public.plan"))
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        me.url = server.url
        me.http.base_url = server.url  # the same student, still signed in: the session's key is in the database
        for path in ("/class/othello/gradescope.json", "/class/othello/run.zip"):  # the old plan's tests: not yet
            r = instructor.get(path)
            assert r.status_code == 409 and "rerun them first" in r.json()["error"], r.text
        r = instructor.post("/class/rerun", {"assignment": "othello"})
        assert r.json()["rerun"] == [{"email": "s2@example.edu", "submission": sid, "reason": "the plan changed"}]
        after = me.graded(sid)
        assert len(after["public_symbols"]) == 6 and after["previous"]["public_symbols"] == before["public_symbols"]
        assert after["previous"]["reason"] == "the plan changed"
        assert "the plan changed" in me.html(f"/s/{sid}").text
        log = instructor.get("/class/audit").json()["entries"]
        assert log[-1]["action"] == "rerun" and "s2@example.edu (the plan changed)" in log[-1]["detail"]
        mine = instructor.get("/class/othello/gradescope.json").json()["students"]
        assert [len(s["results"]["tests"]) for s in mine] == [10]
    finally:
        server.stop()


@pytest.mark.slow
def test_an_extension_moves_a_students_deadlines_and_late_flag(tmp_path):
    course = make_course(tmp_path / "course")
    now = datetime.datetime.now(datetime.timezone.utc)
    deadline, hard = now - datetime.timedelta(days=2), now - datetime.timedelta(hours=1)
    text = (
        (course / "course.yaml")
        .read_text()
        .replace(
            "per_day: 3",
            f"per_day: 3\n    deadline: {deadline:%Y-%m-%d %H:%M}\n    hard_deadline: {hard:%Y-%m-%d %H:%M}",
            1,
        )
    )
    (course / "course.yaml").write_text(text)
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        made = instructor.post("/class/links").json()["links"]
        me, other = Client(server.url), Client(server.url)
        me.sign_in(next(m["link"] for m in made if m["email"] == "s1@example.edu"))
        other.sign_in(next(m["link"] for m in made if m["email"] == "s2@example.edu"))
        closed = me.upload(NEGAMAX)
        assert closed.status_code == 400 and "closed" in closed.json()["error"]
        grant = {"assignment": "othello", "email": "s1@example.edu"}
        assert me.post("/class/extension", {**grant, "days": "3"}).status_code == 404  # instructors only
        assert instructor.post("/class/extension", {**grant, "days": "3"}, csrf=False).status_code == 403
        for bad in ("-1", "two", "1000", ""):
            r = instructor.post("/class/extension", {**grant, "days": bad})
            assert r.status_code == 400 and "days must be a whole number" in r.json()["error"], bad
        r = instructor.post("/class/extension", {"assignment": "othello", "email": "nobody@example.edu", "days": "1"})
        assert r.status_code == 404
        r = instructor.post("/class/extension", {**grant, "days": "1"})  # open again, but still past the deadline
        assert r.status_code == 200 and r.json()["extension_days"] == 1, r.text
        page = me.get("/a/othello").json()
        assert page["extension_days"] == 1
        assert (
            datetime.datetime.fromisoformat(page["hard_deadline"])
            > now
            > datetime.datetime.fromisoformat(page["deadline"])
        )
        first = me.upload(NEGAMAX)
        assert first.status_code == 201 and first.json()["late"] is True, first.text
        instructor.post("/class/extension", {**grant, "days": "3"})  # the latest grant holds
        receipt = me.upload(NEGAMAX)
        assert receipt.status_code == 201 and receipt.json()["late"] is False
        assert me.get(f"/s/{first.json()['id']}").json()["late"] is False  # made before the grant: it follows too
        instructor.post("/class/extension", {**grant, "days": "1"})
        assert [s["late"] for s in me.get("/a/othello").json()["submissions"]] == [True, True]
        instructor.post("/class/extension", {**grant, "days": "3"})
        assert "with your extension of 3 days" in me.html("/a/othello").text
        assert other.upload(NEGAMAX).status_code == 400  # the others' deadlines stay
        assert other.get("/a/othello").json()["extension_days"] == 0
        log = instructor.get("/class/audit").json()["entries"]
        grants = [e["detail"] for e in log if e["action"] == "extension"]
        assert grants == [f"othello: s1@example.edu {n} day(s)" for n in (1, 3, 1, 3)]
    finally:
        server.stop()


def policy_course(folder: Path, policy: str) -> Path:
    """make_course's course, its Othello lab due 36 hours ago (closing in a day) with ``policy``'s
    keys, and a budget of one late day."""
    course = make_course(folder)
    now = datetime.datetime.now(datetime.timezone.utc)
    deadline, hard = now - datetime.timedelta(hours=36), now + datetime.timedelta(days=1)
    text = (course / "course.yaml").read_text().replace("upload_kb: 16", "upload_kb: 16\nlate_days: 1")
    text = text.replace("per_day: 3", f"per_day: 3\n    deadline: {deadline:%Y-%m-%d %H:%M}\n"
                                      f"    hard_deadline: {hard:%Y-%m-%d %H:%M}\n    {policy}", 1)  # fmt: skip
    (course / "course.yaml").write_text(text)
    return course


@pytest.mark.slow  # a server of its own, two scripts graded: 5-10 s
def test_the_late_policy_and_the_best_submission_everywhere_a_counted_one_is_used(tmp_path):
    course = policy_course(tmp_path / "course", "late_penalty: 10%\n    counts: best")
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        me = Client(server.url)
        me.sign_in(instructor.post("/class/links", {"email": "s3@example.edu"}).json()["links"][0]["link"])
        before = me.get("/a/othello").json()
        assert before["late_days_left"] == 1 and before["counts"] == "best"
        assert before["upload_now"] == {"days_late": 2, "late_days": 1, "penalty": 0.1}  # 36 hours: 2 started days
        assert "An upload now is 2 days late: if it counts, it spends 1 late day and costs 10% of its total" in (
            me.html("/a/othello").text
        )
        first = me.graded(me.upload(NEGAMAX).json()["id"])
        last = me.graded(me.upload(WRONG).json()["id"])  # the latest, its total lower on a machine not overloaded
        totals = [instructor.get(f"/s/{s['id']}").json()["total"] for s in (first, last)]
        best = first if totals[0] > totals[1] else last  # the same penalty on both: ties go to the latest
        staff = instructor.get(f"/s/{best['id']}").json()
        row = next(s for s in instructor.get("/class").json()["students"] if s["email"] == "s3@example.edu")
        cell = row["assignments"]["othello"]
        assert cell["submission"] == best["id"] and cell["total"] == staff["total"] and row["late_days_used"] == 1
        assert (cell["days_late"], cell["late_days"], cell["penalty"]) == (2, 1, 0.1)
        assert cell["score"] == round(staff["total"] * 0.9, 2)
        assert cell["why"] == "2 days late: 1 day of late days spent, 10% penalty"
        assert "2 days late: 1 day of late days spent, 10% penalty" in instructor.html("/class").text
        sheet = list(csv.DictReader(io.StringIO(instructor.http.get("/class.csv").text)))
        mine = next(r for r in sheet if r["email"] == "s3@example.edu")
        expected = (str(staff["total"]), str(cell["score"]), "10%")
        assert (mine["othello total"], mine["othello score"], mine["othello penalty"]) == expected
        assert mine["othello why"] == cell["why"] and mine["late days used"] == "1"
        page = me.get("/a/othello").json()
        assert page["late_days_left"] == 0
        assert [s["id"] for s in page["submissions"] if s["counts"]] == [best["id"]]
        assert page["upload_now"] == {"days_late": 2, "late_days": 1, "penalty": 0.1}  # its own late day again
        scores = instructor.get("/class/othello/gradescope.json").json()["students"]
        assert [s["submission"] for s in scores] == [best["id"]]
        run = zipfile.ZipFile(io.BytesIO(instructor.http.get("/class/othello/run.zip").content))
        script = NEGAMAX if best is first else WRONG
        assert run.read("othello/submissions/s3@example.edu/submission.py") == script.read_bytes()
        rerun = instructor.post("/class/rerun", {"assignment": "othello", "email": "s3@example.edu"}).json()
        assert [r["submission"] for r in rerun["rerun"]] == [best["id"]]
    finally:
        server.stop()


@pytest.mark.slow  # a server of its own, grading a script that sleeps 2 s on each of 10 tests: 30-40 s
def test_the_queue_shows_the_running_job_its_worker_and_the_one_waiting_and_the_history_every_submission(tmp_path):
    course = policy_course(tmp_path / "course", "late_penalty: 10%")
    sleeper = b"import time\ntime.sleep(2)\n"  # 20 s of grading at least: the one worker is busy meanwhile
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        me = Client(server.url)
        me.sign_in(instructor.post("/class/links", {"email": "s4@example.edu"}).json()["links"][0]["link"])
        slow = me.upload(sleeper, name="sleeper.py").json()["id"]
        deadline = time.monotonic() + GRADED_WITHIN
        while not [j for j in instructor.get("/class/queue").json()["jobs"] if j["state"] == "running"]:
            assert time.monotonic() < deadline, "the sleeper was never claimed"
            time.sleep(0.2)
        waiting = me.upload(NEGAMAX).json()["id"]
        queue = instructor.get("/class/queue").json()
        assert [(j["submission"], j["state"], j["student"]) for j in queue["jobs"]] == [
            (slow, "running", "s4@example.edu"), (waiting, "queued", "s4@example.edu")]  # fmt: skip
        running, queued = queue["jobs"]
        assert running["worker"] and running["claimed_at"] and running["attempts"] == 1 and running["age_seconds"] >= 0
        assert queued["worker"] is None and queued["claimed_at"] is None
        assert (queue["queued"], queue["running"]) == (1, 1)
        assert running["worker"] in instructor.html("/class/queue").text
        me.graded(slow)
        me.graded(waiting)
        assert instructor.get("/class/queue").json() == {"queued": 0, "running": 0, "jobs": [], "csrf": instructor.csrf}
        instructor.post("/class/rerun", {"assignment": "othello", "email": "s4@example.edu"})
        me.graded(waiting)
        history = instructor.get("/class/othello/students/s4@example.edu").json()
        rows = history["submissions"]
        assert [(r["id"], r["counts"], r["late"]) for r in rows] == [(waiting, True, True), (slow, False, True)]
        assert rows[0]["previous"]["reason"] == "rerun by the instructor" and rows[1]["previous"] is None
        assert all(r["why"] == "2 days late: 1 day of late days spent, 10% penalty" for r in rows)
        assert rows[0]["score"] == round(rows[0]["total"] * 0.9, 2) and history["late_days_used"] == 1
        page = instructor.html("/class/othello/students/s4@example.edu").text
        assert "rerun by the instructor" in page and "sleeper.py" in page
    finally:
        server.stop()


def test_private_results_are_shown_once_released_without_their_boards(portal, graded_pair):
    me, instructor = portal["students"]["s1@example.edu"], portal["instructor"]
    sid = graded_pair["wrong_score.py"]["id"]
    before = me.get(f"/s/{sid}").json()
    assert before["private_shown"] is False and "private" not in before and "total" not in before
    assert me.post("/class/release", {"assignment": "othello"}).status_code == 404  # a student cannot release
    assert instructor.post("/class/release", {"assignment": "othello"}, csrf=False).status_code == 403
    assert me.get(f"/s/{sid}").json()["private_shown"] is False
    assert instructor.post("/class/release", {"assignment": "othello"}).json() == {"released": "othello"}
    after = me.get(f"/s/{sid}").json()
    course = portal["course"]
    plan = course.assignments["othello"].plan
    expected = library_result(course, WRONG)
    assert after["private_shown"] is True and after["total"] == expected.total
    private = [t for t in expected.tests if not plan.is_public(t.index)]
    assert [(p["index"], p["symbol"], p["credit"]) for p in after["private"]] == [
        (t.index, t.symbol, t.verdict.credit) for t in private
    ]
    html = me.html(f"/s/{sid}").text
    for text in (json.dumps(after), html):
        assert not any(t.position.board_string() in text for t in private)  # private_boards: false
    assert "Private tests" in html
    log = instructor.get("/class/audit").json()["entries"]
    assert {"by": "instructor@example.edu", "action": "release", "detail": "othello"}.items() <= log[-1].items()
    assert me.get("/class/audit").status_code == 404
    sheet = instructor.http.get("/class.csv").text.splitlines()
    assert sheet[0].startswith("name,email,othello total,othello max,othello symbols")
    row = next(line for line in sheet if "s1@example.edu" in line)
    assert f"{expected.total},{expected.max_total},{expected.symbols}" in row
    assert me.http.get("/class.csv").status_code == 404


# --- the command -------------------------------------------------------------------------


def test_serve_without_the_extra_names_the_install_command(tmp_path):
    hide = textwrap.dedent("""
        import sys
        class Hide:
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in ('starlette', 'sqlalchemy'):
                    raise ModuleNotFoundError(name)
        sys.meta_path.insert(0, Hide())
        sys.argv = ['grader', 'serve']
        from grader.__main__ import main
        main()
    """)
    done = subprocess.run([sys.executable, "-c", hide], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        'Error: the portal needs its extra (starlette, sqlalchemy missing): pip install "grader[portal]"'
    ]
    assert not (tmp_path / "grader-demo-course").exists()


@pytest.mark.parametrize(
    "change, message",
    [
        (("per_day: 3", "per_day: 0"), "assignments[0].per_day must be a whole number, 1 or more, like 5"),
        (("plan: othello-endgame.plan", "plan: missing.plan"), "assignments[0].plan: no plan file 'missing.plan'"),
        (("game: othello", "game: chess"), "assignments[0].game"),
        (("upload_kb: 16", "upload_kb: big"), "'upload_kb' must be a whole number of KiB"),
        (("title: Game", "titel: Game"), "unknown key 'titel'"),
        (("name: othello", "name: ../x"), "assignments[0].name must be lower-case letters"),
        (("limits: {wall_seconds: 10}", "limits: {wall_seconds: -1}"), "assignments[0].limits.wall_seconds"),
        (("per_day: 3", "per_day: 3\n    private_results: never"), "assignments[0].private_results must be release"),
        (
            ("per_day: 3", "per_day: 3\n    private_results: deadline"),
            "assignments[0].private_results is deadline, but",
        ),
        (("plan: gomoku.gtp", "plan: gomoku.plan"), "assignments[2].plan must be a regression file (.gtp) in the "
                                                    "course folder, like lab2.gtp; got 'gomoku.plan'"),
        (("plan: gomoku.gtp", "plan: missing.gtp"), "assignments[2].plan: no regression file 'missing.gtp' in the "
                                                    "course folder: write it with 'grader plan regress'"),
        (("plan: gomoku.gtp", "plan: ../gomoku.gtp"), "assignments[2].plan must be a regression file (.gtp) in the "
                                                      "course folder"),
        (("plan: gomoku.gtp", "plan: gomoku.gtp\n    seed: 3"), "assignments[2].seed: a GTP lab's tests are its "
                                                               "regression file's: drop the seed"),
        (("upload_kb: 16", "upload_kb: 16\nlate_days: -1"), "'late_days' must be a whole number of days from 0"),
        (("upload_kb: 16", "upload_kb: 16\nlate_days: two"), "'late_days' must be a whole number of days from 0"),
        (("per_day: 3", "per_day: 3\n    late_days: 2"), "assignments[0].late_days must be true (late uploads"),
        (
            ("per_day: 3", "per_day: 3\n    deadline: 2026-12-18 23:59\n    late_penalty: 10"),
            "assignments[0].late_penalty must be a percentage of the earned total taken per day late, from 0% to 100%",
        ),
        (
            ("per_day: 3", "per_day: 3\n    deadline: 2026-12-18 23:59\n    late_penalty: 120%"),
            "assignments[0].late_penalty must be a percentage",
        ),
        (("per_day: 3", "per_day: 3\n    late_penalty: 10%"), "assignments[0].late_penalty needs a deadline"),
        (("per_day: 3", "per_day: 3\n    counts: first"), "assignments[0].counts must be latest (the last graded"),
    ],
)  # fmt: skip
def test_a_bad_course_yaml_is_one_line_naming_the_key(tmp_path, change, message):
    from click.testing import CliRunner

    from grader.cli import main

    course = make_course(tmp_path / "course")
    text = (course / "course.yaml").read_text()
    assert change[0] in text
    (course / "course.yaml").write_text(text.replace(change[0], change[1], 1))
    result = CliRunner().invoke(main, ["serve", str(course)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "course.yaml: " in lines[0], result.output
    assert message in lines[0]


def test_a_gtp_labs_regression_file_is_checked_at_the_start_and_its_changes_call_for_a_rerun(tmp_path):
    """A malformed regression file stops the start in one line naming the file's line; a
    changed one (a test fewer) changes the assignment's digest, so its submissions are rerun."""
    from grader.errors import ConfigError

    course = make_course(tmp_path / "course")
    before = load_course(course)
    lab = course / "gomoku.gtp"
    text = lab.read_text()
    lab.write_text(text.replace("#? [w E5]", "#? w E5"))
    with pytest.raises(ConfigError, match=r"course.yaml: assignments\[2\].plan: gomoku.gtp:\d+: an expected answer"):
        load_course(course)
    cut = text[: text.index("boardsize 7", text.index("90 solve"))]  # tests 10-90: 100 left out
    lab.write_text(cut)
    after = load_course(course)
    assert after.assignments["gomoku"].private_tests == before.assignments["gomoku"].private_tests - 1
    assert after.plan_digest(after.assignments["gomoku"]) != before.plan_digest(before.assignments["gomoku"])
    assert after.assignments["gomoku"].max_points == 100 and after.assignments["othello"].max_points == 10
    lab.write_text(text)
    again = load_course(course)
    assert again.plan_digest(again.assignments["gomoku"]) == before.plan_digest(before.assignments["gomoku"])


def _sync(course: Path):
    from click.testing import CliRunner

    from grader.cli import main

    return CliRunner().invoke(main, ["portal", "sync", str(course)])


def _synced(course: Path) -> tuple[str | None, list[str]]:
    """The course digest kept in the course's SQLite database, and the e-mails of its people."""
    with sqlite3.connect(course / ".portal" / "portal.sqlite3") as db:
        digest = db.execute("SELECT value FROM portal_meta WHERE key = 'course_digest'").fetchone()
        return digest and digest[0], sorted(e for (e,) in db.execute("SELECT email FROM users"))


def test_portal_sync_applies_course_yaml_and_a_bad_value_changes_nothing(tmp_path):
    course = make_course(tmp_path / "course")
    first = _sync(course)
    assert first.exit_code == 0, first.output
    assert first.output == (f"Synced Game search (demo course) ({course}): 3 assignments, 6 people on the roster "
                            "(6 new); changed: running servers load it within a second\n")  # fmt: skip
    assert _sync(course).output.endswith("(0 new); unchanged\n")
    before = _synced(course)
    with (course / "roster.csv").open("a") as f:
        f.write("s7@example.edu,Student 7\n")
    text = (course / "course.yaml").read_text()
    (course / "course.yaml").write_text(text.replace("per_day: 3", "per_day: 0", 1))
    bad = _sync(course)
    assert bad.exit_code == 1 and bad.output.splitlines() == [
        f"Error: {course / 'course.yaml'}: assignments[0].per_day must be a whole number, 1 or more, like 5, "
        "or null (no limit); got 0"]  # fmt: skip
    assert _synced(course) == before  # not even the roster's new student
    (course / "course.yaml").write_text(text)
    assert "(1 new); changed" in _sync(course).output
    digest, people = _synced(course)
    assert digest != before[0] and "s7@example.edu" in people


@pytest.mark.slow  # a server of its own, a script graded twice: 10-15 s
def test_a_running_server_follows_portal_sync_and_reruns_after_a_plan_change(tmp_path):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        me = Client(server.url)
        me.sign_in(instructor.post("/class/links", {"email": "s2@example.edu"}).json()["links"][0]["link"])
        sid = me.upload(WRONG).json()["id"]
        before = me.graded(sid)
        assert len(before["public_symbols"]) == 4
        plan = new_plan(Config(), "othello", boards=SHARE / "fixtures" / "standard.txt", public=6).plan
        write_plan_file(plan, course / "six-public.plan")
        text = (course / "course.yaml").read_text().replace("plan: othello-endgame.plan", "plan: six-public.plan")
        (course / "course.yaml").write_text(text.replace("title: Othello endgame lab", "title: Othello, synced"))
        with (course / "roster.csv").open("a") as f:
            f.write("s7@example.edu,Student 7\n")
        assert _sync(course).exit_code == 0
        deadline = time.monotonic() + 60
        while me.get("/a/othello").json()["title"] != "Othello, synced":  # within a second, on a quiet machine
            assert time.monotonic() < deadline, "the server never loaded the synced course"
            time.sleep(0.2)
        assert me.get("/a/othello").json()["public_tests"] == 6
        assert "s7@example.edu" in [s["email"] for s in instructor.get("/class").json()["students"]]
        r = instructor.post("/class/rerun", {"assignment": "othello"})
        assert r.json()["rerun"] == [{"email": "s2@example.edu", "submission": sid, "reason": "the plan changed"}]
        after = me.graded(sid)
        assert len(after["public_symbols"]) == 6 and after["previous"]["public_symbols"] == before["public_symbols"]
    finally:
        server.stop()


def test_serve_makes_the_demo_course_and_prints_the_link(tmp_path):
    server = Server(None, tmp_path)
    try:
        out = "".join(server.lines)
        assert (tmp_path / "grader-demo-course" / "course.yaml").is_file()
        assert "instructor@example.edu" in out and server.link.startswith(server.url + "/link/")
        assert (tmp_path / "grader-demo-course" / ".portal" / "portal.sqlite3").is_file()
        me = Client(server.url)
        me.sign_in(server.link)
        table = me.get("/class").json()
        assert [s["email"] for s in table["students"]] == ["ada@example.edu", "alan@example.edu", "grace@example.edu"]
        assert set(table["assignments"]) == {"othello", "tictactoe", "gomoku"}
    finally:
        server.stop()


@pytest.mark.slow  # three labs graded end to end, tic-tac-toe's 100 tests among them: 10-20 s
def test_the_demo_students_upload_to_each_lab_of_the_demo_course(tmp_path):
    server = Server(None, tmp_path)
    try:
        staff = Client(server.url)
        staff.sign_in(server.link)
        links = {e["email"]: e["link"] for e in staff.post("/class/links").json()["links"]}
        uploads = {"ada@example.edu": ("othello", NEGAMAX),
                   "alan@example.edu": ("tictactoe", ROOT / "submissions" / "tictactoe" / "minimax.py"),
                   "grace@example.edu": ("gomoku", GOMOKU / "solver.py")}  # fmt: skip
        for email, (lab, program) in uploads.items():
            me = Client(server.url)
            me.sign_in(links[email])
            seen = me.graded(me.upload(program, name=program.name, assignment=lab).json()["id"])
            assert seen["status"] == "graded" and set(seen["public_symbols"]) == {"+"}, seen
            assert seen["public_tests"] == len(seen["public_symbols"]) > 0 and seen["private_tests"] > 0
        table = staff.get("/class").json()
        for row in table["students"]:
            lab = uploads[row["email"]][0]
            assert row["assignments"][lab]["total"] == row["assignments"][lab]["max_total"], row
    finally:
        server.stop()


@pytest.mark.slow  # a server of its own, stopped
def test_a_server_stops_on_sigterm_with_pages_still_listening(tmp_path):
    """A page's event stream never ends while its submission waits: a stopping server ends it
    (uvicorn would wait for it forever) and exits by itself, its exit code its own."""
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, None, "--workers", "0")  # nothing grades: the submission waits
    me = Client(server.url)
    me.sign_in(server.link)
    sid = me.upload(NEGAMAX, name="negamax.py").json()["id"]
    seen: list[str] = []

    def listen() -> None:
        with contextlib.suppress(httpx.HTTPError), me.http.stream("GET", f"/s/{sid}/events", timeout=None) as r:
            seen.extend(r.iter_lines())

    listener = threading.Thread(target=listen)
    listener.start()
    deadline = time.monotonic() + 30
    while "data: queued" not in seen and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "data: queued" in seen
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(60) == 0, "".join(server.lines)  # not killed: it ended the stream itself
    listener.join(30)
    assert not listener.is_alive()


@pytest.mark.slow
def test_a_server_killed_while_grading_grades_the_submission_once_at_its_next_start(tmp_path):
    """SIGKILL while a submission is being graded: once its lease expires the next server's
    worker claims it, grades it once, and the job leaves the queue (checked in the database)."""
    course = make_course(tmp_path / "course")
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(0.5)\nprint(19)\n")
    server = Server(course, tmp_path, None, "--lease", "2")
    me = Client(server.url)
    me.sign_in(server.link)
    sid = me.upload(slow, name="slow.py").json()["id"]
    deadline = time.monotonic() + 60
    while me.get(f"/s/{sid}").json()["status"] != "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    server.stop(signal.SIGKILL)
    again = Server(course, tmp_path)
    try:
        me = Client(again.url)
        me.sign_in(again.link)
        data = me.graded(sid)
        assert data["status"] == "graded" and data["filename"] == "slow.py"
        assert [s["id"] for s in me.get("/a/othello").json()["submissions"]] == [sid]
    finally:
        again.stop()
    with sqlite3.connect(course / ".portal" / "portal.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM jobs").fetchone() == (0,)
        assert db.execute("SELECT status, count(*) FROM submissions GROUP BY status").fetchall() == [("graded", 1)]


def test_the_portal_modules_are_not_imported_by_the_rest():
    """The default install stays light: importing the grader and its CLI loads none of the extra."""
    code = ("import sys, grader, grader.cli, grader.grading.run, grader.tournaments.tournament\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('starlette', 'sqlalchemy', 'uvicorn', 'alembic')"
            " or m.startswith('grader.portal.')))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


@pytest.mark.parametrize(
    "csv, people",
    [
        ("Email,Name\nAda@Example.edu,Ada Lovelace\n", [("ada@example.edu", "Ada Lovelace", "student")]),
        ("\ufeffLast Name,First Name,Email,Role\nTuring,Alan,alan@x.org,TA\n\n", [("alan@x.org", "Alan Turing", "ta")]),
        (
            "Student,ID,SIS Login ID,Section\nHopper; Grace,7,grace@x.org,A\n",
            [("grace@x.org", "Hopper; Grace", "student")],
        ),
    ],
)
def test_a_roster_is_read_as_lms_gradebooks_export_it(csv, people):
    from grader.portal.accounts.roster import read_roster

    assert [(p.email, p.name, p.role) for p in read_roster(csv)] == people


@pytest.mark.parametrize(
    "csv, message",
    [
        ("Name\nAda\n", "roster: no e-mail column in the header ['Name']: name one Email"),
        (
            "Email,Name\nnot-an-address,Ada\n",
            "roster: line 2: 'not-an-address' is not an e-mail address: give each person's address in the e-mail column",
        ),
        (
            "Email,Role\na@x.org,dean\n",
            "roster: line 2: role 'dean' is not one of student, ta, instructor: write one of them",
        ),
    ],
)
def test_a_bad_roster_is_one_line_naming_the_line(csv, message):
    from grader.portal.accounts.roster import read_roster

    with pytest.raises(GraderError) as e:
        read_roster(csv)
    assert str(e.value) == message


@pytest.mark.slow  # a server of its own, three scripts graded: 10-20 s
def test_staff_see_an_assignments_similar_submissions_and_a_student_does_not(tmp_path):
    pytest.importorskip("copydetect", reason="the similarity report needs copydetect: pip install -e '.[similarity]'")
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        students = {}
        for email in ("s4@example.edu", "s5@example.edu", "s6@example.edu"):
            students[email] = Client(server.url)
            students[email].sign_in(instructor.post("/class/links", {"email": email}).json()["links"][0]["link"])
        renamed = NEGAMAX.read_text().replace("board", "grid").replace("score", "value").encode()
        for email, script in (("s4@example.edu", NEGAMAX.read_bytes()), ("s5@example.edu", renamed),
                              ("s6@example.edu", WRONG.read_bytes())):  # fmt: skip
            me = students[email]
            assert me.graded(me.upload(script).json()["id"])["status"] == "graded"
        data = instructor.get("/class/othello/similar").json()
        assert "pairs" in data, data
        top = data["pairs"][0]
        assert (top["left"], top["right"]) == ("s4@example.edu", "s5@example.edu") and top["similarity"] > 0.9
        assert data["compared"] == 3
        page = instructor.html("/class/othello/similar")
        assert page.status_code == 200 and "s5@example.edu" in page.text and "<mark>" in page.text
        assert "copied" not in page.text.lower() and "Similar submissions: Othello endgame lab" in page.text
        assert "style-src 'sha256-" in page.headers["content-security-policy"]
        assert "/class/othello/similar" in instructor.html("/class").text
        for r in (students["s4@example.edu"].html("/class/othello/similar"),
                  students["s4@example.edu"].get("/api/class/othello/similar")):  # fmt: skip
            assert r.status_code == 403 and "s5@example.edu" not in r.text
        assert Client(server.url).get("/class/othello/similar").status_code == 401
        none = instructor.get("/class/tictactoe/similar")
        assert none.status_code == 409 and "0 counted submission(s): a report needs two or more" in none.text
    finally:
        server.stop()
