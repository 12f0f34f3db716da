"""Applying a course folder to its database (``grader portal sync``, and every start): the
roster and instructors imported, and the course's digest kept in the database, where every
running server of the course looks at most once a second and loads the course again when it
changed. The digest lives in the database rather than a server watching the folder because
servers may run on other machines than the one the folder was synced from, several may share
a database, and a course.yaml being edited is never picked up half-written or invalid: only
a folder ``load_course`` accepted is ever synced."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from ..accounts.roster import ensure_user, import_roster, roster_file
from ..database.db import connect, sessions, upgrade
from ..database.models import INSTRUCTOR, Meta
from .course import COURSE_FILE, Course, load_course

DIGEST_KEY = "course_digest"
LAST_GOOD_KEY = "course_yaml"  # the text of the course.yaml last applied: served while the folder's does not load


def course_digest(course: Course) -> str:
    """What the portal takes from the folder, as a SHA-256: course.yaml, config.yaml, the roster,
    and each assignment's plan as graded (``Course.plan_digest``)."""
    h = hashlib.sha256()
    for path in (course.folder / COURSE_FILE, course.folder / "config.yaml", course.roster):
        if path is not None and path.is_file():
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for name, a in course.assignments.items():
        h.update(f"{name}:{course.plan_digest(a)}\0".encode())
    return h.hexdigest()


def synced_digest(session: Session) -> str | None:
    """The digest of the course as last synced to this database (None: never)."""
    return session.scalar(select(Meta.value).where(Meta.key == DIGEST_KEY))


@dataclass(frozen=True)
class Synced:
    """What a sync did: the course's digest, whether it differs from the one synced before, the roster's people."""

    digest: str
    changed: bool
    people: int
    added: int


def apply(course: Course, make: sessionmaker[Session]) -> Synced:
    """Import the roster (people added, names and roles updated) and the instructors, and keep
    the course's digest, in one transaction; a bad roster raises before anything is written."""
    people = roster_file(course.roster) if course.roster is not None else []
    digest = course_digest(course)
    with make.begin() as session:
        added = import_roster(session, people)
        for email in course.instructors:
            ensure_user(session, email.lower(), email.split("@")[0], INSTRUCTOR)
        found = session.get(Meta, DIGEST_KEY)
        changed = found is None or found.value != digest
        if found is None:
            session.add(Meta(key=DIGEST_KEY, value=digest))
        else:
            found.value = digest
        if course.source:
            session.merge(Meta(key=LAST_GOOD_KEY, value=course.source))
    return Synced(digest, changed, len(people), added)


def last_good(session: Session) -> str | None:
    """The text of the course.yaml last applied to this database (None: none kept)."""
    return session.scalar(select(Meta.value).where(Meta.key == LAST_GOOD_KEY))


def sync(folder: str | Path, database: str) -> Synced:
    """Load the course in ``folder`` (ConfigError, nothing changed, for a bad value) and apply it
    to the database at ``database``: its running servers see it within a second."""
    course = load_course(folder)
    engine = connect(database)
    try:
        upgrade(engine)
        return apply(course, sessions(engine))
    finally:
        engine.dispose()
