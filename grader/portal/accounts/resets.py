"""Password resets by mail: a one-time link (its token's digest kept, as a sign-in link's is),
good for ``RESET_MINUTES`` and once, that sets a new password without the current one."""

from __future__ import annotations

import datetime as dt
import secrets

from sqlalchemy import delete, update
from sqlalchemy.orm import Session

from ..database.models import User, aware, now
from ..database.resets import PasswordReset
from .tokens import token_digest

RESET_MINUTES = 30  # a reset link works once, within this many minutes


def new_reset_token(session: Session, user: User) -> tuple[str, dt.datetime]:
    """A token for a one-time reset link of ``user`` (only its digest is stored), and its expiry."""
    token, expires = secrets.token_urlsafe(32), now() + dt.timedelta(minutes=RESET_MINUTES)
    session.add(PasswordReset(digest=token_digest(token), user_id=user.id, created_at=now(), expires_at=expires))
    session.flush()
    return token, expires


def reset_problem(session: Session, token: str) -> str | None:
    """Why the reset link of ``token`` would not set a password (unknown, used, expired), read
    without spending it; None when it would."""
    found = session.get(PasswordReset, token_digest(token))
    if found is None:
        return "this is no password reset link of this course (or a newer password cancelled it)"
    if found.used_at is not None:
        return f"this reset link was used already, on {aware(found.used_at):%a %d %b %H:%M} UTC"
    if aware(found.expires_at) < now():
        return f"this reset link expired on {aware(found.expires_at):%a %d %b %H:%M} UTC"
    return None


def use_reset_token(session: Session, token: str) -> User | None:
    """The user of a reset link not used yet and not expired, marking it used in one statement
    (two requests racing with one link: one wins); None otherwise. In the caller's transaction:
    a password refused rolls it back, and the link still works."""
    digest = token_digest(token)
    found = session.get(PasswordReset, digest)
    if found is None or aware(found.expires_at) < now():
        return None
    done = session.execute(update(PasswordReset)
                           .where(PasswordReset.digest == digest, PasswordReset.used_at.is_(None))
                           .values(used_at=now()))  # fmt: skip
    if getattr(done, "rowcount", 0) != 1:
        return None
    return session.get(User, found.user_id)


def forget_resets(session: Session, user: User) -> int:
    """Cancel the user's reset links not used yet (their password was set): the count."""
    done = session.execute(delete(PasswordReset).where(PasswordReset.user_id == user.id,
                                                       PasswordReset.used_at.is_(None)))  # fmt: skip
    return int(getattr(done, "rowcount", 0) or 0)
