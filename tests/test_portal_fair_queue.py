"""A fair queue: a script that times out on every test does not hold the workers. An upload
queued behind it is graded while it still runs (its tests take the slots first), and the slow
one's progress is written test by test as it goes."""

from __future__ import annotations

import secrets
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select  # noqa: E402

from grader.execution.executor import LocalExecutor  # noqa: E402
from grader.portal.accounts.roster import RosterEntry, import_roster  # noqa: E402
from grader.portal.course.course import load_course, make_demo_course  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.models import GRADED, RUNNING, Job, Submission, User  # noqa: E402
from grader.portal.jobs import queue  # noqa: E402
from grader.portal.jobs.workers import Workers  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NEGAMAX = ROOT / "submissions" / "negamax.py"
WITHIN = 300  # seconds: how long the two gradings may take on a loaded machine


@pytest.fixture
def slow_course(database, tmp_path):
    """(sessionmaker, course, two students, a slow script): the demo course on one job slot, its
    Othello lab's time limit 3 s; the script (token-named, in this test's folder) sleeps past it
    on every test. An honest test takes a fraction of that, even on a loaded machine (at 1 s, a
    machine at load 12 graded the honest upload's ten tests after the slow one's)."""
    engine = connect(database)
    upgrade(engine)
    make = sessions(engine)
    folder = make_demo_course(tmp_path / "course")
    (folder / "config.yaml").write_text("jobs: 1\n")
    yaml = folder / "course.yaml"
    yaml.write_text(yaml.read_text().replace("limits: {wall_seconds: 10}", "limits: {wall_seconds: 3}"))
    course = load_course(folder)
    with make.begin() as s:
        import_roster(s, [RosterEntry(f"s{i}@example.edu", f"S {i}") for i in range(2)])
        students = list(s.scalars(select(User).where(User.email.like("s%@example.edu")).order_by(User.email)))
    slow = tmp_path / f"slow_{secrets.token_hex(4)}.py"
    slow.write_text("import time\ntime.sleep(30)\n")
    yield make, course, students, slow
    engine.dispose()


def test_a_free_slot_takes_the_next_task_of_the_run_that_has_had_the_least_slot_time():
    """Two runs on one job slot: the slow run's first task holds it while the other run queues
    its tasks behind the slow run's; once it is free, the other run's tasks go first."""
    order: list[str] = []
    first_runs = threading.Event()
    go = threading.Event()

    def task(name: str, hold: bool = False):
        def run(worker):
            if hold:
                first_runs.set()
                go.wait(30)
            order.append(name)

        return run

    with LocalExecutor(1, keep_sandboxes=True) as slots:
        slow, other = slots.lane(), slots.lane()
        slow.submit("s1", task("s1", hold=True))
        for k in (2, 3):
            slow.submit(f"s{k}", task(f"s{k}"))
        assert first_runs.wait(30)
        for k in (1, 2, 3):
            other.submit(f"o{k}", task(f"o{k}"))
        go.set()
        assert sorted(key for key, _ in other.results()) == ["o1", "o2", "o3"]
        assert sorted(key for key, _ in slow.results()) == ["s1", "s2", "s3"]
        slow.close()
        other.close()
    assert order == ["s1", "o1", "o2", "o3", "s2", "s3"]


