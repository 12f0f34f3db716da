"""Passwords: argon2 hashes, set and checked (a check as slow for an unknown address)."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from ...errors import GraderError
from ..database.models import User

PASSWORD_MIN = 10


_hasher = PasswordHasher()


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
