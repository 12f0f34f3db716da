"""``grader worker``: worker processes grading a server's queue from the same database (SQLite
and PostgreSQL), a worker killed with SIGKILL mid-grade whose job another worker grades once
its lease expires, ``grader serve --workers 0``, and the one-line errors of a worker started
on the wrong database or course."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from click.testing import CliRunner  # noqa: E402
from sqlalchemy import select  # noqa: E402

from grader.cli import main  # noqa: E402
from grader.config import Config  # noqa: E402
from grader.files import SHARE  # noqa: E402
from grader.grading.plans import new_plan, write_plan_file  # noqa: E402
from grader.portal.course.course import load_course  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.models import GRADED, Job, Submission, User  # noqa: E402
from grader.portal.jobs.queue import used_today  # noqa: E402

from portal_server import NEGAMAX, Client, Server, library_result, make_course  # noqa: E402

WITHIN = 120  # seconds: how long a record may take to say what the test waits for, on a loaded machine


class Worker:
    """``grader worker --database URL COURSE`` as its own process; its name read from its output."""

    def __init__(self, course: Path, database: str, *options: str):
        args = [sys.executable, "-m", "grader", "worker", str(course), "--database", database, *options]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        for line in self.proc.stdout:
            self.lines.append(line)
            m = re.match(r"Worker (\S+): ", line)
            if m:
                self.name = m.group(1)
                threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True).start()
                return
        raise AssertionError("the worker did not start:\n" + "".join(self.lines))

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(30)


def _until(make, what, seconds: float = WITHIN):
    """What ``what(session)`` finds in the database, once it finds something."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with make() as s:
            found = what(s)
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("the database never said it")


@pytest.mark.slow
def test_a_worker_process_grades_what_a_server_without_workers_queued(database, tmp_path):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, database, "--workers", "0")
    worker = None
    try:
        assert "No workers here: grader worker --database URL COURSE grades the uploads" in "".join(server.lines)
        me = Client(server.url)
        me.sign_in(server.link)
        sid = me.upload(NEGAMAX, name="negamax.py").json()["id"]
        worker = Worker(course, database, "--workers", "2")
        seen = me.graded(sid)
        expected = library_result(load_course(course), NEGAMAX)
        assert seen["status"] == "graded" and seen["symbols"] == expected.symbols and seen["total"] == expected.total
    finally:
        server.stop()
        if worker:
            worker.stop()
    make = sessions(connect(database))
    with make() as s:
        done = s.get(Submission, sid)
        assert done.graded_by.startswith(worker.name + "-") and done.gradings == 1
        assert s.scalars(select(Job)).all() == []


@pytest.mark.slow
def test_a_worker_process_grades_with_the_course_as_synced_since_it_started(database, tmp_path):
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, database, "--workers", "0")
    worker = Worker(course, database, "--workers", "1")
    try:
        me = Client(server.url)
        me.sign_in(server.link)
        plan = new_plan(Config(), "othello", boards=SHARE / "fixtures" / "standard.txt", public=6).plan
        write_plan_file(plan, course / "six-public.plan")
        text = (course / "course.yaml").read_text().replace("plan: othello-endgame.plan", "plan: six-public.plan")
        (course / "course.yaml").write_text(text)
        assert CliRunner().invoke(main, ["portal", "sync", str(course), "--database", database]).exit_code == 0
        deadline = time.monotonic() + WITHIN
        while me.get("/a/othello").json()["public_tests"] != 6:  # the server follows within a second
            assert time.monotonic() < deadline, "the server never loaded the synced course"
            time.sleep(0.2)
        seen = me.graded(me.upload(NEGAMAX, name="negamax.py").json()["id"])
        assert len(seen["public_symbols"]) == 6  # the plan synced before its claim, not the first (4)
    finally:
        server.stop()
        worker.stop()


WAITS = """import os, time
while not os.path.exists({go!r}):  # the test makes it once the worker grading this is killed
    time.sleep(0.05)
print(19)
"""


