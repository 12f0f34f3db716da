"""A fair queue: a script that times out on every test does not hold the workers. An upload
queued behind it is graded while it still runs (its tests take the slots first), and the slow
one's progress is written test by test as it goes."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import select  # noqa: E402

from grader.portal.accounts.roster import RosterEntry, import_roster  # noqa: E402
from grader.portal.course.course import load_course, make_demo_course  # noqa: E402
from grader.portal.database.db import connect, sessions, upgrade  # noqa: E402
from grader.portal.database.models import GRADED, Job, Submission, User  # noqa: E402
from grader.portal.jobs import queue  # noqa: E402
from grader.portal.jobs.workers import Workers  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NEGAMAX = ROOT / "submissions" / "negamax.py"
WITHIN = 300  # seconds: how long the two gradings may take on a loaded machine


@pytest.fixture
def slow_course(database, tmp_path):
    """(sessionmaker, course, two students, a slow script): the demo course on one job slot, its
    Othello lab's time limit 1 s; the script (token-named, in this test's folder) sleeps past it
    on every test."""
    engine = connect(database)
    upgrade(engine)
    make = sessions(engine)
    folder = make_demo_course(tmp_path / "course")
    (folder / "config.yaml").write_text("jobs: 1\n")
    yaml = folder / "course.yaml"
    yaml.write_text(yaml.read_text().replace("limits: {wall_seconds: 10}", "limits: {wall_seconds: 1}"))
    course = load_course(folder)
    with make.begin() as s:
        import_roster(s, [RosterEntry(f"s{i}@example.edu", f"S {i}") for i in range(2)])
        students = list(s.scalars(select(User).where(User.email.like("s%@example.edu")).order_by(User.email)))
    slow = tmp_path / f"slow_{secrets.token_hex(4)}.py"
    slow.write_text("import time\ntime.sleep(30)\n")
    yield make, course, students, slow
    engine.dispose()


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
