"""The queue of grading: a table in the portal's database, so a restart loses nothing and no
other server is needed. A job is claimed in one statement (``FOR UPDATE SKIP LOCKED`` on
PostgreSQL, where workers of several processes claim at once; SQLite writes one at a time)
with a lease: a token and an expiry its worker renews while it grades. A job whose lease
expired (its worker killed, its machine gone) is claimed again by any worker, and a result is
written only by the lease's holder, so each submission is graded exactly once."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..errors import GraderError
from . import arena
from .arena_models import CHECK, DONE, ArenaGame, ArenaTest, EngineVersion, GameJob
from .arena_models import FAILED as CHECK_FAILED
from .course import Assignment
from .models import FAILED, GRADED, QUEUED, RUNNING, DailyCount, Extension, Job, Submission, User, now


class DailyLimit(GraderError):
    """A student's uploads to an assignment today are used up."""


def today(when: dt.datetime | None = None) -> str:
    return (when or now()).astimezone(dt.timezone.utc).date().isoformat()


def used_today(session: Session, user: User, assignment: str) -> int:
    found = session.scalar(
        select(DailyCount.count).where(
            DailyCount.user_id == user.id, DailyCount.assignment == assignment, DailyCount.day == today()
        )
    )
    return found or 0


def _take_one(session: Session, user: User, assignment: Assignment) -> None:
    """Count one upload of today, in one statement that holds the limit however many uploads
    race (the row is raised only while below it); DailyLimit when none is left."""
    day = today()
    if session.scalar(select(DailyCount.id).where(DailyCount.user_id == user.id, DailyCount.assignment == assignment.name,
                                                  DailyCount.day == day)) is None:  # fmt: skip
        try:
            with session.begin_nested():
                session.execute(
                    insert(DailyCount).values(user_id=user.id, assignment=assignment.name, day=day, count=0)
                )
        except IntegrityError:
            pass  # the other upload made the row first
    where = [DailyCount.user_id == user.id, DailyCount.assignment == assignment.name, DailyCount.day == day]
    if assignment.per_day is not None:
        where.append(DailyCount.count < assignment.per_day)
    done = session.execute(update(DailyCount).where(*where).values(count=DailyCount.count + 1))
    if getattr(done, "rowcount", 0) != 1:
        raise DailyLimit(f"you have used today's {assignment.per_day} submissions to {assignment.title}: "
                         "submit again tomorrow (UTC)")  # fmt: skip


def give_back(session: Session, sub: Submission) -> None:
    """Uncount an upload lost to a grader error (not the student's fault)."""
    session.execute(
        update(DailyCount)
        .where(DailyCount.user_id == sub.user_id, DailyCount.assignment == sub.assignment,
               DailyCount.day == today(sub.received_at), DailyCount.count > 0)
        .values(count=DailyCount.count - 1)
    )  # fmt: skip


@dataclass(frozen=True)
class Deadlines:
    """A student's deadlines for an assignment: the course's, moved by the extension granted them."""

    extra_days: int
    deadline: dt.datetime | None
    hard_deadline: dt.datetime | None


def moved(assignment: Assignment, days: int) -> Deadlines:
    """The assignment's deadlines moved by an extension of ``days``."""
    extra = dt.timedelta(days=days)
    return Deadlines(days, assignment.deadline and assignment.deadline + extra,
                     assignment.hard_deadline and assignment.hard_deadline + extra)  # fmt: skip


def deadlines(session: Session, user: User, assignment: Assignment) -> Deadlines:
    days = session.scalar(select(Extension.days).where(Extension.user_id == user.id,
                                                       Extension.assignment == assignment.name)) or 0  # fmt: skip
    return moved(assignment, days)


def mark_late(session: Session, user: User, assignment: Assignment) -> int:
    """Each of the student's submissions of ``assignment`` late or not by their deadline now
    (after an extension is granted or changed); how many changed."""
    mine = deadlines(session, user, assignment)
    changed = 0
    subs = session.scalars(select(Submission).where(Submission.user_id == user.id,
                                                    Submission.assignment == assignment.name))  # fmt: skip
    for sub in subs:
        received = sub.received_at if sub.received_at.tzinfo else sub.received_at.replace(tzinfo=dt.timezone.utc)
        late = int(mine.deadline is not None and received > mine.deadline)
        if sub.late != late:
            sub.late, changed = late, changed + 1
    return changed


