"""The portal's database on SQLite and on PostgreSQL alike: the migrations, the queue claimed
by racing workers (each job once), the daily limit under racing uploads, one-time links, a
job left running by a killed server, and a worker grading for real."""

from __future__ import annotations

import dataclasses
import datetime
import secrets
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason='the portal needs its extra: pip install -e ".[portal]"')

from sqlalchemy import inspect, select, text, update  # noqa: E402

from grader.errors import GraderError  # noqa: E402
from grader.execution.executor import Lane, using  # noqa: E402
from grader.grading.run import grade, grade_submission  # noqa: E402
from grader.portal.accounts.roster import RosterEntry, import_roster  # noqa: E402
from grader.portal.accounts.signin import SignInLimit, TooManyFailures, new_signin_token, use_signin_token  # noqa: E402
from grader.portal.arena import leases as game_leases  # noqa: E402
from grader.portal.course import policy  # noqa: E402
from grader.portal.course.course import load_course, make_demo_course  # noqa: E402
from grader.portal.course.deadlines import deadlines, mark_late  # noqa: E402
from grader.portal.database.arena import DONE, GAMES, LADDER_PRIORITY, TEST_PRIORITY, GameJob  # noqa: E402
from grader.portal.database.db import connect, reading, sessions, upgrade  # noqa: E402
from grader.portal.database.models import (  # noqa: E402
    FAILED,
    GRADED,
    QUEUED,
    RUNNING,
    STUDENT,
    Extension,
    Job,
    SignInFailure,
    Submission,
    User,
)
from grader.portal.jobs import queue  # noqa: E402
from grader.portal.jobs.workers import Workers  # noqa: E402
from grader.portal.pages.assignments import student_view  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NEGAMAX = ROOT / "submissions" / "negamax.py"


@pytest.fixture
def db(database, tmp_path):
    """(sessionmaker, course, a student) on a migrated database, the demo course's Othello lab unlimited."""
    engine = connect(database)
    upgrade(engine)
    make = sessions(engine)
    course = load_course(make_demo_course(tmp_path / "course"))
    with make.begin() as s:
        import_roster(s, [RosterEntry(f"s{i}@example.edu", f"S {i}") for i in range(8)])
        student = s.scalar(select(User).where(User.email == "s0@example.edu"))
    yield make, course, student
    engine.dispose()


def test_the_migrations_make_the_tables_and_upgrade_again_as_a_no_op(database):
    engine = connect(database)
    upgrade(engine)
    upgrade(engine)  # every start runs it
    tables = set(inspect(engine).get_table_names())
    assert {
        "users",
        "signin_tokens",
        "submissions",
        "jobs",
        "daily_counts",
        "portal_meta",
        "alembic_version",
        "releases",
        "audit_log",
        "extensions",
        "signin_failures",
        "lti_keys",
        "lti_logins",
        "lti_identities",
        "lti_links",
        "lti_scores",
        "lti_lineitems",
        "lti_contexts",
        "lti_members",
        "lti_registrations",
        "lti_registration_links",
        "arena_engines",
        "engine_versions",
        "arena_tests",
        "arena_games",
        "game_jobs",
        "ladders",
        "ladder_entries",
        "ladder_games",
        "api_tokens",
        "web_sessions",
        "mail_outbox",
        "mail_optouts",
        "mail_link_requests",
        "hand_grades",
        "hand_comments",
        "hand_releases",
        "teams",
        "team_members",
        "team_invites",
        "regrade_requests",
        "password_resets",
    } <= tables
    with engine.connect() as c:
        assert c.execute(text("SELECT version_num FROM alembic_version")).all() == [("0022",)]
    engine.dispose()


