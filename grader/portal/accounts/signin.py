"""Signing in: one-time sign-in links, and a password's sign-in under the limits of failed
tries per address and client and per client (``SignInLimit``), counted in the database that
every server shares."""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass

from sqlalchemy import delete, func, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from ...errors import GraderError
from ..database.models import INSTRUCTOR, AuditEntry, Meta, SignInFailure, SignInToken, User, aware, now
from .passwords import check_password
from .tokens import token_digest

LINK_HOURS = 72  # a sign-in link works once, within this many hours


def new_signin_token(session: Session, user: User) -> str:
    """A token for a one-time sign-in link (only its digest is stored)."""
    token = secrets.token_urlsafe(32)
    session.add(
        SignInToken(digest=token_digest(token), user_id=user.id, expires_at=now() + dt.timedelta(hours=LINK_HOURS))
    )
    session.flush()
    return token


def link_problem(session: Session, token: str) -> str | None:
    """Why the link of ``token`` would not sign in (used already, expired, unknown), read
    without spending it; None when it would."""
    found = session.get(SignInToken, token_digest(token))
    if found is None:
        return "this is no sign-in link of this course (or it was cancelled, when a password was set)"
    if found.used_at is not None:
        return f"this sign-in link was used already, on {aware(found.used_at):%a %d %b %H:%M} UTC"
    if aware(found.expires_at) < now():
        return f"this sign-in link expired on {aware(found.expires_at):%a %d %b %H:%M} UTC"
    return None


PORTAL_URL_KEY = "portal_url"  # the address a server last started gave its links (grader portal link's, mail's)


@dataclass(frozen=True)
class NewLink:
    """A sign-in link made from the command line: whose, and until when it works."""

    email: str
    name: str
    role: str
    link: str
    expires_at: dt.datetime


def link_for(make: sessionmaker[Session], email: str, base: str | None) -> NewLink:
    """A new one-time sign-in link for the person of ``email`` (any role), at ``base`` (else
    the address the server last started gave its links), audited under the course's first
    instructor: GraderError for someone not on the roster or no address known."""
    address = email.strip().lower()
    with make.begin() as session:
        user = session.scalar(select(User).where(User.email == address))
        if user is None:
            raise GraderError(f"no one with the e-mail {address!r} in the portal: add them to the roster (or "
                              "course.yaml's instructors), run grader portal sync, then ask again")  # fmt: skip
        base = base or portal_url(session)
        if not base:
            raise GraderError("the portal's address is not known yet (no server has started on this database): "
                              "give --url https://HOST")  # fmt: skip
        token = new_signin_token(session, user)
        by = session.scalar(select(User).where(User.role == INSTRUCTOR).order_by(User.id)) or user
        session.add(AuditEntry(user_id=by.id, action="sign-in links", detail=f"grader portal link: {address}"))
        expires = now() + dt.timedelta(hours=LINK_HOURS)
        return NewLink(user.email, user.name, user.role, f"{base.rstrip('/')}/link/{token}", expires)


def portal_url(session: Session) -> str | None:
    """The portal's address for links made outside a request: what the server listening last
    recorded (its public address behind a proxy), never a request's Host header."""
    return session.scalar(select(Meta.value).where(Meta.key == PORTAL_URL_KEY))


def set_portal_url(session: Session, url: str) -> None:
    """Record the address a starting server gives its links."""
    session.merge(Meta(key=PORTAL_URL_KEY, value=url.rstrip("/")))


def use_signin_token(session: Session, token: str) -> User | None:
    """The user of a link not used yet and not expired, marking it used in one statement (two
    requests racing with one link: one wins); None otherwise."""
    digest = token_digest(token)
    found = session.get(SignInToken, digest)
    if found is None or aware(found.expires_at) < now():
        return None
    done = session.execute(
        update(SignInToken).where(SignInToken.digest == digest, SignInToken.used_at.is_(None)).values(used_at=now())
    )
    if getattr(done, "rowcount", 0) != 1:
        return None
    return session.get(User, found.user_id)


def forget_links(session: Session, user: User) -> int:
    """Cancel the user's sign-in links not used yet (their password changed): the count."""
    done = session.execute(delete(SignInToken).where(SignInToken.user_id == user.id, SignInToken.used_at.is_(None)))
    return int(getattr(done, "rowcount", 0) or 0)


class TooManyFailures(GraderError):
    """A sign-in refused unchecked: the address has used up its failures for now."""


@dataclass(frozen=True)
class SignInLimit:
    """At most ``failures`` failed sign-ins per e-mail address from one client (its address,
    as ``client_address`` finds it behind a trusted proxy) in ``seconds``, and at most
    ``client_failures`` from one client whatever the addresses. A guesser is slowed to a few
    tries an hour at an account, and one client spraying a common password over many
    accounts is stopped too; but a stranger's failures never lock the owner out of signing in
    from their own browser (another client). Counted in the database, so every server process
    of a course shares the limits (a guesser gains nothing by reaching another), and each try
    is counted before its password is checked, so tries racing through several processes get
    no more checks than the limits either."""

    failures: int = 5
    client_failures: int = 20
    seconds: float = 900.0

    def take(self, session: Session, email: str, client: str) -> int:
        """Count a try from ``client`` as a failure before it is checked (``forgive`` takes it
        back once it succeeds): the row's id; TooManyFailures when the address has none left
        from this client, or the client none left at all. The counts and the row are one step:
        SQLite's transactions take the write lock as they begin, PostgreSQL's take a lock on
        the client first (both limits count its tries)."""
        address, client = email.strip().lower(), client[:64]
        if session.get_bind().dialect.name == "postgresql":
            session.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:c, 0))"), {"c": "signin " + client})
        session.execute(delete(SignInFailure).where(SignInFailure.at <= self._since()))
        mine = select(func.count()).select_from(SignInFailure).where(SignInFailure.client == client)
        if (session.scalar(mine.where(SignInFailure.email == address)) or 0) >= self.failures:
            raise TooManyFailures(f"too many failed sign-ins for this e-mail from here: try again in {self._minutes} "
                                  "minutes, or use a sign-in link")  # fmt: skip
        if (session.scalar(mine) or 0) >= self.client_failures:
            raise TooManyFailures(f"too many failed sign-ins from your address: try again in {self._minutes} "
                                  "minutes, or use a sign-in link")  # fmt: skip
        row = SignInFailure(email=address, client=client, at=now())
        session.add(row)
        session.flush()
        return row.id

    def forgive(self, session: Session, taken: int) -> None:
        """A try that succeeded is no failure."""
        session.execute(delete(SignInFailure).where(SignInFailure.id == taken))

    @property
    def _minutes(self) -> int:
        return round(self.seconds / 60)

    def _since(self) -> dt.datetime:
        return now() - dt.timedelta(seconds=self.seconds)


def attempt_signin(make: sessionmaker[Session], limit: SignInLimit, email: str, password: str,
                   client: str) -> User | None:  # fmt: skip
    """The user with this e-mail and password, else None; TooManyFailures, checking nothing,
    when the address (from ``client``) or the client has used up its tries. The try is
    counted (committed) before the slow password check, and forgiven after it if it succeeds."""
    with make.begin() as session:
        taken = limit.take(session, email, client)
    with make() as session:
        user = check_password(session, email, password)
    if user is not None:
        with make.begin() as session:
            limit.forgive(session, taken)
    return user
