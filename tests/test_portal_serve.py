"""Serving a course: ``grader serve`` without the extra, with a bad course.yaml, the demo
course, a public address; ``grader portal sync`` and a running server following it; a server
stopped or killed while grading; the portal's modules left out of the rest of the grader."""

from __future__ import annotations

import contextlib
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx", reason="the portal's tests need httpx (pip install -e '.[test]')")
pytest.importorskip("starlette", reason='the portal needs its extra: pip install -e ".[portal]"')


from grader.config import Config  # noqa: E402
from grader.files import SHARE  # noqa: E402
from grader.grading.plans import new_plan, write_plan_file  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402

from portal_server import (  # noqa: E402
    NEGAMAX,
    WRONG,
    Client,
    Server,
    _sync,
    make_course,
)


def test_a_public_url_that_is_no_http_address_is_one_line(tmp_path):
    from click.testing import CliRunner

    from grader.cli import main

    result = CliRunner().invoke(main, ["serve", str(tmp_path), "--public-url", "grader.example.edu"])
    assert (result.exit_code, result.output) == (
        1, "Error: --public-url 'grader.example.edu' is no http(s) address: give https://HOST[/PATH]\n")  # fmt: skip


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
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert re.search(r"course\.yaml(, line \d+)?: ", lines[0]), result.output  # an unknown key: its line
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


@pytest.mark.slow  # a server of its own
def test_a_server_others_reach_without_its_public_url_warns_that_its_links_name_this_machine(tmp_path):
    """Listening on every interface with no --public-url, the class page's sign-in links name
    the address the server calls itself (never a request's Host): it says so, and how to mend it."""
    server = Server(make_course(tmp_path / "course"), tmp_path, None, "--host", "0.0.0.0", "--workers", "0")
    try:
        warning = [line for line in server.lines if line.startswith("Warning: the links")]
        assert warning and "--public-url https://HOST" in warning[0] and server.url in warning[0]
        me = Client(server.url)
        me.sign_in(server.link)
        links = me.post("/class/links").json()["links"]
        assert links and all(entry["link"].startswith(server.url + "/link/") for entry in links)
    finally:
        server.stop()
    quiet = Server(make_course(tmp_path / "other"), tmp_path, None, "--workers", "0")  # loopback only: no warning
    try:
        assert not any(line.startswith("Warning") for line in quiet.lines)
    finally:
        quiet.stop()


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


@pytest.mark.slow  # three servers of their own
def test_a_second_server_on_the_same_sqlite_database_says_so(tmp_path):
    """Allowed (several servers may share a database), but it had started without a word."""
    first = Server(None, tmp_path, None, "--workers", "0")
    try:
        assert not any(line.startswith("Warning:") for line in first.lines), first.lines
        second = Server(None, tmp_path, None, "--workers", "0")
        try:
            assert second.lines[0] == (f"Warning: another grader serve (process {first.proc.pid}) is running on this "
                                       "SQLite database: both serve the course now (stop it if this one was to "
                                       "replace it)\n")  # fmt: skip
        finally:
            second.stop()
    finally:
        first.stop()
    again = Server(None, tmp_path, None, "--workers", "0")  # the first gone: its mark went with it
    try:
        assert not any(line.startswith("Warning:") for line in again.lines), again.lines
    finally:
        again.stop()