def test_an_older_database_is_upgraded_keeping_its_rows(database):
    engine = connect(database)
    upgrade(engine, "0001")
    with engine.begin() as c:
        assert "releases" not in inspect(c).get_table_names()
        c.execute(
            text("INSERT INTO users (email, name, role, created_at) VALUES ('a@x.org', 'A', 'student', '2026-01-01')")
        )
    upgrade(engine, "0002")
    with engine.begin() as c:
        (uid,) = c.execute(text("SELECT id FROM users")).one()
        c.execute(text("INSERT INTO submissions (id, user_id, assignment, received_at, late, filename, size, sha256, "
                       "content, status) VALUES ('s1', :u, 'lab', '2026-01-02', 0, 'a.py', 1, 'x', :b, 'graded')"),
                  {"u": uid, "b": b"1"})  # fmt: skip
    upgrade(engine, "0015")
    with engine.begin() as c:
        assert "hand_grades" not in inspect(c).get_table_names()
        assert "regrade_requests" not in inspect(c).get_table_names()
    upgrade(engine, "0021")
    with engine.begin() as c:  # a request asked before its submission's hand grading was kept with it
        c.execute(text("INSERT INTO regrade_requests (submission_id, user_id, assignment, reason, state, asked_at, "
                       "done) VALUES ('s1', :u, 'lab', 'test 2 is right', 'open', '2026-01-03', '')"), {"u": uid})  # fmt: skip
    upgrade(engine)
    with engine.begin() as c:
        assert c.execute(text("SELECT email FROM users")).all() == [("a@x.org",)]
        assert "releases" in inspect(c).get_table_names()
        assert c.execute(text("SELECT id, status, stopped FROM submissions")).all() == [("s1", "graded", None)]
        c.execute(text("INSERT INTO hand_grades (submission_id, items, graded_by, graded_at) "
                       "VALUES ('s1', '[\"style\"]', :u, '2026-01-03')"), {"u": uid})  # fmt: skip
        c.execute(text("INSERT INTO hand_comments (submission_id, path, line, text, written_by, written_at) "
                       "VALUES ('s1', 'a.py', 1, 'why?', :u, '2026-01-03')"), {"u": uid})  # fmt: skip
        c.execute(text("INSERT INTO hand_releases (assignment, released_at, released_by) "
                       "VALUES ('lab', '2026-01-04', :u)"), {"u": uid})  # fmt: skip
    with engine.connect() as c:
        assert c.execute(text("SELECT items FROM hand_grades")).all() == [('["style"]',)]
        assert c.execute(text("SELECT path, line FROM hand_comments")).all() == [("a.py", 1)]
        c.execute(text("INSERT INTO regrade_requests (submission_id, user_id, assignment, reason, state, asked_at, "
                       "done) VALUES ('s1', :u, 'lab', 'test 3 is right', 'open', '2026-01-03', '')"), {"u": uid})  # fmt: skip
        assert c.execute(text("SELECT reason, state, hand_asked FROM regrade_requests ORDER BY id")).all() == [
            ("test 2 is right", "open", None),  # none kept: answered as before, by what changed since
            ("test 3 is right", "open", None),
        ]
    engine.dispose()


def test_a_job_running_before_leases_is_queued_again_by_their_migration(database):
    """A server of before leases requeued its running jobs at start; a job it left running has
    no lease to expire, so the migration that brings leases queues it."""
    engine = connect(database)
    upgrade(engine, "0006")
    with engine.begin() as c:
        c.execute(
            text("INSERT INTO users (email, name, role, created_at) VALUES ('a@x.org', 'A', 'student', '2026-01-01')")
        )
        (uid,) = c.execute(text("SELECT id FROM users")).one()
        c.execute(text("INSERT INTO submissions (id, user_id, assignment, received_at, late, filename, size, sha256, "
                       "content, status) VALUES ('s1', :u, 'lab', '2026-01-02', 0, 'a.py', 1, 'x', :b, 'running')"),
                  {"u": uid, "b": b"1"})  # fmt: skip
        c.execute(
            text("INSERT INTO jobs (submission_id, state, claimed_by, attempts) VALUES ('s1', 'running', 'old', 1)")
        )
    upgrade(engine)
    with engine.connect() as c:
        assert c.execute(text("SELECT state, claimed_by, lease_token FROM jobs")).all() == [("queued", None, None)]
        assert c.execute(text("SELECT status FROM submissions")).all() == [("queued",)]
    engine.dispose()


