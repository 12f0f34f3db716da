"""API tokens (``Authorization: Bearer TOKEN``, as ``grader arena`` sends it): made, listed,
revoked (one by its user; all of a user's when their password is set, changed or reset),
expiring; only a token's SHA-256 is kept, as a sign-in link's is."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..database.models import ApiToken, User, aware, now


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


API_TOKEN_PREFIX = "grader_"  # an API token's start, so that one pasted in the wrong place is recognised


API_TOKEN_DAYS = 90  # how long an API token works


def new_api_token(session: Session, user: User, label: str = "") -> str:
    """A token for the portal's API (``Authorization: Bearer TOKEN``), shown once: only its
    digest is stored."""
    token = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiToken(digest=token_digest(token), user_id=user.id, label=label[:60]))
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


def revoke_api_tokens(session: Session, user: User) -> int:
    """Forget every API token of ``user`` (their password was set, changed or reset: whoever
    held the account may have made one): the count revoked."""
    done = session.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
    return int(getattr(done, "rowcount", 0) or 0)


def api_token_expires(token: ApiToken) -> dt.datetime:
    """When a token stops working: API_TOKEN_DAYS after it was made (make a new one then)."""
    return aware(token.created_at) + dt.timedelta(days=API_TOKEN_DAYS)


def api_user(session: Session, token: str) -> User | None:
    """The user of an API token (its use noted); None for a token nobody holds or one expired."""
    found = session.get(ApiToken, token_digest(token))
    if found is None or api_token_expires(found) <= now():
        return None
    found.used_at = now()
    return session.get(User, found.user_id)
