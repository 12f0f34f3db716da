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

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ...errors import GraderError
from ...runs.text import plural
from ..course.course import Assignment
from ..course.deadlines import deadlines
from ..course.teams import hold, mates
from ..database.leases import LEASE_SECONDS, MAX_ATTEMPTS, claimed, free, renewed, stuck
from ..database.models import FAILED, GRADED, QUEUED, RUNNING, DailyCount, Job, Submission, User, now


class DailyLimit(GraderError):
    """A student's uploads to an assignment today are used up (a team's, in a team)."""


def _counter(session: Session, user_id: int, assignment: str) -> int:
    """Whose row counts the uploads of ``user_id`` to ``assignment``: theirs, or in a team its first member's."""
    return mates(session, user_id, assignment)[0]


def today(when: dt.datetime | None = None) -> str:
    return (when or now()).astimezone(dt.timezone.utc).date().isoformat()


def used_today(session: Session, user: User, assignment: str) -> int:
    who = _counter(session, user.id, assignment)
    found = session.scalar(
        select(DailyCount.count).where(
            DailyCount.user_id == who, DailyCount.assignment == assignment, DailyCount.day == today()
        )
    )
    return found or 0


def _take_one(session: Session, user: User, assignment: Assignment) -> None:
    """Count one upload of today, in one statement that holds the limit however many uploads
    race (the row is raised only while below it); DailyLimit when none is left."""
    day = today()
    who = _counter(session, user.id, assignment.name)
    if session.scalar(select(DailyCount.id).where(DailyCount.user_id == who, DailyCount.assignment == assignment.name,
                                                  DailyCount.day == day)) is None:  # fmt: skip
        try:
            with session.begin_nested():
                session.execute(insert(DailyCount).values(user_id=who, assignment=assignment.name, day=day, count=0))
        except IntegrityError:
            pass  # the other upload made the row first
    where = [DailyCount.user_id == who, DailyCount.assignment == assignment.name, DailyCount.day == day]
    if assignment.per_day is not None:
        where.append(DailyCount.count < assignment.per_day)
    done = session.execute(update(DailyCount).where(*where).values(count=DailyCount.count + 1))
    if getattr(done, "rowcount", 0) != 1:
        whose = "your team has" if len(mates(session, user.id, assignment.name)) > 1 else "you have"
        raise DailyLimit(f"{whose} used today's {assignment.per_day} submissions to {assignment.title}: "
                         "submit again tomorrow (UTC)")  # fmt: skip


def give_back(session: Session, sub: Submission) -> None:
    """Uncount an upload lost to a grader error (not the student's fault)."""
    session.execute(
        update(DailyCount)
        .where(DailyCount.user_id == _counter(session, sub.user_id, sub.assignment),
               DailyCount.assignment == sub.assignment,
               DailyCount.day == today(sub.received_at), DailyCount.count > 0)
        .values(count=DailyCount.count - 1)
    )  # fmt: skip


def submit(session: Session, user: User, assignment: Assignment, filename: str, content: bytes) -> Submission:
    """Take an upload: counted against today's limit, kept with its digest, queued for grading;
    late, or refused after the hard deadline, by the student's own deadlines (their extension)."""
    when = now()
    mine = deadlines(session, user, assignment)
    if mine.hard_deadline is not None and when > mine.hard_deadline:
        raise GraderError(f"{assignment.title} closed at {mine.hard_deadline:%Y-%m-%d %H:%M} UTC: no more submissions")
    if assignment.team_size is not None:
        hold(session, user.id, assignment.name)
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


@dataclass(frozen=True)
class Lease:
    """A claimed job: its worker holds it while ``token`` is the job's and the lease is renewed."""

    job_id: int
    submission_id: str
    token: str


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


def claim(session: Session, worker: str, seconds: float = LEASE_SECONDS, attempts: int = MAX_ATTEMPTS) -> Lease | None:
    """The oldest job queued, or whose lease expired (its worker was killed, or its machine
    lost), now this worker's for ``seconds``; None when there is none. One statement: two
    workers never claim the same job (``SKIP LOCKED`` on PostgreSQL; SQLite writes one at a time).
    A job whose worker died on it ``attempts`` times is failed first (``fail_stuck``), never claimed."""
    fail_stuck(session, attempts)
    moment, token = now(), secrets.token_hex(16)
    unheld = free(Job, moment)
    oldest = select(Job.id).where(unheld).order_by(Job.id).limit(1).with_for_update(skip_locked=True).scalar_subquery()
    found = session.execute(
        update(Job).where(Job.id == oldest, unheld).values(claimed(Job, worker, moment, token, seconds))
        .returning(Job.id, Job.submission_id)
    ).first()  # fmt: skip
    if found is None:
        return None
    session.execute(update(Submission).where(Submission.id == found.submission_id).values(status=RUNNING))
    return Lease(found.id, found.submission_id, token)