def test_racing_workers_claim_each_job_once(db):
    make, course, student = db
    lab = dataclasses.replace(course.assignments["othello"], per_day=None)
    with make.begin() as s:
        ids = [queue.submit(s, student, lab, "a.py", b"print(19)\n").id for _ in range(40)]
    claimed: list[str] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        while True:
            with make.begin() as s:
                job = queue.claim(s, f"w{n}")
                if job is None:
                    return
                with lock:
                    claimed.append(job.submission_id)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == sorted(ids)  # every job, none twice
    with make() as s:
        assert set(s.scalars(select(Submission.status))) == {RUNNING}


def test_the_daily_limit_holds_under_racing_uploads(db):
    make, course, student = db
    lab = dataclasses.replace(course.assignments["othello"], per_day=3)
    taken, refused = [], []
    barrier = threading.Barrier(10)

    def upload() -> None:
        barrier.wait()
        try:
            with make.begin() as s:
                me = s.get(User, student.id)
                taken.append(queue.submit(s, me, lab, "a.py", b"print(19)\n").id)
        except queue.DailyLimit:
            refused.append(1)

    threads = [threading.Thread(target=upload) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(taken) == 3 and len(refused) == 7
    with make() as s:
        assert queue.used_today(s, student, "othello") == 3
        assert len(s.scalars(select(Submission.id)).all()) == 3


def test_a_sign_in_token_works_once(db):
    make, _, student = db
    with make.begin() as s:
        token = new_signin_token(s, s.get(User, student.id))
    with make.begin() as s:
        assert use_signin_token(s, token).email == "s0@example.edu"
    with make.begin() as s:
        assert use_signin_token(s, token) is None
        assert use_signin_token(s, token + "x") is None


def _expire(make, lease) -> None:
    """The lease's worker stopped renewing it long enough ago (killed, its machine gone)."""
    with make.begin() as s:
        s.get(Job, lease.job_id).lease_until = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(1)


def test_a_job_whose_lease_expired_is_claimed_again_and_only_its_new_holder_writes(db):
    make, course, student = db
    with make.begin() as s:
        sid = queue.submit(s, student, course.assignments["othello"], "a.py", b"print(19)\n").id
    with make.begin() as s:
        killed = queue.claim(s, "killed")
        assert killed.submission_id == sid
    with make.begin() as s:
        assert queue.claim(s, "other") is None  # held: nobody else takes it
        assert queue.renew(s, killed)
    _expire(make, killed)
    with make.begin() as s:
        second = queue.claim(s, "next")
        assert second.submission_id == sid and second.token != killed.token
        assert s.get(Submission, sid).status == RUNNING and s.get(Job, second.job_id).attempts == 2
    with make.begin() as s:
        assert not queue.renew(s, killed)  # lost: the first worker cannot take it back
        assert not queue.finish(s, killed)  # nor write its result
    with make.begin() as s:
        assert queue.claim(s, "third") is None  # the new holder's lease is young
        assert queue.finish(s, second)
    with make() as s:
        assert s.scalars(select(Job)).all() == []


def test_a_job_whose_workers_died_on_it_attempts_times_is_failed_not_claimed(db):
    """Claimed twice and expired twice: claimed a third time; expired a third time: the next
    claim fails it (saying so, the upload given back) and claims nothing."""
    make, course, student = db
    with make.begin() as s:
        sid = queue.submit(s, student, course.assignments["othello"], "a.py", b"print(19)\n").id
    for n in (1, 2, 3):
        with make.begin() as s:
            lease = queue.claim(s, f"killed-{n}", attempts=3)
            assert lease.submission_id == sid
        _expire(make, lease)
    with make.begin() as s:
        assert queue.claim(s, "next", attempts=3) is None
    with make() as s:
        sub = s.get(Submission, sid)
        assert (sub.status, sub.error, sub.student_text) == ("failed", queue.stopped_text(3), queue.stopped_text(3))
        assert sub.error.startswith("the grader stopped 3 times on this submission")
        assert s.scalars(select(Job)).all() == [] and queue.used_today(s, student, "othello") == 0


def test_game_jobs_are_claimed_by_priority_and_a_dead_workers_job_once_more(db):
    make, _course, _student = db
    with make.begin() as s:
        s.add_all([GameJob(kind=GAMES, priority=LADDER_PRIORITY, state=QUEUED, attempts=0),
                   GameJob(kind=GAMES, priority=TEST_PRIORITY, state=QUEUED, attempts=0)])  # fmt: skip
    with make.begin() as s:
        test_job = game_leases.claim_game(s, "killed")
        assert s.get(GameJob, test_job.job_id).priority == TEST_PRIORITY  # a test's games before a ladder's
        assert game_leases.waiting_games(s) == 1
    with make.begin() as s:
        s.execute(update(GameJob).where(GameJob.id == test_job.job_id)
                  .values(lease_until=datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)))  # fmt: skip
    with make.begin() as s:
        again = game_leases.claim_game(s, "next")
        assert again.job_id == test_job.job_id and s.get(GameJob, again.job_id).attempts == 2
    with make.begin() as s:
        assert not game_leases.renew_game(s, test_job) and not game_leases.finish_game(
            s, test_job
        )  # the dead one writes nothing
        assert game_leases.finish_game(s, again)
        assert not game_leases.finish_game(s, again)  # once
    with make.begin() as s:
        assert s.get(GameJob, again.job_id).state == DONE
        assert game_leases.claim_game(s, "last").job_id != again.job_id