@pytest.mark.slow  # a slow script to its limits beside honest uploads: 10 s and more
def test_an_upload_queued_behind_a_slow_script_is_graded_before_it_ends(slow_course):
    make, course, (first, second), slow = slow_course
    lab = course.assignments["othello"]
    with make.begin() as s:
        slow_id = queue.submit(s, first, lab, slow.name, slow.read_bytes()).id
        fast_id = queue.submit(s, second, lab, "negamax.py", NEGAMAX.read_bytes()).id
    workers = Workers(course, make, 1, spare=2, long=0.5)
    workers.start()
    seen: list[tuple[int | None, int | None]] = []  # the slow one's progress, as its job says it
    slow_when_fast_graded = None
    try:
        deadline = time.monotonic() + WITHIN
        while True:
            assert time.monotonic() < deadline, "the two uploads were not graded"
            with make() as s:
                job = s.scalar(select(Job).where(Job.submission_id == slow_id))
                if job is not None and job.tests_done is not None:
                    seen.append((job.tests_done, job.tests_total))
                fast, slow_sub = s.get(Submission, fast_id), s.get(Submission, slow_id)
                if fast.status == GRADED and slow_when_fast_graded is None:
                    slow_when_fast_graded = (slow_sub.status, job.tests_done if job is not None else None)
                if fast.status == GRADED and slow_sub.status == GRADED:
                    break
            time.sleep(0.05)
    finally:
        workers.close()
    with make() as s:
        fast, slow_sub = s.get(Submission, fast_id), s.get(Submission, slow_id)
        assert slow_sub.total == 0 and slow_sub.symbols.upper() == "T" * 10
        assert fast.graded_at < slow_sub.graded_at
    status, done = slow_when_fast_graded
    assert status != GRADED and done is not None and done < 10  # graded while the slow one was under way
    assert {total for _, total in seen} == {10}
    assert len({done for done, _ in seen if 0 < done < 10}) >= 2  # its tests done, written as they came


def _standings(client, path: str, count: int, then=None) -> list[str]:
    """The first ``count`` standings a page's stream tells (``then`` run after the first)."""
    told: list[str] = []
    with client.http.stream("GET", path, timeout=60) as r:
        kind = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: ") and kind == "standing":
                told.append(line.removeprefix("data: "))
                if len(told) == count:
                    return told
                if then is not None:
                    then()
            elif not line:
                kind = None
    return told


def test_the_class_table_and_a_students_page_show_what_is_under_way(tmp_path):
    """Being graded (n of N tests done), waiting (with the place on the queue), a rerun pending:
    the class table's head counts them (the running one among those waiting) and each student's
    cell says so, a cell of a student with nothing graded yet too; the student's page shows
    its place in its HTML, and its stream tells each change (the tests done as they come)."""
    from portal_server import Client, Server, make_course

    folder = make_course(tmp_path / "course")
    database = f"sqlite:///{tmp_path / 'portal.sqlite3'}"
    server = Server(folder, tmp_path, database, "--workers", "0")
    engine = connect(database)
    make = sessions(engine)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        people = {}
        for entry in instructor.post("/class/links").json()["links"][:3]:
            people[entry["email"]] = Client(server.url)
            people[entry["email"]].sign_in(entry["link"])
        (a, me_a), (b, me_b), (c, me_c) = people.items()
        first = me_a.upload(NEGAMAX, name="negamax.py").json()["id"]
        workers = Workers(load_course(folder), make)
        try:
            assert workers.work_once("test")  # graded for real: a's counted submission
        finally:
            workers.close()
        running = me_b.upload(NEGAMAX, name="negamax.py").json()["id"]
        waiting = me_c.upload(NEGAMAX, name="negamax.py").json()["id"]
        with make.begin() as s:  # a worker claims b's and writes its tests done, as workers.py does
            lease = queue.claim(s, "elsewhere")
            assert lease.submission_id == running and queue.progress(s, lease, 0, 10)
        with make.begin() as s:
            queue.progress(s, lease, 3)
        assert instructor.post("/class/rerun", {"assignment": "othello", "email": a}).json()["rerun"]

        data = instructor.get("/class").json()
        assert data["queue"] == 3  # the one being graded among those waiting
        head = data["grading"]
        assert (head["waiting"], head["queued"], head["running"], head["reruns"]) == (3, 2, 1, 1)
        assert head["being_graded"] == [{"submission": running, "assignment": "othello", "done": 3, "total": 10}]
        rows = {r["email"]: r for r in data["students"]}
        assert rows[b]["assignments"]["othello"] is None  # nothing graded yet, and yet not blank:
        assert rows[b]["under_way"]["othello"]["text"] == "being graded: 3 of 10 tests done"
        assert rows[c]["under_way"]["othello"]["text"] == "waiting: graded next"
        assert rows[a]["assignments"]["othello"]["submission"] == first
        assert rows[a]["under_way"]["othello"]["text"] == "rerun waiting: 1 submission ahead of it"
        html = instructor.html("/class").text
        for text in ("3 submissions waiting to be graded", "1 being graded: 3 of 10 tests done; 1 rerun pending",
                     "being graded: 3 of 10 tests done</a>", "waiting: graded next</a>"):  # fmt: skip
            assert text in html

        assert me_c.get(f"/s/{waiting}").json()["standing"]["position"] == 1
        assert '<dd id="standing" role="status">waiting: graded next</dd>' in me_c.html(f"/s/{waiting}").text
        assert me_a.get(f"/s/{first}").json()["standing"]["position"] == 2

        def more() -> None:
            with make.begin() as s:
                queue.progress(s, lease, 4)

        told = _standings(me_b, f"/s/{running}/events", 2, more)
        assert told == ["being graded: 3 of 10 tests done", "being graded: 4 of 10 tests done"]
    finally:
        server.stop()
        engine.dispose()


