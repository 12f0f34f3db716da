"""The outbox: a message is enqueued in the transaction of what it tells, so it is sent if and
only if that happened (an upload taken, a grade written, a release, a link made); a sender
claims it under a lease (one statement: two senders never hold one message), then marks it
sent, or keeps its error and tries again after a back-off that doubles up to an hour."""

from __future__ import annotations

import datetime as dt
import logging
import secrets
from dataclasses import dataclass

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.orm import Session

from ..accounts.signin import portal_url
from ..course.course import Course
from ..course.mail import KINDS, LINKS, plain_address
from ..database.mail import EXPIRED, SENDING, SENT, WAITING, LinkRequest, MailMessage, MailOptOut
from ..database.models import User, now

log = logging.getLogger("grader.portal")
LEASE_SECONDS = 300.0  # a message being sent is no other sender's for this long (a send times out well before)
MAX_BACKOFF = 3600.0  # seconds: a message failing is tried at least once an hour
SENT_LINK = "(a one-time link, to sign in or to set a password: it was sent, and is kept only in the mail)"
EXPIRED_LINK = "(a one-time link that expired before it could be sent: never sent)"


@dataclass(frozen=True)
class Claimed:
    """A message a sender holds under its lease ``token``: what it sends."""

    id: int
    token: str
    kind: str
    to: str
    name: str
    subject: str
    body: str
    attempts: int


def turned_off(session: Session, user_id: int) -> set[str]:
    """The kinds of mail a person turned off."""
    return set(session.scalars(select(MailOptOut.kind).where(MailOptOut.user_id == user_id)))


def set_turned_off(session: Session, user_id: int, off: set[str]) -> None:
    """A person's kinds turned off, as their preferences page sends them (unknown kinds left out)."""
    session.execute(delete(MailOptOut).where(MailOptOut.user_id == user_id))
    session.add_all(MailOptOut(user_id=user_id, kind=k) for k in sorted(off) if k in KINDS)


def wanted(session: Session, course: Course, user: User, kind: str) -> bool:
    """Whether ``user`` gets mails of ``kind``: the course sends them and the person did not turn them off."""
    return course.mail is not None and course.mail.sends(kind) and kind not in turned_off(session, user.id)


SUBJECT_CHARS = 200  # the outbox's subject column


def enqueue(session: Session, course: Course, user: User, kind: str, subject: str, body: str,
            expires_at: dt.datetime | None = None) -> MailMessage | None:  # fmt: skip
    """A message to ``user`` written to the outbox in ``session``'s transaction; None when the
    course sends no mail of ``kind``, the person turned it off, or their address or name would
    carry a line break into the headers (refused, logged: never sent). A message carrying a
    one-time link gives the link's ``expires_at``: not sent once it passed (``claim``)."""
    if not wanted(session, course, user, kind):
        return None
    if not plain_address(user.email) or any(c in user.name + subject for c in "\r\n"):
        log.warning("mail to user %s refused: a line break or no plain address in the recipient", user.id)
        return None
    if len(subject) > SUBJECT_CHARS:  # a course's or an assignment's long title
        subject = subject[: SUBJECT_CHARS - 1] + "…"
    message = MailMessage(kind=kind, user_id=user.id, to_address=user.email, subject=subject, body=body,
                          state=WAITING, created_at=now(), next_at=now(), attempts=0, expires_at=expires_at)  # fmt: skip
    session.add(message)
    return message


def claim(session: Session, seconds: float = LEASE_SECONDS) -> Claimed | None:
    """The oldest message due (waiting past its back-off, or sending under a lease that expired:
    its sender died), now held for ``seconds``; None when none is due. A message whose link
    expired while it waited is marked expired first, its body blanked: never sent."""
    moment, token = now(), secrets.token_hex(16)
    session.execute(update(MailMessage)
                    .where(MailMessage.state.in_((WAITING, SENDING)), MailMessage.expires_at < moment,
                           or_(MailMessage.state == WAITING, MailMessage.lease_until < moment))
                    .values(state=EXPIRED, body=EXPIRED_LINK, lease_token=None, lease_until=None))  # fmt: skip
    due = or_(and_(MailMessage.state == WAITING, MailMessage.next_at <= moment),
              and_(MailMessage.state == SENDING, MailMessage.lease_until < moment))  # fmt: skip
    oldest = (select(MailMessage.id).where(due).order_by(MailMessage.next_at, MailMessage.id).limit(1)
              .with_for_update(skip_locked=True).scalar_subquery())  # fmt: skip
    found = session.execute(
        update(MailMessage).where(MailMessage.id == oldest, due)
        .values(state=SENDING, lease_token=token, lease_until=moment + dt.timedelta(seconds=seconds),
                attempts=MailMessage.attempts + 1)
        .returning(MailMessage.id, MailMessage.kind, MailMessage.to_address, MailMessage.user_id,
                   MailMessage.subject, MailMessage.body, MailMessage.attempts)
    ).first()  # fmt: skip
    if found is None:
        return None
    name = session.scalar(select(User.name).where(User.id == found.user_id)) if found.user_id else None
    return Claimed(found.id, token, found.kind, found.to_address, name or "", found.subject, found.body,
                   found.attempts)  # fmt: skip