def test_a_worker_that_lost_its_lease_writes_nothing(db, monkeypatch):
    """A worker whose lease expired while it graded (a machine cut off) leaves the submission
    to the worker that claimed it since: its result is not written, the upload not given back."""
    make, course, student = db
    lab = course.assignments["othello"]
    with make.begin() as s:
        sid = queue.submit(s, student, lab, "x.py", b"print(19)\n").id
    slow = Workers(course, make, name="slow")
    taken: list = []

    def lose_it(course_, assignment, filename, content, executor, on_test=None):  # the lease lost meanwhile
        _expire(make, taken[0])
        with make.begin() as s:
            taken.append(queue.claim(s, "other"))
        raise GraderError("graded by a machine cut off from the database")

    real_claim = queue.claim

    def remember(session, worker, seconds=queue.LEASE_SECONDS, attempts=queue.MAX_ATTEMPTS):
        found = real_claim(session, worker, seconds, attempts)
        taken.append(found)
        return found

    monkeypatch.setattr("grader.portal.jobs.workers.claim", remember)
    monkeypatch.setattr("grader.portal.jobs.workers.grade_upload", lose_it)
    assert slow.work_once("slow")
    slow.close()
    monkeypatch.undo()
    with make() as s:
        sub = s.get(Submission, sid)
        assert sub.status == RUNNING and sub.error is None and sub.gradings == 0  # the other worker's to write
        assert s.get(Job, taken[1].job_id).lease_token == taken[1].token
        assert queue.used_today(s, student, "othello") == 1  # not given back
    assert Workers(course, make).work_once("other-again") is False  # held by "other", whose lease is young


