"""The database goes away and comes back: a real PostgreSQL server stopped (pg_ctl stop) in the
middle of uploads and started again, a real SQLite database locked by another process. The
server answers 503 with Retry-After and one line meanwhile (never a traceback), stores
nothing half, and its workers wait and go on: every upload taken is graded exactly once."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select  # noqa: E402

from grader.portal.database.db import connect, sessions  # noqa: E402
from grader.portal.database.models import GRADED, Submission  # noqa: E402
from grader.portal.database.outage import AWAY, BUSY, FULL, outage  # noqa: E402

from conftest import _postgres_bin  # noqa: E402
from portal_server import ROOT, Client, Server, make_course  # noqa: E402

TICTACTOE = ROOT / "submissions" / "tictactoe" / "can_lose.py"
GRADED_WITHIN = 600.0  # a loaded machine of two cores grades a tic-tac-toe upload in 30 s
OUTAGE = 30.0  # seconds PostgreSQL is stopped in the rush
LOCKED = 35.0  # seconds SQLite is locked: past its busy wait (30 s)


def _pg_ctl(base: str, *args: str) -> None:
    """pg_ctl on the tests' PostgreSQL server (the ``postgres`` fixture's, whose folder its URL names)."""
    folder = parse_qs(urlsplit(base.format(db="x")).query)["host"][0]
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    done = subprocess.run([*as_user, f"{_postgres_bin()}/pg_ctl", "-D", f"{folder}/data", "-w", *args],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr


def pg_stop(base: str) -> None:
    _pg_ctl(base, "-m", "fast", "stop")


def pg_start(base: str) -> None:
    folder = parse_qs(urlsplit(base.format(db="x")).query)["host"][0]
    _pg_ctl(base, "-l", f"{folder}/log", "-o", f"-k {folder} -c listen_addresses='' -c fsync=off -c max_connections=100",
            "start")  # fmt: skip


def pg_database(base: str) -> str:
    from test_portal_backup import pg_database as made

    return made(base)


def signed_in(server: Server, count: int) -> list[Client]:
    prof = Client(server.url)
    prof.sign_in(server.link)
    people = []
    for entry in prof.post("/class/links").json()["links"][:count]:
        people.append(Client(server.url))
        people[-1].sign_in(entry["link"])
    return people


def one_line_503(r, *words: str) -> str:
    """A 503 with Retry-After and one line (JSON's error, or a page's paragraph), no traceback: the line."""
    assert r.status_code == 503, (r.status_code, r.text)
    assert int(r.headers["retry-after"]) > 0
    if r.headers["content-type"].startswith("application/json"):
        line = r.json()["error"]
    else:
        assert r.headers["content-type"].startswith("text/html") and "content-security-policy" in r.headers
        (line,) = re.findall(r'<p class="error" id="error">(.*)</p>', r.text)
    assert "\n" not in line and "Traceback" not in r.text and "Internal Server Error" not in r.text
    for word in words:
        assert word in line, line
    return line


def stored(url: str) -> list[Submission]:
    engine = connect(url)
    with sessions(engine)() as s:
        found = list(s.scalars(select(Submission).order_by(Submission.received_at)))
    engine.dispose()
    return found


def until_graded(url: str, ids: list[str], seconds: float = GRADED_WITHIN) -> list[Submission]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        subs = [s for s in stored(url) if s.id in ids]
        if len(subs) == len(ids) and all(s.status == GRADED for s in subs):
            return subs
        time.sleep(0.5)
    raise AssertionError(f"not graded in time: {[(s.id, s.status) for s in stored(url)]}")


def test_what_an_outage_is_and_what_a_bug_is(tmp_path):
    from sqlalchemy import text

    engine = connect(f"sqlite:///{tmp_path / 'a.sqlite3'}")
    with pytest.raises(Exception) as bug, engine.connect() as c:
        c.execute(text("SELECT nothing FROM nowhere"))
    assert outage(bug.value) is None
    engine.dispose()
    holder = sqlite3.connect(tmp_path / "b.sqlite3")
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    waiting = sqlite3.connect(tmp_path / "b.sqlite3", timeout=0.1)
    from sqlalchemy.exc import OperationalError

    try:
        waiting.execute("INSERT INTO t VALUES (1)")
    except sqlite3.OperationalError as e:
        assert outage(OperationalError("INSERT", {}, e)).kind == BUSY
    full = OperationalError("INSERT", {}, sqlite3.OperationalError("database or disk is full"))
    away = OperationalError("SELECT", {}, Exception("connection refused: is the server running?"))
    assert outage(full).kind == FULL and outage(away).kind == AWAY and outage(ValueError("x")) is None
    holder.close()
    waiting.close()


def test_postgresql_stopped_for_a_moment_answers_503_and_stores_nothing_half(postgres, tmp_path):
    course = make_course(tmp_path / "course", per_day=50)
    url = pg_database(postgres)
    server = Server(course, tmp_path, url, "--workers", "0")
    try:
        (me,) = signed_in(server, 1)
        first = me.upload(TICTACTOE, name="first.py", assignment="tictactoe")
        assert first.status_code == 201, first.text
        pg_stop(postgres)
        try:
            one_line_503(me.upload(TICTACTOE, name="during.py", assignment="tictactoe"), "nothing you sent was stored",
                         "not answering", "grading is paused")  # fmt: skip
            one_line_503(me.get("/a/tictactoe"), "reload it in")
            one_line_503(me.html("/"), "this page cannot be shown now")
            one_line_503(me.http.get("/api/a/tictactoe", headers={"Accept": "text/html"}))  # the API's: JSON
        finally:
            pg_start(postgres)
        after = me.upload(TICTACTOE, name="after.py", assignment="tictactoe")
        assert after.status_code == 201, after.text
        assert me.get("/a/tictactoe").status_code == 200
    finally:
        server.stop()
    assert [s.filename for s in stored(url)] == ["first.py", "after.py"]
    log = "".join(server.lines)
    assert "Traceback" not in log and "answering 503" in log


@pytest.mark.slow  # PostgreSQL stopped for 30 s while uploads are graded, then all graded: 1-3 minutes
def test_postgresql_stopped_mid_rush_then_every_upload_taken_is_graded_once(postgres, tmp_path):
    course = make_course(tmp_path / "course", per_day=50)
    url = pg_database(postgres)
    server = Server(course, tmp_path, url, "--workers", "2")
    try:
        students = signed_in(server, 3)
        before = []
        for me in students:
            for n in range(2):
                r = me.upload(TICTACTOE, name=f"before{n}.py", assignment="tictactoe")
                assert r.status_code == 201, r.text
                before.append(r.json()["id"])
        pg_stop(postgres)
        stopped = time.monotonic()
        refused = []
        try:
            while time.monotonic() - stopped < OUTAGE:
                for me in students:
                    refused.append(one_line_503(me.upload(TICTACTOE, name="during.py", assignment="tictactoe"),
                                                "nothing you sent was stored"))  # fmt: skip
                    one_line_503(me.get("/"))
                time.sleep(2)
        finally:
            pg_start(postgres)
        assert refused
        after = students[0].upload(TICTACTOE, name="after.py", assignment="tictactoe")
        assert after.status_code == 201, after.text
        graded = until_graded(url, [*before, after.json()["id"]])
    finally:
        server.stop()
    assert all(s.gradings == 1 for s in graded), [(s.filename, s.gradings) for s in graded]
    assert "during.py" not in {s.filename for s in stored(url)}
    log = "".join(server.lines)
    assert "Traceback" not in log and "waiting for it" in log and "answers again" in log, log


def test_sqlite_locked_for_a_moment_keeps_serving_pages_and_takes_the_upload_whole(tmp_path):
    course = make_course(tmp_path / "course", per_day=50)
    server = Server(course, tmp_path, None, "--workers", "0")
    path = course / ".portal" / "portal.sqlite3"
    try:
        (me,) = signed_in(server, 1)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        answers: list = []
        upload = threading.Thread(target=lambda: answers.append(me.upload(TICTACTOE, name="locked.py",
                                                                          assignment="tictactoe")))  # fmt: skip
        upload.start()
        try:
            time.sleep(3)
            assert me.get("/a/tictactoe").status_code == 200  # pages read on (WAL) while a writer waits
            assert not answers  # the upload waits for the lock: neither refused nor half-stored
        finally:
            holder.execute("COMMIT")
            holder.close()
        upload.join()
        assert answers[0].status_code == 201, answers[0].text
    finally:
        server.stop()
    assert [s.filename for s in stored(f"sqlite:///{path}")] == ["locked.py"]


@pytest.mark.slow  # SQLite locked past its 30 s wait while uploads are graded: 1-2 minutes
def test_sqlite_locked_past_its_wait_answers_503_and_every_upload_taken_is_graded_once(tmp_path):
    course = make_course(tmp_path / "course", per_day=50)
    server = Server(course, tmp_path, None, "--workers", "2")
    path = course / ".portal" / "portal.sqlite3"
    url = f"sqlite:///{path}"
    try:
        students = signed_in(server, 2)
        before = []
        for me in students:
            r = me.upload(TICTACTOE, name="before.py", assignment="tictactoe")
            assert r.status_code == 201, r.text
            before.append(r.json()["id"])
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            locked = time.monotonic()
            students[0].http.timeout = LOCKED + 30  # the upload waits out SQLite's 30 s first
            refused = one_line_503(students[0].upload(TICTACTOE, name="during.py", assignment="tictactoe"),
                                   "nothing you sent was stored", "busy")  # fmt: skip
            assert students[1].get("/a/tictactoe").status_code == 200
            time.sleep(max(0.0, LOCKED - (time.monotonic() - locked)))
        finally:
            holder.execute("COMMIT")
            holder.close()
        assert refused
        after = students[1].upload(TICTACTOE, name="after.py", assignment="tictactoe")
        assert after.status_code == 201, after.text
        graded = until_graded(url, [*before, after.json()["id"]])
    finally:
        server.stop()
    assert all(s.gradings == 1 for s in graded)
    assert "during.py" not in {s.filename for s in stored(url)}
    assert "Traceback" not in "".join(server.lines)


# --- a full disk ----------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A file system of 32 MB of its own (a tmpfs, mounted as root), for the database: its folder."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path) -> Path:
    """Fill ``disk`` to its last byte with a file: the file (removing it makes room again)."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        for chunk in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    f.write(b"\0" * chunk)
            except OSError:
                pass
    return filler