def sent(session: Session, held: Claimed) -> bool:
    """The message sent: marked so (a one-time link's body blanked) if the lease still holds."""
    values: dict = {"state": SENT, "sent_at": now(), "lease_token": None, "lease_until": None, "last_error": None}
    if held.kind in LINKS:
        values["body"] = SENT_LINK
    done = session.execute(update(MailMessage).where(MailMessage.id == held.id, MailMessage.lease_token == held.token)
                           .values(**values))  # fmt: skip
    return getattr(done, "rowcount", 0) == 1


def failed(session: Session, held: Claimed, error: str, base_seconds: float) -> None:
    """The message not sent: its error kept, tried again after ``base_seconds`` doubled for each
    earlier try (at most an hour)."""
    wait = min(base_seconds * 2 ** max(held.attempts - 1, 0), MAX_BACKOFF)
    session.execute(update(MailMessage).where(MailMessage.id == held.id, MailMessage.lease_token == held.token)
                    .values(state=WAITING, last_error=error[:1000], lease_token=None, lease_until=None,
                            next_at=now() + dt.timedelta(seconds=wait)))  # fmt: skip


def prune(session: Session, days: int) -> int:
    """Delete the sent messages sent more than ``days`` days ago, and the expired ones as old: the count."""
    since = now() - dt.timedelta(days=days)
    done = session.execute(delete(MailMessage).where(or_(and_(MailMessage.state == SENT, MailMessage.sent_at < since),
                                                         and_(MailMessage.state == EXPIRED,
                                                              MailMessage.created_at < since))))  # fmt: skip
    return int(getattr(done, "rowcount", 0) or 0)


def base_url(session: Session) -> str:
    """The portal's address for links in mail (the one a starting server recorded)."""
    return portal_url(session) or "http://localhost:8000"


class TooManyRequests(Exception):
    """Too many sign-in links or password resets asked for, for this address or from this client, lately."""


LINK_REQUESTS = 3  # per address an hour (whoever asks)
CLIENT_LINK_REQUESTS = 10  # per client an hour (whatever the addresses)
REQUEST_SECONDS = 3600.0


def count_link_request(session: Session, email: str, client: str, what: str = "sign-in links") -> None:
    """Count a request for a sign-in link (or a password reset: ``what``) by mail, known address
    or not, so that the limit says nothing of which addresses exist; the two share one count.
    TooManyRequests past the limits."""
    since = now() - dt.timedelta(seconds=REQUEST_SECONDS)
    session.execute(delete(LinkRequest).where(LinkRequest.at <= since))
    email, client = email[:320], client[:64]
    asked = select(func.count()).select_from(LinkRequest)
    if (session.scalar(asked.where(LinkRequest.email == email)) or 0) >= LINK_REQUESTS:
        raise TooManyRequests(f"too many {what} asked for this address lately: try again in an hour")
    if (session.scalar(asked.where(LinkRequest.client == client)) or 0) >= CLIENT_LINK_REQUESTS:
        raise TooManyRequests(f"too many {what} asked for from your address lately: try again in an hour")
    session.add(LinkRequest(email=email, client=client, at=now()))


def outbox_state(session: Session, limit: int = 200) -> dict:
    """What staff see: the counts sent, waiting and failing, and the newest messages (never
    their bodies: a sign-in link is its student's alone)."""
    rows = session.scalars(select(MailMessage).order_by(MailMessage.id.desc()).limit(limit)).all()
    counts = dict(session.execute(select(MailMessage.state, func.count()).group_by(MailMessage.state)).all())
    failing = session.scalar(select(func.count()).select_from(MailMessage)
                             .where(MailMessage.state != SENT, MailMessage.last_error.is_not(None))) or 0  # fmt: skip
    return {"sent": counts.get(SENT, 0), "waiting": counts.get(WAITING, 0) + counts.get(SENDING, 0) - failing,
            "failing": failing, "expired": counts.get(EXPIRED, 0),
            "messages": [{"id": m.id, "kind": m.kind, "to": m.to_address, "subject": m.subject,
                          "state": m.state if m.state in (SENT, EXPIRED) or m.last_error is None else "failing",
                          "attempts": m.attempts, "error": m.last_error,
                          "created_at": m.created_at.isoformat(),
                          "sent_at": m.sent_at.isoformat() if m.sent_at else None,
                          "next_at": m.next_at.isoformat() if m.state not in (SENT, EXPIRED) else None}
                         for m in rows]}  # fmt: skip
