"""Anonymous grading on every page a TA opens: the assignments a viewer sees under pseudonyms
now (a TA, an anonymous rubric, its hand grading not released), the one label a student's
work on such an assignment goes by ("Team N" for a team, else "Student N": the grading pages'
own), the audit log's entries with the students of those assignments so labelled, and the
outbox's mails about their submissions without their addresses."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..database.models import STUDENT, TA, HandRelease, Team, User
from . import hand
from .course import Assignment, Course
from .mail import GRADED, RECEIPT, REGRADE
from .teams import team_of

HIDDEN = "anonymous until the hand grading is released"  # what a TA reads where a name would be


def hidden_from(session: Session, viewer: User, course: Course) -> set[str]:
    """The names of the assignments whose students ``viewer`` sees under pseudonyms now
    (``hand.anonymous_to`` of each; none for an instructor or a student)."""
    if viewer.role != TA:
        return set()
    out = set(session.scalars(select(HandRelease.assignment)))
    return {name for name, a in course.assignments.items()
            if a.rubric is not None and a.rubric.anonymous and name not in out}  # fmt: skip


def refusal(assignment: Assignment) -> str:
    """Why a TA may not open a page pairing the students of an assignment graded anonymously with their work."""
    return (
        f"{assignment.title} is graded anonymously until the instructor releases its hand grading: "
        f"grade it from its hand-grading page, /class/{assignment.name}/grading"
    )


def label(session: Session, student_id: int, assignment: str) -> str:
    """The pseudonym a student's work on ``assignment`` goes by: their team's, else theirs."""
    team = team_of(session, student_id, assignment)
    return hand.team_pseudonym(session, team) if team is not None else hand.pseudonym(session, student_id)


def audit_seen(session: Session, hidden: set[str], entries: Iterable[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """Each audit entry (``by`` e-mail, action, detail) as a TA sees it (``by``, detail): one about
    an assignment of ``hidden`` (its detail starts ``name:``) has each student's e-mail in it and
    each of its teams' names replaced by the student's label, the others as they are."""
    entries = list(entries)
    if not hidden:
        return [(by, detail) for by, _, detail in entries]
    students = {u.email: u.id for u in session.scalars(select(User).where(User.role == STUDENT))}
    teams = {name: list(session.scalars(select(Team).where(Team.assignment == name))) for name in hidden}
    cache: dict[tuple[str, str], str] = {}

    def of(email: str, name: str) -> str:
        if (email, name) not in cache:
            cache[email, name] = label(session, students[email], name)
        return cache[email, name]

    seen = []
    for by, _, detail in entries:
        name = detail.split(":", 1)[0]
        if name not in hidden:
            seen.append((by, detail))
            continue
        for team in teams[name]:
            detail = detail.replace(f"team {team.name!r}", hand.team_pseudonym(session, team))
        for email in sorted(students, key=len, reverse=True):  # a.b@x before b@x
            if email in detail:
                detail = detail.replace(email, of(email, name))
        seen.append((of(by, name) if by in students else by, detail))
    return seen


ABOUT_WORK = (RECEIPT, GRADED, REGRADE)  # the mails about one submission (a receipt, its grade, a request's answer)


def outbox_seen(messages: list[dict[str, Any]], hidden: Iterable[Assignment]) -> list[dict[str, Any]]:
    """The outbox's messages as a TA sees them: one about a submission of an assignment of
    ``hidden`` (its subject ends with the title) with its address ``HIDDEN``, as its time would
    tie its student to the submission; the others as they are."""
    ends = tuple(f": {a.title}" for a in hidden)
    return [{**m, "to": HIDDEN} if m["kind"] in ABOUT_WORK and ends and m["subject"].endswith(ends) else m
            for m in messages]  # fmt: skip
