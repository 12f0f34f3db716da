"""Hand grading as the database records it: the rubric items applied to a submission and the
comments on its lines, whether an assignment's hand grading is released, its points (which
enter the grade once released: ``policy``), and the pseudonyms anonymous grading shows TAs."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..database.models import STUDENT, TA, AuditEntry, HandComment, HandGrade, HandRelease, Team, User
from .course import Assignment, Course


def applied(grade: HandGrade | None) -> list[str]:
    """The names of the rubric items a hand grade applied."""
    if grade is None:
        return []
    try:
        names = json.loads(grade.items)
    except ValueError:
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def released(session: Session, assignment: Assignment | str) -> bool:
    """Whether the instructor released the assignment's hand grading to its students."""
    name = assignment if isinstance(assignment, str) else assignment.name
    return session.get(HandRelease, name) is not None


def released_points(session: Session, course: Course, submissions: Iterable[tuple[str, str]]) -> dict[str, float]:
    """The hand-graded points of each submission (``(id, assignment)``) whose assignment has a
    rubric and its hand grading released; the others have none."""
    submissions = list(submissions)
    ids = {sid for sid, name in submissions if (a := course.assignments.get(name)) is not None and a.rubric}
    if not ids:
        return {}
    out_names = {r.assignment for r in session.scalars(select(HandRelease))}
    if not out_names:
        return {}
    assignment_of = dict(submissions)
    points: dict[str, float] = {}
    for grade in session.scalars(select(HandGrade).where(HandGrade.submission_id.in_(ids))):
        name = assignment_of.get(grade.submission_id)
        rubric = course.assignments[name].rubric if name in course.assignments else None
        if name in out_names and rubric is not None:
            points[grade.submission_id] = rubric.points(applied(grade))
    return points


def comments(session: Session, submission_id: str) -> list[HandComment]:
    """A submission's line comments, by file, line, then when written."""
    query = select(HandComment).where(HandComment.submission_id == submission_id)
    return list(session.scalars(query.order_by(HandComment.path, HandComment.line, HandComment.id)))


def anonymous_to(viewer: User, assignment: Assignment | None, is_released: bool) -> bool:
    """Whether ``viewer`` sees pseudonyms for this assignment's students: a TA, under an
    anonymous rubric, before its hand grading is released (the instructor sees names)."""
    return (viewer.role == TA and assignment is not None and assignment.rubric is not None
            and assignment.rubric.anonymous and not is_released)  # fmt: skip


def pseudonym(session: Session, student_id: int) -> str:
    """The student's stable pseudonym: "Student N", N their place among the students by id."""
    place = session.scalar(select(func.count()).select_from(User).where(User.role == STUDENT, User.id <= student_id))
    return f"Student {place or 0}"


def pseudonyms(session: Session) -> dict[int, str]:
    """Every student's pseudonym (``pseudonym``'s), by user id, in one query."""
    ids = session.scalars(select(User.id).where(User.role == STUDENT).order_by(User.id))
    return {uid: f"Student {n}" for n, uid in enumerate(ids, 1)}


def team_pseudonym(session: Session, team: Team) -> str:
    """A team's stable pseudonym under anonymous grading: "Team N", N its place among the
    assignment's teams by id (one for the whole team: no member's own is shown beside it)."""
    place = session.scalar(select(func.count()).select_from(Team)
                           .where(Team.assignment == team.assignment, Team.id <= team.id))  # fmt: skip
    return f"Team {place or 0}"


COMMENT_DELETED = "hand comment deleted"  # the audit's action when staff take a line comment back


@dataclass(frozen=True)
class HandChange:
    """What staff changed of a submission's hand grading since a moment: the items applied now
    (None: not set since), the line comments written since, and how many were taken back."""

    items: list[str] | None
    added: list[HandComment]
    deleted: int

    def __bool__(self) -> bool:
        return self.items is not None or bool(self.added) or self.deleted > 0


def changed_since(session: Session, submission_id: str, since: dt.datetime) -> HandChange:
    """The change of the submission's hand grading after ``since`` (a regrade request's asking)."""
    grade = session.scalar(select(HandGrade).where(HandGrade.submission_id == submission_id,
                                                   HandGrade.graded_at > since))  # fmt: skip
    added = list(session.scalars(select(HandComment).where(HandComment.submission_id == submission_id,
                                                           HandComment.written_at > since)
                                 .order_by(HandComment.path, HandComment.line, HandComment.id)))  # fmt: skip
    deleted = session.scalar(select(func.count()).select_from(AuditEntry).where(
        AuditEntry.action == COMMENT_DELETED, AuditEntry.at > since,
        AuditEntry.detail.contains(f": submission {submission_id}: ", autoescape=True))) or 0  # fmt: skip
    return HandChange(applied(grade) if grade is not None else None, added, deleted)