def test_a_workers_uploads_share_its_job_slots_and_a_failed_grading_stops_its_own_lane_only(db, monkeypatch):
    """The grading threads grade upload after upload on lanes of one executor (its job slots
    and their sandboxes kept); a grading that fails inside its run stops its lane (as Ctrl-C
    stops a run's executor), and only its lane: the next upload is graded in full."""
    make, course, student = db
    lab = course.assignments["othello"]
    with make.begin() as s:
        ids = [queue.submit(s, student, lab, f"n{i}.py", NEGAMAX.read_bytes()).id for i in range(3)]
    used: list = []

    def grading(sub, plan, settings, executor=None, **options):
        used.append(executor)
        if len(used) == 2:  # a bug of the grader's in the middle of the second upload's run
            with using(executor, settings.jobs):
                raise RuntimeError("a bug in the run")
        return grade_submission(sub, plan, settings, executor, **options)

    monkeypatch.setattr("grader.portal.jobs.grading.grade_submission", grading)
    workers = Workers(course, make)
    workers.start()
    try:
        deadline = time.monotonic() + 120
        while len(used) < 3 or queue_left(make):
            assert time.monotonic() < deadline, "the worker did not grade the three uploads"
            time.sleep(0.1)
    finally:
        workers.stop()
        workers.threads[0].join(60)
        workers.close()
    expected = grade(NEGAMAX, lab.plan, course.settings(lab))
    with make() as s:
        first, failed, third = (s.get(Submission, sid) for sid in ids)
        assert (first.status, failed.status, third.status) == (GRADED, FAILED, GRADED)
        assert "a bug in the run" in failed.error
        assert third.symbols == first.symbols == expected.symbols and third.total == expected.total == 10
    assert workers.shared is not None and workers.shared.slots.keep_sandboxes
    assert all(isinstance(lane, Lane) and lane.slots is workers.shared.slots for lane in used)
    assert used[1].stop.is_set() and not used[2].stop.is_set()


def test_a_worker_closed_mid_grade_gives_its_job_back_at_once(db):
    """Closing a worker (Ctrl-C or SIGTERM on ``grader worker`` or ``serve``) stops the grading
    under way: its scripts killed, its job queued again at once, not counted among its
    attempts, nothing written as graded; the job slots closed."""
    make, course, student = db
    lab = course.assignments["othello"]
    with make.begin() as s:
        sid = queue.submit(s, student, lab, "slow.py", b"import time\ntime.sleep(120)\n").id
    workers = Workers(course, make)
    workers.start()
    deadline = time.monotonic() + 120
    while status(make, sid) != RUNNING:  # claimed
        assert time.monotonic() < deadline, "the worker did not start grading"
        time.sleep(0.05)
    workers.close()
    workers.threads[0].join(60)
    assert not workers.threads[0].is_alive()
    with make() as s:
        sub = s.get(Submission, sid)
        job = s.scalars(select(Job)).one()
        assert (sub.status, sub.gradings, sub.total) == (QUEUED, 0, None)
        assert (job.state, job.attempts, job.lease_token) == (QUEUED, 0, None)
        assert queue.used_today(s, student, "othello") == 1
    with pytest.raises(RuntimeError):
        workers.shared.lane().submit("after", lambda worker: None)


def test_a_sync_that_changes_the_job_slots_grades_the_next_upload_on_new_ones(db):
    make, course, student = db
    lab = course.assignments["othello"]
    with make.begin() as s:
        ids = [queue.submit(s, student, lab, f"n{i}.py", NEGAMAX.read_bytes()).id for i in range(2)]
    workers = Workers(course, make)
    first = workers.shared
    assert workers.work_once("test")
    (course.folder / "config.yaml").write_text(f"jobs: {first.jobs + 1}\n")
    workers.course = load_course(course.folder)  # as Portal.refresh does after a sync
    assert workers.work_once("test")
    assert workers.shared.jobs == first.jobs + 1
    with pytest.raises(RuntimeError):  # the old slots closed after their last grading
        first.lane().submit("after", lambda worker: None)
    workers.close()
    with make() as s:
        assert [s.get(Submission, sid).total for sid in ids] == [10, 10]


def status(make, sid: str) -> str:
    with make() as s:
        return s.get(Submission, sid).status


def queue_left(make) -> int:
    with make() as s:
        return len(s.scalars(select(Job)).all())


