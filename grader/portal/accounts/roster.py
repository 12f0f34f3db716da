"""The people of the course: the roster read from a CSV (as LMS gradebooks export it) and
imported, roles (student, TA, instructor), and a user made or given their role."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...errors import GraderError
from ...names import visible
from ..database.models import INSTRUCTOR, ROLES, STUDENT, TA, User

EMAIL_COLUMNS = ("email", "e-mail", "email address", "sis login id", "login id")


NAME_COLUMNS = ("name", "student", "full name")


ROLE_ALIASES = {"student": STUDENT, "ta": TA, "teaching assistant": TA, "instructor": INSTRUCTOR, "teacher": INSTRUCTOR}


@dataclass(frozen=True)
class RosterEntry:
    email: str
    name: str
    role: str = STUDENT


def read_roster(text: str, source: str = "roster") -> list[RosterEntry]:
    """The people of a roster CSV: a header row with an e-mail column (Email, E-mail, SIS Login
    ID, Moodle's Email address), a name column (Name, Student, or First Name and Last Name or
    Surname) and an optional Role. Canvas's gradebook export is read as it is: its 'Points
    Possible' row and its test student are left out."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows:
        raise GraderError(f"{source}: empty: give a header row (Email,Name) and a row per student")
    header = [h.strip().lower() for h in rows[0]]
    email = next((header.index(c) for c in EMAIL_COLUMNS if c in header), None)
    if email is None:
        raise GraderError(f"{source}: no e-mail column in the header {rows[0]}: name one Email")
    name = next((header.index(c) for c in NAME_COLUMNS if c in header), None)
    first = header.index("first name") if "first name" in header else None
    last = next((header.index(c) for c in ("last name", "surname") if c in header), None)
    role = header.index("role") if "role" in header else None
    out = []
    for n, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row) or row[0].strip().startswith("Points Possible"):
            continue
        if row[0].strip() == "Student, Test":  # the student Canvas adds to see a course as one
            continue
        cells = row + [""] * (len(header) - len(row))
        address = visible(cells[email]).strip().lower()
        if "@" not in address:
            raise GraderError(f"{source}: line {n}: {cells[email]!r} is not an e-mail address: "
                              "give each person's address in the e-mail column")  # fmt: skip
        if name is not None:
            who = visible(cells[name]).strip()
        else:
            who = " ".join(visible(cells[i]).strip() for i in (first, last) if i is not None).strip()
        said = cells[role].strip() if role is not None else STUDENT
        kind = ROLE_ALIASES.get(said.lower())
        if kind is None:
            raise GraderError(f"{source}: line {n}: role {said!r} is not one of {', '.join(ROLES)}: write one of them")
        out.append(RosterEntry(address, who or address, kind))
    return out


def import_roster(session: Session, entries: list[RosterEntry], uploader: User | None = None,
                  instructors: Sequence[str] = ()) -> int:  # fmt: skip
    """Add the people not there yet, and update names and roles of those who are; the count
    added. GraderError (the caller's transaction then writes nothing) when the roster would
    change the role of its ``uploader`` (an instructor uploading it in the portal), so the
    course is never left without one, or of one of the course's ``instructors`` (course.yaml
    makes them so: it alone changes that)."""
    kept = {email.lower() for email in instructors}
    added = 0
    for entry in entries:
        user = session.scalar(select(User).where(User.email == entry.email))
        if uploader is not None and user is not None and user.id == uploader.id and entry.role != user.role:
            raise GraderError(f"the roster makes you ({user.email}) a {entry.role}: a roster cannot change its "
                              f"uploader's own role; give your row the role {user.role}")  # fmt: skip
        if entry.email in kept and entry.role != INSTRUCTOR:
            raise GraderError(f"the roster makes {entry.email} a {entry.role}, but course.yaml names them an "
                              f"instructor: give their row the role {INSTRUCTOR}, or change course.yaml")  # fmt: skip
        if user is None:
            session.add(User(email=entry.email, name=entry.name, role=entry.role, rostered=True))
            added += 1
        else:
            user.name, user.role, user.rostered = entry.name, entry.role, True
    session.flush()
    return added


def roster_file(path: Path) -> list[RosterEntry]:
    try:
        return read_roster(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as e:
        raise GraderError(f"cannot read the roster '{path}': {e}") from None


def ensure_user(session: Session, email: str, name: str, role: str) -> User:
    """The user of ``email`` with ``role`` (course.yaml's instructors): made, or given the role."""
    user = session.scalar(select(User).where(User.email == email))
    if user is None:
        user = User(email=email, name=name, role=role, rostered=True)
        session.add(user)
        session.flush()
    else:
        user.role, user.rostered = role, True
    return user
