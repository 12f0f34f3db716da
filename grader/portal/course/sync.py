"""Applying a course folder to its database (``grader portal sync``, and every start): the
roster and instructors imported, and the course's digest kept in the database, where every
running server of the course looks at most once a second and loads the course again when it
changed. The digest lives in the database rather than a server watching the folder because
servers may run on other machines than the one the folder was synced from, several may share
a database, and a course.yaml being edited is never picked up half-written or invalid: only
a folder ``load_course`` accepted is ever synced."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from ..accounts.roster import ensure_user, import_roster, roster_file
from ..database.db import connect, sessions, upgrade
from ..database.models import INSTRUCTOR, AuditEntry, Meta
from .course import COURSE_FILE, Course, load_course
from .teams import check_kept

DIGEST_KEY = "course_digest"
SUMMARY_KEY = "course_summary"  # what the last sync applied, as ``summary`` gives it: the next one's changes
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


def synced_since(session: Session, digest: str | None) -> str | None:
    """The digest of the course as synced, when it was synced since ``digest`` (None: not since)."""
    synced = synced_digest(session)
    return None if synced is None or synced == digest else synced


@dataclass(frozen=True)
class Synced:
    """What a sync did: the course's digest, whether it differs from the one synced before, the
    roster's people, and what changed (as the audit log says it; empty: nothing)."""

    digest: str
    changed: bool
    people: int
    added: int
    changes: str = ""


def _when(value: dt.datetime | None) -> str | None:
    return None if value is None else f"{value:%Y-%m-%d %H:%M} {value.tzname()}"


def summary(course: Course) -> dict[str, Any]:
    """What of the course a sync changes that grades depend on: per assignment its title,
    deadlines, late policy, counts, uploads a day, when private results show, and its plan's
    digest; the course's late days."""
    return {"late_days": course.late_days,
            "assignments": {name: {"title": a.title, "deadline": _when(a.deadline),
                                   "hard_deadline": _when(a.hard_deadline), "late_penalty": f"{a.late_penalty:.0%}",
                                   "late_days": a.late_days, "counts": a.counts, "per_day": a.per_day,
                                   "private_results": a.private_results, "plan": course.plan_digest(a)}
                            for name, a in course.assignments.items()}}  # fmt: skip


def changes(before: dict[str, Any] | None, after: dict[str, Any]) -> list[str]:
    """What changed from ``before`` to ``after`` (``summary``'s), one phrase each, like
    'othello: deadline 2026-03-02 23:59 UTC -> 2026-02-26 23:59 UTC'."""
    if before is None:
        return ["course.yaml, config.yaml or a plan changed (what, this database kept no record of before)"]
    out = []
    if before.get("late_days") != after["late_days"]:
        out.append(f"late_days {before.get('late_days')} -> {after['late_days']}")
    old, new = before.get("assignments", {}), after["assignments"]
    for name, a in new.items():
        was = old.get(name)
        if was is None:
            out.append(f"{name}: new assignment ({a['title']}, deadline {a['deadline'] or 'none'})")
            continue
        for key, value in a.items():
            if was.get(key) != value:
                out.append(f"{name}: plan changed (reruns needed)" if key == "plan"
                           else f"{name}: {key} {was.get(key)} -> {value}")  # fmt: skip
    out += [f"{name}: assignment removed" for name in old if name not in new]
    return out


def apply(course: Course, make: sessionmaker[Session], by: str = "grader portal sync") -> Synced:
    """Import the roster (people added, names and roles updated) and the instructors, and keep
    the course's digest, in one transaction; a bad roster raises before anything is written.
    What changed since the last one (a moved deadline, a new assignment, people added) goes
    in the audit log, under the course's first instructor, saying it was ``by`` (the command)."""
    people = roster_file(course.roster) if course.roster is not None else []
    digest = course_digest(course)
    now = summary(course)
    with make.begin() as session:
        check_kept(session, course)  # a course.yaml dropping teams formed already: refused, nothing written
        added = import_roster(session, people)
        first = None
        for email in course.instructors:
            user = ensure_user(session, email.lower(), email.split("@")[0], INSTRUCTOR)
            first = first or user
        found = session.get(Meta, DIGEST_KEY)
        changed = found is None or found.value != digest
        kept = session.get(Meta, SUMMARY_KEY)
        said = [] if found is None else (  # the first sync of a database: nothing changed
            (changes(json.loads(kept.value) if kept else None, now) if changed else [])
            + ([f"roster: {added} new {'person' if added == 1 else 'people'}"] if added else []))  # fmt: skip
        if said and first is not None:
            session.add(AuditEntry(user_id=first.id, action="sync", detail=f"{by}: {'; '.join(said)}"))
        session.merge(Meta(key=SUMMARY_KEY, value=json.dumps(now, sort_keys=True)))
        if found is None:
            session.add(Meta(key=DIGEST_KEY, value=digest))
        else:
            found.value = digest
        if course.source:
            session.merge(Meta(key=LAST_GOOD_KEY, value=course.source))
    return Synced(digest, changed, len(people), added, "; ".join(said))


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