@pytest.mark.slow  # a browser and a server: several seconds
def test_in_a_browser_a_waiting_submissions_page_shows_its_place_then_its_tests_done_live(tmp_path, chromium):
    """The page of a submission that waits shows its place on the queue; once a worker claims
    it, the page (reloaded by its script) shows its tests done, each new count put in place by
    its script as the worker writes it, with no reload; no console error (a CSP violation)."""
    from portal_server import Client, Server, make_course

    folder = make_course(tmp_path / "course")
    database = f"sqlite:///{tmp_path / 'portal.sqlite3'}"
    server = Server(folder, tmp_path, database, "--workers", "0")
    engine = connect(database)
    make = sessions(engine)
    try:
        instructor = Client(server.url)
        instructor.sign_in(server.link)
        link = instructor.post("/class/links", {"email": "s1@example.edu"}).json()["links"][0]["link"]
        page = chromium.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(link)
        with page.expect_navigation():
            page.click("#signin")
        page.click("text=Othello endgame lab")
        page.set_input_files("input[name=script]", str(NEGAMAX))
        page.click("#upload")
        page.wait_for_url(f"{server.url}/s/*")
        assert page.inner_text("#standing") == "waiting: graded next"
        with make.begin() as s:  # a worker claims it and writes its tests done, as workers.py does
            lease = queue.claim(s, "elsewhere")
            queue.progress(s, lease, 0, 10)
        page.locator("#submission[data-status=running]").wait_for(timeout=60_000)  # the page reloaded itself
        page.locator("#standing", has_text="being graded: 0 of 10 tests done").wait_for(timeout=60_000)
        page.evaluate("window.notReloaded = true")
        with make.begin() as s:
            queue.progress(s, lease, 6)
        page.locator("#standing", has_text="being graded: 6 of 10 tests done").wait_for(timeout=60_000)
        assert page.evaluate("window.notReloaded") is True  # put in place, not reloaded
        assert problems == []
    finally:
        server.stop()
        engine.dispose()


@pytest.mark.slow  # a long grading and GTP programs: 30 s
def test_a_gtp_grading_counts_as_waiting_so_the_spare_threads_claim_no_second_one(slow_course, tmp_path):
    """A GTP lab's grading runs its program outside the job slots: beside a slow script's long
    grading, a spare thread claims one GTP upload, then counts it as waiting and claims no other
    (before, every spare thread claimed one: programs on no slot, on the slots' cores)."""
    make, course, (first, second), slow = slow_course
    hang = tmp_path / f"hang_{secrets.token_hex(4)}.py"
    hang.write_text("import time\ntime.sleep(60)\n")  # answers no GTP command: each one waits out its limit
    with make.begin() as s:
        queue.submit(s, first, course.assignments["othello"], slow.name, slow.read_bytes())
        for who in (first, second):
            queue.submit(s, who, course.assignments["gomoku"], hang.name, hang.read_bytes())
    workers = Workers(course, make, 1, spare=2, long=0.5)
    workers.start()
    most = 0
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with make() as s:
                most = max(most, len(s.scalars(select(Job).where(Job.state == RUNNING)).all()))
            time.sleep(0.1)
    finally:
        workers.close()
    assert most == 2  # the slow script's and one GTP program
