"""A student's deadlines for an assignment: the course's, moved by the extension granted them,
and the late flag of their submissions kept by them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..database.models import Extension, Submission, User
from .course import Assignment


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