def submit(session: Session, user: User, assignment: Assignment, filename: str, content: bytes) -> Submission:
    """Take an upload: counted against today's limit, kept with its digest, queued for grading;
    late, or refused after the hard deadline, by the student's own deadlines (their extension)."""
    when = now()
    mine = deadlines(session, user, assignment)
    if mine.hard_deadline is not None and when > mine.hard_deadline:
        raise GraderError(f"{assignment.title} closed at {mine.hard_deadline:%Y-%m-%d %H:%M} UTC: no more submissions")
    _take_one(session, user, assignment)
    sub = Submission(
        id=secrets.token_urlsafe(16), user_id=user.id, assignment=assignment.name, received_at=when,
        late=int(mine.deadline is not None and when > mine.deadline), filename=filename,
        size=len(content), sha256=hashlib.sha256(content).hexdigest(), content=content, status=QUEUED,
    )  # fmt: skip
    session.add(sub)
    session.flush()
    session.add(Job(submission_id=sub.id, state=QUEUED, attempts=0))
    session.flush()
    return sub


LEASE_SECONDS = 60.0  # how long a claimed job stays its worker's without a renewal


@dataclass(frozen=True)
class Lease:
    """A claimed job: its worker holds it while ``token`` is the job's and the lease is renewed."""

    job_id: int
    submission_id: str
    token: str


MAX_ATTEMPTS = 3  # claims of a job whose worker never came back (killed, lost) before the job is failed


def stopped_text(attempts: int) -> str:
    """What the student and staff read of a submission its workers stopped on ``attempts`` times."""
    return (f"the grader stopped {attempts} times on this submission (its worker was killed or lost while "
            "grading it each time): it is not graded again, and it does not count against today's "
            "submissions; if it uses much memory or many processes, make it use fewer and submit it again")  # fmt: skip


def fail_stuck(session: Session, attempts: int = MAX_ATTEMPTS) -> list[str]:
    """Fail each job claimed ``attempts`` times whose last lease expired too (its worker died on
    it each time, as a submission that exhausts the machine makes it): off the queue, its
    submission failed with ``stopped_text``, its upload given back; the submissions' ids."""
    failed = []
    for job in stuck(session, Job, attempts):
        sub = session.get(Submission, job.submission_id)
        assert sub is not None
        sub.status, sub.error = FAILED, stopped_text(job.attempts)
        sub.student_text = sub.error
        if sub.change_reason is None:  # a rerun took none of the student's uploads
            give_back(session, sub)
        session.delete(job)
        failed.append(sub.id)
    session.flush()
    return failed


def stuck(session: Session, table: type[Job] | type[GameJob], attempts: int) -> list[Any]:
    """The jobs of ``table`` (grading or game jobs) claimed ``attempts`` times whose last lease
    expired too: their worker died on each claim. Locked for the caller, who fails them."""
    return list(session.scalars(
        select(table).where(table.state == RUNNING, table.lease_until < now(), table.attempts >= attempts)
        .order_by(table.id).with_for_update(skip_locked=True)
    ))  # fmt: skip


def claim(session: Session, worker: str, seconds: float = LEASE_SECONDS, attempts: int = MAX_ATTEMPTS) -> Lease | None:
    """The oldest job queued, or whose lease expired (its worker was killed, or its machine
    lost), now this worker's for ``seconds``; None when there is none. One statement: two
    workers never claim the same job (``SKIP LOCKED`` on PostgreSQL; SQLite writes one at a time).
    A job whose worker died on it ``attempts`` times is failed first (``fail_stuck``), never claimed."""
    fail_stuck(session, attempts)
    moment, token = now(), secrets.token_hex(16)
    free = _free(Job, moment)
    oldest = select(Job.id).where(free).order_by(Job.id).limit(1).with_for_update(skip_locked=True).scalar_subquery()
    found = session.execute(
        update(Job).where(Job.id == oldest, free).values(_claimed(Job, worker, moment, token, seconds))
        .returning(Job.id, Job.submission_id)
    ).first()  # fmt: skip
    if found is None:
        return None
    session.execute(update(Submission).where(Submission.id == found.submission_id).values(status=RUNNING))
    return Lease(found.id, found.submission_id, token)


