"""Accounts: the roster imported from a CSV (as LMS gradebooks export it), one-time sign-in
links, argon2 passwords, and roles (student, TA, instructor)."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from ...errors import GraderError
from ..database.models import INSTRUCTOR, ROLES, STUDENT, TA, ApiToken, SignInFailure, SignInToken, User, now

LINK_HOURS = 72  # a sign-in link works once, within this many hours
PASSWORD_MIN = 10
_hasher = PasswordHasher()

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
        address = cells[email].strip().lower()
        if "@" not in address:
            raise GraderError(f"{source}: line {n}: {cells[email]!r} is not an e-mail address: "
                              "give each person's address in the e-mail column")  # fmt: skip
        if name is not None:
            who = cells[name].strip()
        else:
            who = " ".join(cells[i].strip() for i in (first, last) if i is not None)
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
            session.add(User(email=entry.email, name=entry.name, role=entry.role))
            added += 1
        else:
            user.name, user.role = entry.name, entry.role
    session.flush()
    return added


def roster_file(path: Path) -> list[RosterEntry]:
    try:
        return read_roster(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as e:
        raise GraderError(f"cannot read the roster '{path}': {e}") from None


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_signin_token(session: Session, user: User) -> str:
    """A token for a one-time sign-in link (only its digest is stored)."""
    token = secrets.token_urlsafe(32)
    session.add(SignInToken(digest=_digest(token), user_id=user.id, expires_at=now() + dt.timedelta(hours=LINK_HOURS)))
    session.flush()
    return token


def use_signin_token(session: Session, token: str) -> User | None:
    """The user of a link not used yet and not expired, marking it used in one statement (two
    requests racing with one link: one wins); None otherwise."""
    digest = _digest(token)
    found = session.get(SignInToken, digest)
    if found is None or _aware(found.expires_at) < now():
        return None
    done = session.execute(
        update(SignInToken).where(SignInToken.digest == digest, SignInToken.used_at.is_(None)).values(used_at=now())
    )
    if getattr(done, "rowcount", 0) != 1:
        return None
    return session.get(User, found.user_id)


API_TOKEN_PREFIX = "grader_"  # an API token's start, so that one pasted in the wrong place is recognised
API_TOKEN_DAYS = 90  # how long an API token works


def new_api_token(session: Session, user: User, label: str = "") -> str:
    """A token for the portal's API (``Authorization: Bearer TOKEN``), shown once: only its
    digest is stored."""
    token = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiToken(digest=_digest(token), user_id=user.id, label=label[:60]))
    session.flush()
    return token


def api_token_id(token: ApiToken) -> str:
    """How pages name a token: its digest's start (the token itself is never kept)."""
    return token.digest[:16]


def api_tokens(session: Session, user: User) -> list[ApiToken]:
    """The user's API tokens, newest first."""
    return list(session.scalars(select(ApiToken).where(ApiToken.user_id == user.id)
                                .order_by(ApiToken.created_at.desc(), ApiToken.digest)))  # fmt: skip


def revoke_api_token(session: Session, user: User, token_id: str) -> bool:
    """Forget the user's token named ``token_id`` (``api_token_id``): a request with it is refused
    from now on. False when the user has no such token."""
    for token in api_tokens(session, user):
        if api_token_id(token) == token_id:
            session.delete(token)
            session.flush()
            return True
    return False


def api_token_expires(token: ApiToken) -> dt.datetime:
    """When a token stops working: API_TOKEN_DAYS after it was made (make a new one then)."""
    return _aware(token.created_at) + dt.timedelta(days=API_TOKEN_DAYS)


def api_user(session: Session, token: str) -> User | None:
    """The user of an API token (its use noted); None for a token nobody holds or one expired."""
    found = session.get(ApiToken, _digest(token))
    if found is None or api_token_expires(found) <= now():
        return None
    found.used_at = now()
    return session.get(User, found.user_id)


def _aware(when: dt.datetime) -> dt.datetime:
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)  # SQLite returns times without their zone


def set_password(user: User, password: str) -> None:
    if len(password) < PASSWORD_MIN:
        raise GraderError(f"a password needs at least {PASSWORD_MIN} characters")
    user.password_hash = _hasher.hash(password)


def check_password(session: Session, email: str, password: str) -> User | None:
    """The user with this e-mail and password, else None (also when no password was set)."""
    user = session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None or not user.password_hash:
        _hasher.hash(password)  # as long as a real check: the time does not tell who has an account
        return None
    try:
        _hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    return user


def ensure_user(session: Session, email: str, name: str, role: str) -> User:
    user = session.scalar(select(User).where(User.email == email))
    if user is None:
        user = User(email=email, name=name, role=role)
        session.add(user)
        session.flush()
    elif user.role != role:
        user.role = role
    return user


class TooManyFailures(GraderError):
    """A sign-in refused unchecked: the address has used up its failures for now."""


@dataclass(frozen=True)
class SignInLimit:
    """At most ``failures`` failed sign-ins per e-mail address in ``seconds``: a guesser is
    slowed to a few tries an hour. Counted in the database, so every server process of a
    course shares the limit (a guesser gains nothing by reaching another), and each try is
    counted before its password is checked, so tries racing through several processes get
    no more checks than the limit either."""

    failures: int = 5
    seconds: float = 900.0

    def take(self, session: Session, email: str) -> int:
        """Count a try as a failure before it is checked (``forgive`` takes it back once it
        succeeds): the row's id; TooManyFailures when the address has none left. The count
        and the row are one step: SQLite's transactions take the write lock as they begin,
        PostgreSQL's take a lock on the address first."""
        address = email.strip().lower()
        if session.get_bind().dialect.name == "postgresql":
            session.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:a, 0))"), {"a": address})
        session.execute(delete(SignInFailure).where(SignInFailure.at <= self._since()))
        recent = select(func.count()).select_from(SignInFailure).where(SignInFailure.email == address)
        if (session.scalar(recent) or 0) >= self.failures:
            raise TooManyFailures(f"too many failed sign-ins for this e-mail: try again in "
                                  f"{round(self.seconds / 60)} minutes, or use a sign-in link")  # fmt: skip
        row = SignInFailure(email=address, at=now())
        session.add(row)
        session.flush()
        return row.id

    def forgive(self, session: Session, taken: int) -> None:
        """A try that succeeded is no failure."""
        session.execute(delete(SignInFailure).where(SignInFailure.id == taken))

    def _since(self) -> dt.datetime:
        return now() - dt.timedelta(seconds=self.seconds)


def attempt_signin(make: sessionmaker[Session], limit: SignInLimit, email: str, password: str) -> User | None:
    """The user with this e-mail and password, else None; TooManyFailures, checking nothing,
    when the address has used up its tries. The try is counted (committed) before the slow
    password check, and forgiven after it if it succeeds."""
    with make.begin() as session:
        taken = limit.take(session, email)
    with make() as session:
        user = check_password(session, email, password)
    if user is not None:
        with make.begin() as session:
            limit.forgive(session, taken)
    return user
