"""A change of hand grading, before and after: a submission's hand grading as a regrade request
keeps it when asked (``HandState``: the rubric items applied with their points, the hand total,
the line comments' ids), against what it is when staff answer; in words for the student, the
items added and removed with their points, the hand total before -> after, the line comments
added and taken back, and the grade before -> after as ``policy`` computes it (only when the
student sees their full total, as the grade holds the private tests' results, and the
submission is not being rerun)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..database.models import QUEUED, RUNNING, HandComment, HandGrade, Release, Submission, User, now
from . import policy
from .course import Course
from .hand import applied
from .rubric import Rubric


@dataclass(frozen=True)
class HandState:
    """A submission's hand grading at a moment: the items applied (name: points, the rubric's
    order), their total, and the ids of its line comments (ascending)."""

    items: Mapping[str, float]
    total: float
    comments: tuple[int, ...]

    def dumps(self) -> str:
        return json.dumps({"items": dict(self.items), "total": self.total, "comments": list(self.comments)})

    @classmethod
    def loads(cls, text: str | None) -> HandState | None:
        """The state a request kept; None when it kept none (asked before they were kept) or it does not read."""
        try:
            data = json.loads(text or "")
            items = {str(k): float(v) for k, v in data["items"].items()}
            return cls(items, float(data["total"]), tuple(int(c) for c in data["comments"]))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None

    def same(self, other: HandState) -> bool:
        """Whether staff changed nothing between the two: the same items applied, the same comments."""
        return set(self.items) == set(other.items) and self.comments == other.comments


def state_of(session: Session, rubric: Rubric | None, submission_id: str) -> HandState:
    """The submission's hand grading now (no items when its assignment has no rubric)."""
    names = set(applied(session.get(HandGrade, submission_id)))
    items = {i.name: i.points for i in rubric.items if i.name in names} if rubric is not None else {}
    ids = session.scalars(select(HandComment.id).where(HandComment.submission_id == submission_id)
                          .order_by(HandComment.id))  # fmt: skip
    return HandState(items, round(sum(items.values()), 2), tuple(ids))


def grades(session: Session, course: Course, student_id: int, sub: Submission, before: float,
           after: float) -> tuple[float, float] | None:  # fmt: skip
    """The student's grade on the submission's assignment (``policy``'s, after the late policy)
    with the submission's hand points ``before`` and ``after``; None when they have none."""
    student = session.get(User, student_id)
    if student is None:
        return None
    found = [policy.counted(session, course, student, {sub.id: points}).get((student.id, sub.assignment))
             for points in (before, after)]  # fmt: skip
    scores = [c.grade.score.score if c is not None else None for c in found]
    return (scores[0], scores[1]) if scores[0] is not None and scores[1] is not None else None


def words(session: Session, course: Course, sub: Submission, student_id: int, before: HandState,
          after: HandState) -> str:  # fmt: skip
    """The change from ``before`` to ``after`` as its student reads it (the hand grading released)."""
    said = []
    added = [f"{name} ({points:+g})" for name, points in after.items.items() if name not in before.items]
    removed = [f"{name} ({points:+g})" for name, points in before.items.items() if name not in after.items]
    if added:
        said.append("added " + ", ".join(added))
    if removed:
        said.append("removed " + ", ".join(removed))
    said.append(f"hand total {before.total:g} -> {after.total:g}")
    new = [c for c in after.comments if c not in set(before.comments)]
    if new:
        written = session.scalars(select(HandComment).where(HandComment.id.in_(new))
                                  .order_by(HandComment.path, HandComment.line, HandComment.id))  # fmt: skip
        said.append("line comments added: " + ", ".join(f"{c.path} line {c.line}" for c in written))
    gone = len(set(before.comments) - set(after.comments))
    if gone:
        said.append(f"{gone} line comment(s) taken back")
    assignment = course.assignments.get(sub.assignment)
    rerun = sub.status in (QUEUED, RUNNING)  # answered with a rerun too: its automatic total is not known yet
    if (
        assignment is not None
        and not rerun
        and assignment.private_shown(session.get(Release, assignment.name) is not None, now())
    ):
        moved = grades(session, course, student_id, sub, before.total, after.total)
        if moved is not None:
            said.append(f"grade {moved[0]:g} -> {moved[1]:g}")
    return "Hand grading changed: " + "; ".join(said) + "."
