"""Teams: students who submit together to an assignment whose course.yaml entry says
``teams: {size: N}``. A student is in at most one team of an assignment (a unique constraint
of the database, so that two racing requests cannot both add them). The instructor forms
teams from a CSV (``grader portal teams``): each line an assignment, a student's e-mail and
the team's name (or number). Students form them by invitation: one invites a classmate (not
in a team, not having submitted alone), who accepts or declines; a member may leave until the
team's first submission."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from ...errors import ConfigError, GraderError
from ..database.models import INSTRUCTOR, STUDENT, AuditEntry, Submission, Team, TeamInvite, TeamMember, User
from .course import Assignment, Course

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
        if _submitted(session, [user.id], name):
            raise TeamError(f"{where}: {email} has submitted to {name} alone already, and a team is formed before "
                            "its first submission (their work stays their own): leave them out of the file")  # fmt: skip
        if team is None:
            team = Team(assignment=name, name=team_name)
            session.add(team)
            session.flush()
            made += 1
        elif _submitted(session, [m.id for m in members(session, team.id)], name):
            raise TeamError(f"{where}: team {team_name!r} of {name} has submitted already, and a team no longer "
                            f"changes after its first submission: put {email} in another team")  # fmt: skip
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


# --- teams by invitation -----------------------------------------------------------------------


def _submitted(session: Session, user_ids: list[int], assignment: str) -> bool:
    """Whether any of ``user_ids`` has uploaded to ``assignment``."""
    return session.scalar(select(Submission.id).where(Submission.user_id.in_(user_ids),
                                                      Submission.assignment == assignment).limit(1)) is not None  # fmt: skip


def _lock(session: Session, team: Team) -> None:
    """Hold the team's row until the transaction ends (PostgreSQL's row lock; SQLite's write
    lock): two acceptances at once are counted one after the other."""
    session.execute(update(Team).where(Team.id == team.id).values(name=Team.name))


def hold(session: Session, user_id: int, assignment: str) -> None:
    """Before a member's upload: their team's row held until it is taken, so that a member
    leaving (or joining) at the same moment is decided before or after it, never beside it."""
    team = team_of(session, user_id, assignment)
    if team is not None:
        _lock(session, team)


def not_invitable(address: str, assignment: Assignment) -> str:
    """The one refusal an inviter gets for the invitee's state, whichever it is (not a student
    of the course, in a team already, submitted alone): the inviter learns none of them."""
    return (f"{address} cannot be invited to a team of {assignment.title}: they may not be a student of this "
            "course, may be in a team already, or may have submitted alone; check the address, or ask your "
            "instructor")  # fmt: skip


def invite(session: Session, course: Course, user: User, assignment: Assignment, email: str) -> TeamInvite:
    """``user`` invites the student of ``email`` into their team of ``assignment`` (made when
    the invitation is accepted, if they have none): TeamError saying why not and the fix. The
    inviter's own state is said precisely (and first, so that it never depends on the invitee);
    the invitee's is one refusal, ``not_invitable``, whether they are no student of the course,
    in a team or have submitted alone (a student learns nothing of another's)."""
    size_ = _team_size(assignment)
    address = email.strip().lower()
    ours = mates(session, user.id, assignment.name)
    if _submitted(session, ours, assignment.name):
        raise TeamError(f"your team has submitted to {assignment.title}: it can no longer change (ask your "
                        "instructor)" if len(ours) > 1 else f"you have submitted to {assignment.title} alone: "
                        "ask your instructor to put you in a team")  # fmt: skip
    if len(ours) >= size_:
        raise TeamError(f"your team is full ({size_} students): no one more can join")
    if address == user.email:
        raise TeamError("that is your own e-mail: give the e-mail of a classmate")
    other = session.scalar(select(User).where(User.email == address))
    if (other is None or other.role != STUDENT or team_of(session, other.id, assignment.name) is not None
            or _submitted(session, [other.id], assignment.name)):  # fmt: skip
        raise TeamError(not_invitable(address, assignment))
    pending = session.scalar(select(TeamInvite).where(TeamInvite.assignment == assignment.name,
                                                      TeamInvite.from_user == user.id, TeamInvite.to_user == other.id))  # fmt: skip
    if pending is not None:
        raise TeamError(f"you have invited {address} already: wait for their answer")
    made = TeamInvite(assignment=assignment.name, from_user=user.id, to_user=other.id)
    session.add(made)
    session.flush()
    return made


def _team_size(assignment: Assignment) -> int:
    if assignment.team_size is None:
        raise TeamError(f"{assignment.title} is not done in teams")
    return assignment.team_size


def _invitation(session: Session, assignment: Assignment, invite_id: Any) -> TeamInvite | None:
    try:
        number = int(str(invite_id))
    except ValueError:
        return None
    found = session.get(TeamInvite, number) if 0 < number < 2**31 else None
    return found if found is not None and found.assignment == assignment.name else None


def accept(session: Session, user: User, assignment: Assignment, invite_id: Any) -> Team:
    """``user`` accepts an invitation sent to them: they join the inviter's team (made now if
    the inviter has none). LookupError for an invitation that is not theirs (as one that does
    not exist); TeamError when the team is full, has submitted, or they are in one already."""
    size_ = _team_size(assignment)
    found = _invitation(session, assignment, invite_id)
    if found is None or found.to_user != user.id:
        raise LookupError("no such invitation")
    if team_of(session, user.id, assignment.name) is not None:
        raise TeamError(f"you are in a team of {assignment.title} already: leave it first (before it submits)")
    if _submitted(session, [user.id], assignment.name):
        raise TeamError(f"you have submitted to {assignment.title} alone: ask your instructor to put you in a team")
    inviter = session.get(User, found.from_user)
    team = team_of(session, found.from_user, assignment.name)
    if team is None:
        team = Team(assignment=assignment.name, name=_new_name(session, assignment.name, inviter, user))
        session.add(team)
        session.flush()
        session.add(TeamMember(team_id=team.id, user_id=found.from_user, assignment=assignment.name))
    _lock(session, team)
    ours = [m.id for m in members(session, team.id)] or [found.from_user]
    if _submitted(session, ours, assignment.name):
        raise TeamError(f"that team has submitted to {assignment.title}: it can no longer change")
    if len(ours) >= size_:
        raise TeamError(f"that team is full ({size_} students): ask another classmate")
    session.add(TeamMember(team_id=team.id, user_id=user.id, assignment=assignment.name))
    session.delete(found)
    session.flush()
    return team


def _new_name(session: Session, assignment: str, *people: User | None) -> str:
    """A team's name made of its first members' names, numbered when another team has it."""
    base = " & ".join(p.name or p.email for p in people if p is not None)[:50]
    name, n = base, 1
    while session.scalar(select(Team.id).where(Team.assignment == assignment, Team.name == name)) is not None:
        n += 1
        name = f"{base} {n}"
    return name


def decline(session: Session, user: User, assignment: Assignment, invite_id: Any) -> TeamInvite:
    """``user`` declines an invitation sent to them, or takes back one they sent: LookupError
    for anyone else's (as one that does not exist)."""
    found = _invitation(session, assignment, invite_id)
    if found is None or user.id not in (found.to_user, found.from_user):
        raise LookupError("no such invitation")
    session.delete(found)
    session.flush()
    return found


def leave(session: Session, user: User, assignment: Assignment) -> Team:
    """``user`` leaves their team of ``assignment``, allowed until the team's first submission;
    the team is gone once empty. TeamError when not in one, or after it submitted."""
    team = team_of(session, user.id, assignment.name)
    if team is None:
        raise TeamError(f"you are in no team of {assignment.title}")
    _lock(session, team)
    ours = [m.id for m in members(session, team.id)]
    if _submitted(session, ours, assignment.name):
        raise TeamError(f"your team has submitted to {assignment.title}: you can no longer leave it (ask your "
                        "instructor)")  # fmt: skip
    session.execute(delete(TeamMember).where(TeamMember.team_id == team.id, TeamMember.user_id == user.id))
    if len(ours) <= 1:
        session.execute(delete(Team).where(Team.id == team.id))
    session.flush()
    return team


def invitations(session: Session, user: User, assignment: str) -> dict[str, list[dict[str, Any]]]:
    """The invitations ``user`` received (``received``) and sent (``sent``) for ``assignment``, each with its id and the other's name and e-mail."""
    out: dict[str, list[dict[str, Any]]] = {"received": [], "sent": []}
    for key, mine, theirs in (("received", TeamInvite.to_user, TeamInvite.from_user),
                              ("sent", TeamInvite.from_user, TeamInvite.to_user)):  # fmt: skip
        rows = session.execute(select(TeamInvite.id, User.name, User.email).join(User, User.id == theirs)
                               .where(TeamInvite.assignment == assignment, mine == user.id)
                               .order_by(TeamInvite.id)).all()  # fmt: skip
        out[key] = [{"id": i, "name": n, "email": e} for i, n, e in rows]
    return out


def check_kept(session: Session, course: Course) -> None:
    """Refuse a course.yaml that would drop teams formed already: an assignment of them no
    longer done in teams (or gone), or in teams smaller than one of them. ConfigError naming
    the assignment and the fix."""
    rows = session.execute(select(Team.assignment, Team.name, func.count(TeamMember.user_id))
                           .join(TeamMember, TeamMember.team_id == Team.id)
                           .group_by(Team.id, Team.assignment, Team.name)).all()  # fmt: skip
    for name, team, count in rows:
        found = course.assignments.get(name)
        size_ = found.team_size if found is not None else None
        if size_ is None or count > size_:
            raise ConfigError(f"assignments: {name} has team {team!r} of {count} students in the portal: keep "
                              f"'teams: {{size: {max(count, 2)}}}' (or more) on it; teams formed stay")  # fmt: skip