def test_a_worker_grades_as_grade_does_and_a_grader_error_is_not_counted(db):
    make, course, student = db
    lab = course.assignments["othello"]
    script = ROOT / "submissions" / "wrong_score.py"
    with make.begin() as s:
        good = queue.submit(s, student, lab, "wrong_score.py", script.read_bytes()).id
        lost = queue.submit(s, student, lab, "x.py", b"print(19)\n")
        lost.assignment = (
            "gone"  # an assignment taken out of course.yaml since: the grader's problem, not the student's
        )
        s.add(queue.DailyCount(user_id=student.id, assignment="gone", day=queue.today(), count=1))
        lost_id = lost.id
    workers = Workers(course, make)
    try:
        assert workers.work_once("test") and workers.work_once("test")
        assert not workers.work_once("test")  # the queue is empty
    finally:
        workers.close()  # its slots' resident sandboxes end with it (a test after it counts its own)
    expected = grade(script, lab.plan, course.settings(lab))
    with make() as s:
        done = s.get(Submission, good)
        assert (
            done.status == GRADED
            and done.symbols == expected.symbols
            and done.total == expected.total
            and done.gradings == 1
        )
        failed = s.get(Submission, lost_id)
        assert failed.status == FAILED and "no assignment 'gone'" in failed.error
        assert queue.used_today(s, student, "gone") == 0  # given back
        assert s.scalars(select(Job)).all() == []
        assert student.role == STUDENT
    private = [t for t in expected.tests if not lab.plan.is_public(t.index)]
    hidden = student_view(done, lab, shown=True)["private"]
    assert [(p["index"], p["symbol"]) for p in hidden] == [(t.index, t.symbol) for t in private]
    assert all("board" not in p for p in hidden) and "private" not in student_view(done, lab, shown=False)
    boards = student_view(done, dataclasses.replace(lab, private_boards=True), shown=True)["private"]
    assert [p["board"] for p in boards] == [t.position.board_string() for t in private]


@pytest.mark.slow
def test_the_server_grades_uploads_on_postgresql(postgres, tmp_path):
    """grader serve --database postgresql://...: an upload graded as grade grades it."""
    from portal_server import NEGAMAX, Client, Server, library_result, make_course

    name = "t_" + secrets.token_hex(6)
    admin = connect(postgres.format(db="postgres")).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f"CREATE DATABASE {name}"))
    admin.dispose()
    course = make_course(tmp_path / "course")
    server = Server(course, tmp_path, database=postgres.format(db=name))
    try:
        assert f"database postgresql://grader@/{name}" in "".join(server.lines)
        me = Client(server.url)
        me.sign_in(server.link)
        seen = me.graded(me.upload(NEGAMAX, name="negamax.py").json()["id"])
        expected = library_result(load_course(course), NEGAMAX)
        assert seen["symbols"] == expected.symbols and seen["total"] == expected.total
    finally:
        server.stop()
    assert not (course / ".portal" / "portal.sqlite3").exists()  # the database was PostgreSQL's


def test_an_extension_moves_the_deadlines_and_the_late_flags(db):
    make, course, student = db
    past = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=2)
    lab = dataclasses.replace(course.assignments["othello"], per_day=None, deadline=past,
                              hard_deadline=past + datetime.timedelta(days=2, hours=-1))  # fmt: skip
    with make.begin() as s:
        with pytest.raises(GraderError, match="closed at"):
            queue.submit(s, student, lab, "a.py", b"print(1)\n")
        s.add(Extension(user_id=student.id, assignment=lab.name, days=1, granted_by=student.id))
        s.flush()
        sid = queue.submit(s, student, lab, "a.py", b"print(1)\n").id  # open again, late by the moved deadline
    with make.begin() as s:
        assert s.get(Submission, sid).late == 1
        s.get(Extension, (student.id, lab.name)).days = 3
        assert mark_late(s, student, lab) == 1
    with make() as s:
        assert s.get(Submission, sid).late == 0 and deadlines(s, student, lab).extra_days == 3