def renew(session: Session, lease: Lease, seconds: float = LEASE_SECONDS) -> bool:
    """Keep the job for ``seconds`` more; False when the lease was lost (expired and claimed by another)."""
    return renewed(session, Job, lease.job_id, lease.token, seconds)


def progress(session: Session, lease: Lease, done: int, total: int | None = None) -> bool:
    """Write a grading's tests done so far (and of how many, given at its claim) on its job, if
    the lease still holds it; whether it did."""
    values: dict[str, int | None] = {"tests_done": done}
    if total is not None or done == 0:
        values["tests_total"] = total
    found = session.execute(update(Job).where(Job.id == lease.job_id, Job.lease_token == lease.token).values(values))
    return getattr(found, "rowcount", 0) == 1


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
                attempts=Job.attempts - 1, tests_done=None)
    )  # fmt: skip
    if getattr(done, "rowcount", 0) != 1:
        return False
    session.execute(update(Submission).where(Submission.id == lease.submission_id).values(status=QUEUED))
    return True


def waiting(session: Session) -> int:
    """Jobs waiting to be claimed."""
    return session.scalar(select(func.count()).select_from(Job).where(Job.state == QUEUED)) or 0


PACE_GRADINGS = 20  # the latest gradings whose pace gives a waiting submission's estimate


@dataclass(frozen=True)
class Standing:
    """Where a submission on the queue stands: its place among those waiting (1: claimed next)
    and the seconds that may take at the pace of the latest gradings (None: no pace yet); or,
    while it is graded, its tests done of how many (None: a GTP lab's, graded in one run)."""

    submission: str
    user_id: int
    assignment: str
    state: str
    rerun: bool
    position: int | None = None
    estimate: float | None = None
    done: int | None = None
    total: int | None = None

    def text(self) -> str:
        """The standing in words, as the pages show it."""
        if self.state == RUNNING:
            return "being graded" + (f": {self.done} of {self.total} tests done" if self.total else "")
        ahead = self.position - 1 if self.position else 0
        where = f"{plural(ahead, 'submission', 'submissions')} ahead of it" if ahead else "graded next"
        return f"waiting: {where}" + (f", about {_duration(self.estimate)}" if self.estimate else "")

    def key(self) -> str:
        """What changes when the page should say something new."""
        return f"{self.state} {self.position} {self.done} {self.total} {_duration(self.estimate or 0)}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"


def pace(session: Session, count: int = PACE_GRADINGS) -> float | None:
    """Gradings finished a second, over the latest ``count`` (None when fewer than two, or
    not lately: no estimate rather than a wrong one)."""
    found = session.scalars(select(Submission.graded_at).where(Submission.graded_at.is_not(None))
                            .order_by(Submission.graded_at.desc()).limit(count))  # fmt: skip
    times = [t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc) for t in found if t is not None]
    if len(times) < 2:
        return None
    span = (now() - times[-1]).total_seconds()
    return (len(times) - 1) / span if 0 < span < 3600 else None


def standings(session: Session, ids: list[str] | None = None) -> dict[str, Standing]:
    """Where each submission on the queue stands (of ``ids``, else every one), by its id; the
    waiting ones in the order they are claimed (the oldest job first)."""
    rows = session.execute(
        select(Job.id, Job.state, Job.tests_done, Job.tests_total, Submission.id, Submission.user_id,
               Submission.assignment, Submission.change_reason)
        .join(Submission, Submission.id == Job.submission_id).order_by(Job.id)
    ).all()  # fmt: skip
    rate = pace(session) if any(r[1] == QUEUED for r in rows) else None
    wanted = None if ids is None else set(ids)
    found, place = {}, 0
    for _, state, done, total, sid, uid, name, reason in rows:
        place += state == QUEUED
        if wanted is not None and sid not in wanted:
            continue
        queued = state == QUEUED
        found[sid] = Standing(sid, uid, name, state, reason is not None, place if queued else None,
                              place / rate if queued and rate else None, None if queued else done,
                              None if queued else total)  # fmt: skip
    return found


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