def _free(table: type[Job] | type[GameJob], moment: dt.datetime) -> ColumnElement[bool]:
    """A job nobody holds: queued, or running under a lease that expired."""
    return or_(table.state == QUEUED, and_(table.state == RUNNING, table.lease_until < moment))


def _claimed(table: type[Job] | type[GameJob], worker: str, moment: dt.datetime, token: str,
             seconds: float) -> dict[str, Any]:  # fmt: skip
    """A claimed job's new values: running, under the lease ``token`` for ``seconds``."""
    return dict(state=RUNNING, claimed_by=worker, claimed_at=moment, attempts=table.attempts + 1, lease_token=token,
                lease_until=moment + dt.timedelta(seconds=seconds))  # fmt: skip


@dataclass(frozen=True)
class GameLease:
    """A claimed game job (``kind`` check or games), held as a grading job's ``Lease``."""

    job_id: int
    kind: str
    token: str


def fail_stuck_games(session: Session, attempts: int = MAX_ATTEMPTS) -> list[int]:
    """End each game job claimed ``attempts`` times whose last lease expired too (its worker
    died on it each time, as an engine that exhausts the machine makes it): a check fails its
    version with ``stopped_text``, a test's pair ends its test (``error``), a ladder's games
    are cancelled. The jobs' ids."""
    ended = stuck(session, GameJob, attempts)
    for job in ended:
        job.state, job.lease_token, job.lease_until = DONE, None, None
        said = (f"the arena stopped {job.attempts} times on this job (its worker was killed or lost while playing "
                "it each time): it is not played again; if the engine uses much memory or many processes, make it "
                "use fewer and upload it again")  # fmt: skip
        version = session.get(EngineVersion, job.version_id) if job.kind == CHECK else None
        if version is not None:
            version.status, version.message, version.checked_at = CHECK_FAILED, said, now()
        games = session.scalars(select(ArenaGame).where(ArenaGame.job_id == job.id)).all()
        for g in games:
            g.status, g.lease_token, g.cause = arena.CANCELLED, None, said
        test = session.get(ArenaTest, games[0].test_id) if games and games[0].test_id else None
        if test is not None and test.status == RUNNING:
            arena.stop_test(session, test, arena.ERROR)
    session.flush()
    return [job.id for job in ended]


def claim_game(session: Session, worker: str, seconds: float = LEASE_SECONDS,
               attempts: int = MAX_ATTEMPTS) -> GameLease | None:  # fmt: skip
    """The game job of highest priority (then the oldest) queued or whose lease expired, now
    this worker's for ``seconds``: as ``claim``, in one statement. A job claimed again after its
    worker died has its games played again from their start; one its workers died on
    ``attempts`` times is ended first (``fail_stuck_games``), never claimed."""
    fail_stuck_games(session, attempts)
    moment, token = now(), secrets.token_hex(16)
    free = _free(GameJob, moment)
    first = (select(GameJob.id).where(free).order_by(GameJob.priority.desc(), GameJob.id).limit(1)
             .with_for_update(skip_locked=True).scalar_subquery())  # fmt: skip
    found = session.execute(
        update(GameJob).where(GameJob.id == first, free).values(_claimed(GameJob, worker, moment, token, seconds))
        .returning(GameJob.id, GameJob.kind)
    ).first()  # fmt: skip
    return None if found is None else GameLease(found.id, found.kind, token)


def renew_game(session: Session, lease: GameLease, seconds: float = LEASE_SECONDS) -> bool:
    """Keep the game job for ``seconds`` more; False when the lease was lost."""
    return _renewed(session, GameJob, lease.job_id, lease.token, seconds)