def test_the_sign_in_limit_is_shared_by_every_server_process(db, database):
    """Failures counted through one engine (one server process) block through another, and
    only those within the window count."""
    make, _, _ = db
    other = connect(database)
    make_other = sessions(other)
    limit = SignInLimit(failures=5, seconds=900)
    with make.begin() as s:
        s.add(SignInFailure(email="s1@example.edu", client="10.0.0.1", at=datetime.datetime.now(datetime.timezone.utc)
                            - datetime.timedelta(seconds=901)))  # fmt: skip
    for maker in [make, make_other, make, make_other, make]:
        with maker.begin() as s:
            limit.take(s, " S1@example.edu", "10.0.0.1")
    with make.begin() as s:
        limit.forgive(s, limit.take(s, "s2@example.edu", "10.0.0.1"))  # a try that succeeded is no failure
    for maker in (make, make_other):
        with pytest.raises(TooManyFailures, match="too many failed sign-ins"), maker.begin() as s:
            limit.take(s, "s1@example.edu", "10.0.0.1")
    with make() as s:
        assert len(s.scalars(select(SignInFailure)).all()) == 5  # the old one forgotten, the forgiven one gone
    other.dispose()


def test_a_released_job_is_queued_at_once_and_a_lost_lease_releases_nothing(db):
    """A grading cut short on the grader's side (its cluster gone) gives the job back at once,
    and that claim does not count towards the attempts that fail a job its workers die on."""
    make, course, student = db
    with make.begin() as s:
        sid = queue.submit(s, student, course.assignments["othello"], "a.py", b"print(19)\n").id
    for _ in range(queue.MAX_ATTEMPTS):  # the cluster lost on every try
        with make.begin() as s:
            first = queue.claim(s, "cut-short")
        with make.begin() as s:
            assert queue.release(s, first)
            assert s.get(Submission, sid).status == QUEUED and s.get(Job, first.job_id).attempts == 0
    with make.begin() as s:
        second = queue.claim(s, "next")
        assert second.submission_id == sid
        assert not queue.release(s, first)  # no longer its job
        assert s.get(Job, second.job_id).lease_token == second.token


def _graded(s, user: User, assignment: str, received: datetime.datetime, total: float, **more) -> str:
    sid = secrets.token_urlsafe(16)
    s.add(Submission(id=sid, user_id=user.id, assignment=assignment, received_at=received, filename="a.py", size=1,
                     sha256="0" * 64, content=b"x", status=more.pop("status", GRADED), total=total, max_total=60,
                     **more))  # fmt: skip
    return sid


def test_the_counted_submissions_follow_counts_late_days_and_extensions(db):
    make, course, student = db
    deadline = datetime.datetime(2026, 1, 10, 12, tzinfo=datetime.timezone.utc)
    lab = dataclasses.replace(course.assignments["othello"], deadline=deadline, late_penalty=0.25, counts="best")
    course = dataclasses.replace(course, late_days=1, assignments={**course.assignments, "othello": lab})
    day = datetime.timedelta(days=1)
    with make.begin() as s:
        _graded(s, student, "othello", deadline - day, 40)
        late = _graded(s, student, "othello", deadline + 1.5 * day, 60)  # 2 days: 1 late day, 25% off: 45
        _graded(s, student, "othello", deadline + 2 * day, 0, status=FAILED)  # never counts
        other = s.scalar(select(User).where(User.email == "s1@example.edu"))
        rerunning = _graded(s, other, "othello", deadline - day, 10, status=QUEUED, change_reason=queue.BY_INSTRUCTOR)
        _graded(s, other, "othello", deadline - 2 * day, 50)
    with make() as s:
        got = policy.counted(s, course)
        mine = got[(student.id, "othello")]
        assert mine.submission.id == late
        assert (mine.score.late_days, mine.score.penalty, mine.score.score) == (1, 0.25, 45)
        assert got[(other.id, "othello")].score.total == 50  # the best of 10 (being rerun) and 50
        latest = dataclasses.replace(course, assignments={**course.assignments,
                                                          "othello": dataclasses.replace(lab, counts="latest")})  # fmt: skip
        assert policy.counted(s, latest)[(other.id, "othello")].submission.id == rerunning  # its old result stands
        assert set(policy.counted(s, course, student)) == {(student.id, "othello")}
    with make.begin() as s:
        s.add(Extension(user_id=student.id, assignment="othello", days=2, granted_by=student.id))
    with make() as s:
        mine = policy.counted(s, course)[(student.id, "othello")]
        assert mine.submission.id == late and (mine.score.days_late, mine.score.score) == (0, 60)


