"""The tables of the portal's e-mail: the outbox (each message waiting, being sent under a
lease, or sent; with its tries and last error), the kinds of mail each person turned off, and
the requests for a new sign-in link (counted for their limits)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, now

WAITING, SENDING, SENT = "waiting", "sending", "sent"  # a message's state (failing: waiting with an error)
EXPIRED = "expired"  # a one-time link's message whose link ran out before it could be sent: never sent


class MailMessage(Base):
    """A message of the outbox: written in the transaction of what it tells (an upload, a grade,
    a release, a sign-in link made), sent by a sender thread that claims it under a lease."""

    __tablename__ = "mail_outbox"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True, index=True)
    to_address: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)  # a sign-in link's is blanked once sent: the link lives only in the mail
    state: Mapped[str] = mapped_column(String(16), index=True, default=WAITING)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    next_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)  # not tried before then
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    sent_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    lease_token: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)  # its link's


class MailOptOut(Base):
    """A kind of mail a person turned off on their preferences page."""

    __tablename__ = "mail_optouts"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)


class LinkRequest(Base):
    """A request for a new sign-in link by mail (from the sign-in page), known address or not."""

    __tablename__ = "mail_link_requests"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), index=True)
    client: Mapped[str] = mapped_column(String(64), index=True, default="")
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
