"""Teams: students who submit together to an assignment whose course.yaml entry says
``teams: {size: N}``. A student is in at most one team of an assignment (a unique constraint
of the database, so that two racing requests cannot both add them). The instructor forms
teams from a CSV (``grader portal teams``): each line an assignment, a student's e-mail and
the team's name (or number)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ...errors import GraderError
from ..database.models import INSTRUCTOR, STUDENT, AuditEntry, Team, TeamMember, User
from .course import Course

HEADER = ("assignment", "email", "team")


class TeamError(GraderError):
    """A team that cannot be formed: the line (of a CSV) or the request, and the fix."""


def team_of(session: Session, user_id: int, assignment: str) -> Team | None:
    """The team ``user_id`` is in for ``assignment`` (None: alone)."""
    return session.scalar(
        select(Team).join(TeamMember, TeamMember.team_id == Team.id)
        .where(TeamMember.user_id == user_id, TeamMember.assignment == assignment)
    )  # fmt: skip


def members(session: Session, team_id: int) -> list[User]:
    """A team's students, by e-mail."""
    return list(session.scalars(
        select(User).join(TeamMember, TeamMember.user_id == User.id)
        .where(TeamMember.team_id == team_id).order_by(User.email)
    ))  # fmt: skip


def size(session: Session, team_id: int) -> int:
    return session.scalar(select(func.count()).select_from(TeamMember).where(TeamMember.team_id == team_id)) or 0


@dataclass(frozen=True)
class Imported:
    """What a teams CSV did: the teams made, the students placed in a team, those already in it."""

    teams: int
    placed: int
    unchanged: int


def import_teams(session: Session, course: Course, text: str, source: str = "the teams file") -> Imported:
    """Form the teams a CSV gives (a line each: assignment, e-mail, team name or number; a first
    line of those headers is skipped), all or none: TeamError naming the first bad line and its
    fix. A student already in the team the line names is left there; in another team, refused."""
    rows = list(csv.reader(io.StringIO(text)))
    made = placed = unchanged = 0
    counts: dict[int, int] = {}
    for number, row in enumerate(rows, 1):
        cells = [c.strip() for c in row]
        if not any(cells) or (number == 1 and [c.lower() for c in cells[:3]] == list(HEADER)):
            continue
        where = f"{source}, line {number}"
        if len(cells) != 3 or not all(cells):
            raise TeamError(f"{where}: expected 3 values (assignment, email, team), like othello,ada@example.edu,1; "
                            f"got {','.join(row)!r}")  # fmt: skip
        name, email, team_name = cells[0], cells[1].lower(), cells[2]
        assignment = course.assignments.get(name)
        if assignment is None:
            raise TeamError(f"{where}: no assignment {name!r} in the course: give one of "
                            f"{', '.join(course.assignments)}")  # fmt: skip
        if assignment.team_size is None:
            raise TeamError(f"{where}: assignment {name!r} is not done in teams: give it 'teams: {{size: 2}}' in "
                            "course.yaml (and run grader portal sync), or drop the line")  # fmt: skip
        if len(team_name) > 60:
            raise TeamError(f"{where}: the team's name is longer than 60 characters: give a shorter one")
        user = session.scalar(select(User).where(User.email == email))
        if user is None or user.role != STUDENT:
            raise TeamError(f"{where}: no student {email!r} in the portal: fix the e-mail, or add them to the roster "
                            "and run grader portal sync")  # fmt: skip
        team = session.scalar(select(Team).where(Team.assignment == name, Team.name == team_name))
        current = team_of(session, user.id, name)
        if current is not None:
            if team is not None and current.id == team.id:
                unchanged += 1
                continue
            raise TeamError(f"{where}: {email} is already in team {current.name!r} of {name}: a student is in one "
                            "team of an assignment; fix the line")  # fmt: skip
        if team is None:
            team = Team(assignment=name, name=team_name)
            session.add(team)
            session.flush()
            made += 1
        counts[team.id] = counts.get(team.id, size(session, team.id)) + 1
        if counts[team.id] > assignment.team_size:
            raise TeamError(f"{where}: team {team_name!r} of {name} would have {counts[team.id]} students, above its "
                            f"size {assignment.team_size}: put {email} in another team")  # fmt: skip
        session.add(TeamMember(team_id=team.id, user_id=user.id, assignment=name))
        session.flush()
        placed += 1
    if made or placed:
        by = session.scalar(select(User).where(User.role == INSTRUCTOR).order_by(User.id))
        if by is not None:
            session.add(AuditEntry(user_id=by.id, action="teams",
                                   detail=f"{source}: {made} teams made, {placed} students placed"))  # fmt: skip
    return Imported(made, placed, unchanged)


def mates(session: Session, user_id: int, assignment: str) -> list[int]:
    """The user ids whose submissions to ``assignment`` are ``user_id``'s too: their team's (by
    id), or theirs alone."""
    team = select(TeamMember.team_id).where(TeamMember.user_id == user_id, TeamMember.assignment == assignment)
    found = session.scalars(select(TeamMember.user_id).where(TeamMember.team_id.in_(team))
                            .order_by(TeamMember.user_id)).all()  # fmt: skip
    return list(found) or [user_id]


def memberships(session: Session, course: Course) -> dict[tuple[int, str], int]:
    """Each team member's team, by (user id, assignment), of the course's assignments done in teams."""
    names = [a.name for a in course.assignments.values() if a.team_size is not None]
    if not names:
        return {}
    rows = session.execute(select(TeamMember.user_id, TeamMember.assignment, TeamMember.team_id)
                           .where(TeamMember.assignment.in_(names))).all()  # fmt: skip
    return {(uid, name): team for uid, name, team in rows}


def team_names_of(session: Session, course: Course) -> dict[tuple[int, str], str]:
    """Each team member's team name, by (user id, assignment)."""
    found = memberships(session, course)
    if not found:
        return {}
    names = dict(session.execute(select(Team.id, Team.name).where(Team.id.in_(set(found.values())))).all())
    return {key: names[team] for key, team in found.items()}