def test_a_page_reads_while_a_grader_holds_the_write_lock(db):
    """A page's session (``reading``) waits for no writer: a grader niced below the pages may
    hold the write lock a long while on a busy machine. A session that writes waits for it."""
    make, course, student = db
    read = reading(make)
    holding, release_it = threading.Event(), threading.Event()

    def writer() -> None:
        with make.begin() as s:
            queue.submit(s, student, course.assignments["othello"], "lab.py", b"print(1)\n")
            holding.set()
            release_it.wait(30)

    t = threading.Thread(target=writer)
    t.start()
    try:
        assert holding.wait(30)
        done = threading.Event()
        found: list[int] = []

        def page() -> None:
            with read() as s:
                found.append(len(s.scalars(select(User)).all()))
            done.set()

        threading.Thread(target=page, daemon=True).start()
        assert done.wait(20), "the read waited for the writer"  # a write lock waits on SQLite, never a read
        assert found == [8]
        waited = threading.Event()

        def may_write() -> None:
            with make() as s:
                s.scalars(select(User)).all()
            waited.set()

        other = threading.Thread(target=may_write)
        other.start()
        if make.kw["bind"].dialect.name == "sqlite":
            assert not waited.wait(0.5)  # a session that may write takes the lock first: it waits
    finally:
        release_it.set()
        t.join()
    other.join(30)
    assert waited.is_set()


def test_the_migration_marks_the_users_no_launch_made_as_rostered(database):
    """On SQLite and PostgreSQL: users of before 0010 whom no launch linked came from the roster
    or course.yaml (their names and roles a launch keeps); a launch's own are not."""
    engine = connect(database)
    upgrade(engine, "0009")
    with engine.begin() as c:
        for email in ("roster@x.org", "launched@x.org"):
            c.execute(text("INSERT INTO users (email, name, role, created_at) VALUES (:e, 'N', 'student', "
                           "'2026-01-01')"), {"e": email})  # fmt: skip
        c.execute(text("INSERT INTO lti_identities (issuer, sub, user_id) SELECT 'https://lms', 's', id FROM users "
                       "WHERE email = 'launched@x.org'"))  # fmt: skip
    upgrade(engine)
    with engine.connect() as c:
        rows = c.execute(text("SELECT email, rostered FROM users ORDER BY email")).all()
    assert [(e, bool(r)) for e, r in rows] == [("launched@x.org", False), ("roster@x.org", True)]
    engine.dispose()


def test_the_queues_pace_reads_the_latest_gradings_by_an_index(database):
    """On SQLite and PostgreSQL: submissions.graded_at has its index (the estimate's pace sorts
    on it at every page showing a wait); on SQLite its query plan uses it."""
    engine = connect(database)
    upgrade(engine)
    assert "ix_submissions_graded_at" in {i["name"] for i in inspect(engine).get_indexes("submissions")}
    if engine.dialect.name == "sqlite":
        with engine.connect() as c:
            plan = " ".join(str(r[-1]) for r in c.execute(text(
                "EXPLAIN QUERY PLAN SELECT graded_at FROM submissions WHERE graded_at IS NOT NULL "
                "ORDER BY graded_at DESC LIMIT 20")))  # fmt: skip
        assert "ix_submissions_graded_at" in plan, plan
    engine.dispose()
