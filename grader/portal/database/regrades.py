"""The table of regrade requests: a student's request on one of their graded submissions (its
reason and its submission's hand grading then), and staff's answer (a reply, and what was
done: a rerun, a change of hand grading)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column, validates

from ...names import visible
from .models import Base, now

OPEN, ANSWERED = "open", "answered"  # a request's state


class RegradeRequest(Base):
    """A regrade request: asked by the submission's student, answered once by staff. ``done``
    lists what the answer did besides its reply (``rerun``; one more word per kind of answer,
    as ``jobs.regrades.ACTIONS`` names them), comma-separated."""

    __tablename__ = "regrade_requests"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)  # who asked: the submission's student
    assignment: Mapped[str] = mapped_column(String(40), index=True)
    reason: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16), index=True, default=OPEN)
    asked_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    answered_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    answered_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    reply: Mapped[str | None] = mapped_column(Text, nullable=True)
    done: Mapped[str] = mapped_column(String(200), default="")
    # the submission's hand grading when asked (``course.handchange.HandState`` as JSON); None: asked before it was kept
    hand_asked: Mapped[str | None] = mapped_column(Text, nullable=True)

    @validates("reason", "reply")
    def _visible(self, key: str, value: str | None) -> str | None:
        return None if value is None else visible(value.replace("\r\n", "\n"), "\n")
