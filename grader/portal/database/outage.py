"""The database away for a while: PostgreSQL stopped or restarting, SQLite locked past its wait,
the disk under it full. ``outage`` tells such an error from a bug: the web layer answers it
with a 503 and Retry-After, the workers wait for the database and go on. Either way the
transaction under way was rolled back: nothing of it is kept."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

AWAY, BUSY, FULL = "away", "busy", "full"


@dataclass(frozen=True)
class Outage:
    """Why the database could not be used: ``kind`` (away, busy, full), the reason in a few
    words for people, the database's own words for the log, and when to try again."""

    kind: str
    reason: str
    cause: str
    retry_after: int  # seconds


_REASONS = {
    AWAY: ("the portal's database is not answering (it may be restarting)", 30),
    BUSY: ("the portal's database is busy", 5),
    FULL: ("the disk under the portal's database is full", 60),
}
_NOT_OUTAGES = ("no such table", "no such column", "no such function", "syntax error", "has no column")  # bugs
_FULL = ("database or disk is full", "no space left on device", "could not extend file", "disk full")
_BUSY = ("database is locked", "database table is locked", "database is busy")


def outage(error: BaseException) -> Outage | None:
    """The outage ``error`` says the database is in, or None for an error of another kind (a bug)."""
    if isinstance(error, PoolTimeout):
        return _made(BUSY, "every connection to the database is in use")
    if not isinstance(error, DBAPIError):
        return None
    cause = " ".join(str(error.orig or error).split())[:300]
    low = cause.lower()
    if any(words in low for words in _FULL):
        return _made(FULL, cause)
    if not isinstance(error, (OperationalError, InterfaceError)) and not error.connection_invalidated:
        return None
    if any(words in low for words in _NOT_OUTAGES):  # SQLite's OperationalErrors that are bugs, not outages
        return None
    return _made(BUSY if any(words in low for words in _BUSY) else AWAY, cause)


def _made(kind: str, cause: str) -> Outage:
    reason, retry = _REASONS[kind]
    return Outage(kind, reason, cause, retry)
