"""A student's deadlines for an assignment: the course's, moved by the extension granted them
(in a team, the longest granted to a member), and the late flag of their submissions kept by them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..database.models import Extension, Submission, User
from .course import Assignment
from .teams import mates


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
    who = mates(session, user.id, assignment.name) if assignment.team_size is not None else [user.id]
    days = session.scalar(select(func.max(Extension.days)).where(Extension.user_id.in_(who),
                                                                 Extension.assignment == assignment.name)) or 0  # fmt: skip
    return moved(assignment, days)


def mark_late(session: Session, user: User, assignment: Assignment) -> int:
    """Each of the student's submissions of ``assignment`` late or not by their deadline now
    (after an extension is granted or changed); how many changed."""
    mine = deadlines(session, user, assignment)
    changed = 0
    who = mates(session, user.id, assignment.name) if assignment.team_size is not None else [user.id]
    subs = session.scalars(select(Submission).where(Submission.user_id.in_(who),
                                                    Submission.assignment == assignment.name))  # fmt: skip
    for sub in subs:
        received = sub.received_at if sub.received_at.tzinfo else sub.received_at.replace(tzinfo=dt.timezone.utc)
        late = int(mine.deadline is not None and received > mine.deadline)
        if sub.late != late:
            sub.late, changed = late, changed + 1
    return changed