def finish_game(session: Session, lease: GameLease) -> bool:
    """Mark the game job done if this lease still holds it: True, and the caller writes its
    games in the same transaction; False (write nothing) when another worker holds it now."""
    done = session.execute(
        update(GameJob).where(GameJob.id == lease.job_id, GameJob.lease_token == lease.token, GameJob.state == RUNNING)
        .values(state=DONE, lease_until=None)
    )  # fmt: skip
    return getattr(done, "rowcount", 0) == 1


def waiting_games(session: Session) -> int:
    """Game jobs waiting to be claimed (a ladder queues its games when there are none)."""
    return session.scalar(select(func.count()).select_from(GameJob).where(GameJob.state == QUEUED)) or 0


def renew(session: Session, lease: Lease, seconds: float = LEASE_SECONDS) -> bool:
    """Keep the job for ``seconds`` more; False when the lease was lost (expired and claimed by another)."""
    return _renewed(session, Job, lease.job_id, lease.token, seconds)


def _renewed(session: Session, table: type[Job] | type[GameJob], job_id: int, token: str, seconds: float) -> bool:
    done = session.execute(
        update(table).where(table.id == job_id, table.lease_token == token)
        .values(lease_until=now() + dt.timedelta(seconds=seconds))
    )  # fmt: skip
    return getattr(done, "rowcount", 0) == 1


def finish(session: Session, lease: Lease) -> bool:
    """Take the job off the queue if this lease still holds it: True, and the caller writes the
    result in the same transaction; False (write nothing) when another worker holds it now. The
    row stays locked until the transaction ends, so nobody claims it in between."""
    done = session.execute(delete(Job).where(Job.id == lease.job_id, Job.lease_token == lease.token))
    return getattr(done, "rowcount", 0) == 1


def release(session: Session, lease: Lease) -> bool:
    """Give the job back to the queue at once (its grading was cut short by the grader's side,
    not the script's: a cluster's scheduler gone), the claim not counted among its attempts;
    False when the lease was lost already."""
    done = session.execute(
        update(Job).where(Job.id == lease.job_id, Job.lease_token == lease.token)
        .values(state=QUEUED, claimed_by=None, claimed_at=None, lease_token=None, lease_until=None,
                attempts=Job.attempts - 1)
    )  # fmt: skip
    if getattr(done, "rowcount", 0) != 1:
        return False
    session.execute(update(Submission).where(Submission.id == lease.submission_id).values(status=QUEUED))
    return True


def waiting(session: Session) -> int:
    """Jobs waiting to be claimed."""
    return session.scalar(select(func.count()).select_from(Job).where(Job.state == QUEUED)) or 0


PLAN_CHANGED, BY_INSTRUCTOR = "the plan changed", "rerun by the instructor"


def rerun(session: Session, sub: Submission, digest: str) -> str | None:
    """Queue a graded submission again, its result kept as the previous one with why it was
    rerun: the plan changed (``digest``, the assignment's plan now, is not the one it was graded
    on) or the instructor asked. Not counted against the student's uploads; None (nothing
    done) when it is not graded or is queued already."""
    if sub.status != GRADED or session.scalar(select(Job.id).where(Job.submission_id == sub.id)) is not None:
        return None
    reason = PLAN_CHANGED if sub.plan_digest is not None and sub.plan_digest != digest else BY_INSTRUCTOR
    sub.previous_total, sub.previous_max_total, sub.previous_symbols = sub.total, sub.max_total, sub.symbols
    sub.previous_public_symbols, sub.previous_public_total = sub.public_symbols, sub.public_total
    sub.change_reason, sub.status = reason, QUEUED
    session.add(Job(submission_id=sub.id, state=QUEUED, attempts=0))
    session.flush()
    return reason


def countable() -> ColumnElement[bool]:
    """A submission that may count: graded, or graded and being rerun (its old result stands meanwhile)."""
    rerunning = and_(Submission.change_reason.is_not(None), Submission.status.in_((QUEUED, RUNNING)))
    return or_(Submission.status == GRADED, rerunning)