@pytest.mark.slow
def test_a_worker_killed_mid_grade_leaves_its_job_to_another_graded_once(database, tmp_path):
    """SIGKILL a worker process while it grades a script that waits on a file: once its lease
    expires another worker claims the job and grades it; the first writes nothing (it is
    dead), the upload is counted once, and the job leaves the queue."""
    course = make_course(tmp_path / "course")
    (course / "config.yaml").write_text("isolation: none\n")  # the script must see the test's file
    go = tmp_path / "go"
    script = WAITS.format(go=str(go)).encode()
    server = Server(course, tmp_path, database, "--workers", "0")
    make = sessions(connect(database))
    first = second = None
    try:
        me = Client(server.url)
        me.sign_in(server.link)
        sid = me.upload(script, name="waits.py").json()["id"]
        first = Worker(course, database, "--lease", "2")
        held = _until(make, lambda s: s.scalar(select(Job).where(Job.submission_id == sid, Job.state == "running")))
        assert held.claimed_by.startswith(first.name + "-")
        first.stop(signal.SIGKILL)
        go.write_text("")
        second = Worker(course, database, "--lease", "2")
        graded = _until(make, lambda s: s.scalar(select(Submission).where(Submission.id == sid,
                                                                          Submission.status == GRADED)))  # fmt: skip
        assert graded.graded_by.startswith(second.name + "-") and graded.gradings == 1  # the first wrote nothing
        assert [x["id"] for x in me.get("/a/othello").json()["submissions"]] == [sid]
    finally:
        server.stop()
        for w in (first, second):
            if w:
                w.stop()
    with make() as s:
        assert s.scalars(select(Job)).all() == []
        assert s.scalars(select(Submission.status)).all() == [GRADED]
        assert used_today(s, s.get(User, s.get(Submission, sid).user_id), "othello") == 1


@pytest.mark.slow
def test_a_submission_whose_worker_dies_each_time_is_failed_after_three_and_says_so(database, tmp_path):
    """A worker process SIGKILLed while it grades the submission, three times (as a script that
    exhausts the machine gets its worker killed): the next worker fails it instead of claiming
    it a fourth time, the student and staff read why, and the upload is given back."""
    course = make_course(tmp_path / "course")
    (course / "config.yaml").write_text("isolation: none\n")  # the script must see the test's file
    go = tmp_path / "go"  # never made while a worker runs: each grading waits until its worker is killed
    server = Server(course, tmp_path, database, "--workers", "0")
    make = sessions(connect(database))
    workers: list[Worker] = []
    try:
        staff = Client(server.url)
        staff.sign_in(server.link)
        me = Client(server.url)
        me.sign_in(staff.post("/class/links", {"email": "s1@example.edu"}).json()["links"][0]["link"])
        sid = me.upload(WAITS.format(go=str(go)).encode(), name="waits.py").json()["id"]
        for attempt in (1, 2, 3):
            workers.append(Worker(course, database, "--lease", "1"))
            held = _until(make, lambda s: s.scalar(select(Job).where(
                Job.submission_id == sid, Job.state == "running", Job.claimed_by.startswith(workers[-1].name + "-"))))  # fmt: skip
            assert held.attempts == attempt
            workers[-1].stop(signal.SIGKILL)
        workers.append(Worker(course, database, "--lease", "1"))
        failed = _until(make, lambda s: s.scalar(select(Submission).where(Submission.id == sid,
                                                                          Submission.status == "failed")))  # fmt: skip
        mine, theirs = me.get(f"/s/{sid}").json(), staff.get(f"/s/{sid}").json()
        assert mine["status"] == "failed" and mine["feedback"].startswith("the grader stopped 3 times on this")
        assert theirs["error"] == failed.error == mine["feedback"]
        assert me.get("/a/othello").json()["left_today"] == 3  # not counted
        assert failed.gradings == 0 and failed.graded_by is None  # no worker wrote a result
    finally:
        go.write_text("")  # the scripts of the killed workers end
        server.stop()
        for w in workers:
            w.stop()
    with make() as s:
        assert s.scalars(select(Job)).all() == []
        assert used_today(s, s.get(User, s.get(Submission, sid).user_id), "othello") == 0


