"""Sessions on the server: a signed-in browser is a row (``WebSession``) whose random id the
cookie carries, only its SHA-256 kept. A session ends when its row goes: signed out (every
copy of the cookie with it), its user's password changed (every other one), ended by its user
or an instructor, idle longer than the course's ``session_idle_hours``, or SESSION_DAYS old.
API tokens are no sessions: none of this touches them (a password set, changed or reset
revokes them, ``tokens.revoke_api_tokens``), nor a grading under way."""

from __future__ import annotations

import datetime as dt
import secrets

from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from ..database.models import User, WebSession, aware, now
from ..database.outage import outage
from .tokens import token_digest

SESSION_DAYS = 14  # a session ends this long after its sign-in, however busy


SEEN_SECONDS = 60  # a session's last-seen time is written at most this often (not at every request)


def new_session(session: Session, user: User, client: str, agent: str, idle_hours: float) -> str:
    """A session for ``user``, signed in from ``client`` with the browser ``agent``: its id
    for the cookie (only the digest is stored). The sessions ended by time, anyone's, are
    removed meanwhile."""
    ended_by_time(session, idle_hours)
    token = secrets.token_urlsafe(32)
    when = now()
    session.add(WebSession(digest=token_digest(token), user_id=user.id, created_at=when, last_seen_at=when,
                           client=client[:64], last_client=client[:64], user_agent=agent[:200]))  # fmt: skip
    session.flush()
    return token


def ended_by_time(session: Session, idle_hours: float) -> int:
    """Remove every session idle ``idle_hours`` or older than SESSION_DAYS: the count."""
    idle, old = _cutoffs(idle_hours)
    done = session.execute(delete(WebSession).where(or_(WebSession.last_seen_at <= idle, WebSession.created_at <= old)))
    return int(getattr(done, "rowcount", 0) or 0)


def _cutoffs(idle_hours: float) -> tuple[dt.datetime, dt.datetime]:
    when = now()
    return when - dt.timedelta(hours=idle_hours), when - dt.timedelta(days=SESSION_DAYS)


def session_user(make: sessionmaker[Session], read: sessionmaker[Session], token: str, client: str,
                 idle_hours: float) -> User | None:  # fmt: skip
    """The user of the session ``token`` names, read through ``read``; None for a session that
    ended (a session found ended by time is removed). Its last-seen time (and address) is
    written through ``make`` once SEEN_SECONDS have passed since the last write."""
    digest = token_digest(token)
    with read() as session:
        found = session.execute(select(WebSession, User).join(User, User.id == WebSession.user_id)
                                .where(WebSession.digest == digest)).first()  # fmt: skip
    if found is None:
        return None
    row, user = found
    idle, old = _cutoffs(idle_hours)
    seen = aware(row.last_seen_at)
    if seen <= idle or aware(row.created_at) <= old:
        with make.begin() as session:
            session.execute(delete(WebSession).where(WebSession.digest == digest))
        return None
    if (now() - seen).total_seconds() >= SEEN_SECONDS:
        try:
            with make.begin() as session:
                session.execute(update(WebSession).where(WebSession.digest == digest)
                                .values(last_seen_at=now(), last_client=client[:64]))  # fmt: skip
        except DBAPIError as e:  # a full disk or a locked database: the page is still served, seen next time
            if outage(e) is None:
                raise
    return user


def end_session(session: Session, token: str) -> None:
    """End the session ``token`` names (signing out): every copy of its cookie with it."""
    session.execute(delete(WebSession).where(WebSession.digest == token_digest(token)))


def end_sessions(session: Session, user: User, keep: str | None = None) -> int:
    """End every session of ``user`` but the one ``keep`` names (its token), if given: the count ended."""
    query = delete(WebSession).where(WebSession.user_id == user.id)
    if keep is not None:
        query = query.where(WebSession.digest != token_digest(keep))
    return int(getattr(session.execute(query), "rowcount", 0) or 0)


def user_sessions(session: Session, user: User, idle_hours: float) -> list[WebSession]:
    """The user's sessions still going, the latest seen first."""
    idle, old = _cutoffs(idle_hours)
    return list(session.scalars(select(WebSession).where(WebSession.user_id == user.id,
                                                         WebSession.last_seen_at > idle, WebSession.created_at > old)
                                .order_by(WebSession.last_seen_at.desc(), WebSession.digest)))  # fmt: skip


def session_id(row: WebSession) -> str:
    """How pages name a session: its digest's start (the id in the cookie is never shown)."""
    return row.digest[:16]


def is_session(row: WebSession, token: str | None) -> bool:
    """Whether ``row`` is the session ``token`` names."""
    return token is not None and row.digest == token_digest(token)


def end_session_named(session: Session, user: User, name: str) -> WebSession | None:
    """End the user's session that ``session_id`` names ``name``: its row, None when they have none such."""
    for row in session.scalars(select(WebSession).where(WebSession.user_id == user.id)):
        if session_id(row) == name:
            session.delete(row)
            session.flush()
            return row
    return None