def test_a_full_disk_under_the_database_refuses_uploads_in_one_line_and_serves_pages(small_disk, tmp_path):
    course = make_course(tmp_path / "course", per_day=50)
    url = f"sqlite:///{small_disk / 'portal.sqlite3'}"
    server = Server(course, tmp_path, url, "--workers", "0")
    try:
        (me,) = signed_in(server, 1)
        assert me.upload(TICTACTOE, name="first.py", assignment="tictactoe").status_code == 201
        filler = fill(small_disk)
        one_line_503(me.upload(TICTACTOE, name="full.py", assignment="tictactoe"), "nothing you sent was stored",
                     "is full", "must make room")  # fmt: skip
        assert me.get("/a/tictactoe").status_code == 200  # what only reads is served
        filler.unlink()
        assert me.upload(TICTACTOE, name="room.py", assignment="tictactoe").status_code == 201
    finally:
        server.stop()
    assert [s.filename for s in stored(url)] == ["first.py", "room.py"]
    assert "Traceback" not in "".join(server.lines)


@pytest.mark.slow  # uploads graded while the disk under the database is full, then once room is made: 1-2 minutes
def test_grades_made_while_the_disk_is_full_are_written_once_room_is_made(small_disk, tmp_path):
    course = make_course(tmp_path / "course", per_day=50)
    url = f"sqlite:///{small_disk / 'portal.sqlite3'}"
    server = Server(course, tmp_path, url, "--workers", "2")
    try:
        students = signed_in(server, 2)
        before = []
        for me in students:
            r = me.upload(TICTACTOE, name="before.py", assignment="tictactoe")
            assert r.status_code == 201, r.text
            before.append(r.json()["id"])
        filler = fill(small_disk)
        try:
            one_line_503(students[0].upload(TICTACTOE, name="full.py", assignment="tictactoe"), "is full")
            deadline = time.monotonic() + GRADED_WITHIN
            while "waiting for it" not in "".join(server.lines) and time.monotonic() < deadline:
                time.sleep(0.5)  # a worker met the full disk writing a grade (or claiming): it waits
            assert "waiting for it" in "".join(server.lines)
            assert all(s.status != GRADED for s in stored(url))
        finally:
            filler.unlink()
        graded = until_graded(url, before)
    finally:
        server.stop()
    assert all(s.gradings == 1 for s in graded)
    assert "full.py" not in {s.filename for s in stored(url)} and "Traceback" not in "".join(server.lines)


@pytest.mark.slow  # bench/portal_soak.py's short run: a PostgreSQL server, 20 students over 90 s: 2-4 minutes
def test_the_soak_benchs_short_run_loses_nothing():
    """Workers killed and the database stopped once under a course's traffic: every upload graded once."""
    pytest.importorskip("psycopg", reason='PostgreSQL is reached through psycopg 3: pip install -e ".[portal]"')
    if _postgres_bin() is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "portal_soak.py"), "--students", "20", "--duration", "90",
                           "--uploads", "1", "--lab", "tictactoe", "--kill-every", "40", "--db-down", "5",
                           "--sample", "10", "--browse-every", "10"], capture_output=True, text=True, timeout=1200)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "exactly once: yes" in done.stdout and int(re.search(r"workers killed: (\d+)", done.stdout)[1]) >= 1