@pytest.mark.slow
def test_the_sign_in_limit_holds_across_two_servers_racing(database, tmp_path):
    """Twenty wrong passwords at once, half to each of two server processes on one database:
    five are checked, the others refused unchecked, and then the right one is refused too."""
    course = make_course(tmp_path / "course")
    servers = [Server(course, tmp_path, database, "--workers", "0") for _ in range(2)]
    try:
        owner = Client(servers[0].url)
        owner.sign_in(servers[0].link)
        assert owner.post("/password", {"password": "the right password"}).status_code == 200
        email = owner.get("/").json()["user"]["email"]
        guessers = []
        for i in range(20):
            guesser = Client(servers[i % 2].url)
            guesser.get("/signin")
            guessers.append(guesser)
        codes: list[int] = []
        start = threading.Barrier(len(guessers))

        def guess(guesser: Client, i: int) -> None:
            start.wait()
            codes.append(guesser.post("/signin", {"email": email, "password": f"guess {i}"}).status_code)

        threads = [threading.Thread(target=guess, args=(g, i)) for i, g in enumerate(guessers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [401] * 5 + [429] * 15
        for server in servers:
            late = Client(server.url)
            late.get("/signin")
            assert late.post("/signin", {"email": email, "password": "the right password"}).status_code == 429
    finally:
        for server in servers:
            server.stop()


def _worker(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["worker", *args])
    return result.exit_code, result.output


def test_a_worker_on_a_database_without_the_portals_tables_says_to_start_the_server(tmp_path):
    course = make_course(tmp_path / "course")
    code, out = _worker(str(course), "--database", f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    assert code == 1
    assert out == "Error: the database has no portal tables: start grader serve on it first (it makes them)\n"


def test_a_worker_on_a_database_behind_says_to_upgrade_it(tmp_path):
    course = make_course(tmp_path / "course")
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    upgrade(connect(url), "0005")
    code, out = _worker(str(course), "--database", url)
    assert code == 1
    versions = Path(__file__).parents[1] / "grader" / "portal" / "database" / "migrations" / "versions"
    newest = max(f.name[:4] for f in versions.glob("0*.py"))  # the migrations' files: 0001_initial.py ...
    assert out == (f"Error: the database is at revision 0005, this grader needs {newest}: start this grader's grader "
                   "serve on it once (it upgrades the tables)\n")  # fmt: skip


def test_a_worker_of_another_course_is_refused(tmp_path):
    from grader.portal.server import prepare

    served = make_course(tmp_path / "served")
    url = f"sqlite:///{tmp_path / 'portal.sqlite3'}"
    prepare(served, url)
    other = make_course(tmp_path / "other")
    (other / "course.yaml").write_text((other / "course.yaml").read_text().replace("title:", "title: Other", 1))
    title = load_course(other).title
    code, out = _worker(str(other), "--database", url)
    assert code == 1
    assert out == (f"Error: the database serves the course {load_course(served).title!r}, not {title!r} of {other}: "
                   "give the folder of the course its server serves\n")  # fmt: skip
    code, out = _worker(str(tmp_path), "--database", url)
    assert (code, out) == (1, f"Error: no course.yaml in {str(tmp_path)!r}: give the folder of the course the "
                              "server serves\n")  # fmt: skip
    code, out = _worker(str(served))
    assert code == 2 and "Missing option '--database'" in out


@pytest.mark.slow
def test_a_server_on_a_dask_cluster_grades_there_as_grade_does(tmp_path):
    """grader serve --cluster tcp://...: each submission's tests run on the cluster's workers
    (each test's record names the worker's machine; a local run's names none), with the
    verdicts grade gives."""
    pytest.importorskip("distributed", reason='a cluster needs the cluster extra: pip install -e ".[cluster]"')
    import socket

    from test_cluster import Processes

    procs = Processes()
    server = None
    try:
        procs.worker()
        procs.client(1).close()  # a worker is up
        course = make_course(tmp_path / "course")
        server = Server(course, tmp_path, None, "--cluster", procs.address)
        assert f"Grading on the Dask cluster at {procs.address}" in "".join(server.lines)
        me = Client(server.url)
        me.sign_in(server.link)
        seen = me.graded(me.upload(NEGAMAX, name="negamax.py").json()["id"])
        expected = library_result(load_course(course), NEGAMAX)
        assert seen["status"] == "graded" and seen["symbols"] == expected.symbols and seen["total"] == expected.total
    finally:
        if server:
            server.stop()
        procs.close()
    make = sessions(connect(f"sqlite:///{course / '.portal' / 'portal.sqlite3'}"))
    with make() as s:
        (records,) = s.scalars(select(Submission.records)).all()
    assert {r["host"] for r in json.loads(records)} == {socket.gethostname()}


def test_a_worker_whose_cluster_cannot_be_reached_says_so(tmp_path):
    from grader.portal.server import prepare

    course = make_course(tmp_path / "course")
    url = f"sqlite:///{tmp_path / 'portal.sqlite3'}"
    prepare(course, url)
    code, out = _worker(str(course), "--database", url, "--cluster", "tcp://nowhere")
    assert code == 1 and out.startswith("Error: ") and out.count("\n") == 1 and "tcp://nowhere" in out, out
