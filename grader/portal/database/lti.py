"""The tables of the LTI 1.3 tool: its own signing keys, the logins begun (state and nonce,
each spent once), who each platform's users are here, which assignment each resource link
opens, and every score sent back to a platform's gradebook."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, now

PENDING, SENT, FAILED = "pending", "sent", "failed"  # a score's state


class LtiKey(Base):
    """The tool's RSA key (PEM): the newest signs; the retired ones stay in the JWKS a while."""

    __tablename__ = "lti_keys"
    kid: Mapped[str] = mapped_column(String(64), primary_key=True)
    private_pem: Mapped[str] = mapped_column(Text)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    retired_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class LtiLogin(Base):
    """An OIDC login the tool began: the launch must bring back its state and nonce, once."""

    __tablename__ = "lti_logins"
    state: Mapped[str] = mapped_column(String(64), primary_key=True)
    nonce: Mapped[str] = mapped_column(String(64), unique=True)
    issuer: Mapped[str] = mapped_column(String(300))
    client_id: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class LtiIdentity(Base):
    """A platform's user (its ``sub``) as a user of the portal."""

    __tablename__ = "lti_identities"
    __table_args__ = (UniqueConstraint("issuer", "sub"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issuer: Mapped[str] = mapped_column(String(300))
    sub: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)


class LtiLink(Base):
    """A resource link of a platform's course: the assignment it opens and its gradebook column
    (the AGS line item), as the last launch through it said."""

    __tablename__ = "lti_links"
    __table_args__ = (UniqueConstraint("issuer", "resource_link_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issuer: Mapped[str] = mapped_column(String(300))
    client_id: Mapped[str] = mapped_column(String(200))
    resource_link_id: Mapped[str] = mapped_column(String(255))
    assignment: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    lineitem: Mapped[str | None] = mapped_column(Text, nullable=True)
    lineitems: Mapped[str | None] = mapped_column(Text, nullable=True)  # the container, when no line item was given


class LtiScore(Base):
    """A score to send, or sent, to a line item: what was sent, each try counted, the last error kept."""

    __tablename__ = "lti_scores"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    assignment: Mapped[str] = mapped_column(String(40))
    issuer: Mapped[str] = mapped_column(String(300))
    client_id: Mapped[str] = mapped_column(String(200))
    lineitem: Mapped[str] = mapped_column(Text)  # the container's URL while ``container`` is set
    container: Mapped[str | None] = mapped_column(Text, nullable=True)  # its line item to find or make there first
    user_sub: Mapped[str] = mapped_column(String(255))
    score_given: Mapped[float | None] = mapped_column(nullable=True)  # None: graded, private results not out yet
    score_maximum: Mapped[int] = mapped_column(Integer)
    comment: Mapped[str | None] = mapped_column(Text, nullable=True)  # how the late policy made the score
    reason: Mapped[str] = mapped_column(String(40))  # graded, release, policy, again (staff)
    status: Mapped[str] = mapped_column(String(16), default=PENDING, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    next_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    sent_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class LtiLineItem(Base):
    """The line item of an assignment in a platform's line items container, found or made by
    the tool (``url`` None: a sender claimed it at ``claimed_at`` and is finding or making it).
    ``digest`` (of the issuer, client id, container and assignment) is unique: one claim wins."""

    __tablename__ = "lti_lineitems"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    issuer: Mapped[str] = mapped_column(String(300))
    client_id: Mapped[str] = mapped_column(String(200))
    container: Mapped[str] = mapped_column(Text)
    assignment: Mapped[str] = mapped_column(String(40))
    url: Mapped[str | None] = mapped_column(Text, nullable=True)
    claimed_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)


ACTIVE, DROPPED = "active", "dropped"  # a roster member's state


class LtiContext(Base):
    """A platform's course (its LTI context) whose roster the tool may read (Names and Role
    Provisioning Services): the memberships URL its launches gave, the differences URL the
    last read gave for the next, and how the last read went."""

    __tablename__ = "lti_contexts"
    __table_args__ = (UniqueConstraint("issuer", "client_id", "context_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issuer: Mapped[str] = mapped_column(String(300))
    client_id: Mapped[str] = mapped_column(String(200))
    context_id: Mapped[str] = mapped_column(String(255))
    title: Mapped[str | None] = mapped_column(String(300), nullable=True)
    memberships_url: Mapped[str] = mapped_column(Text)
    differences_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    synced_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)


class LtiMember(Base):
    """A member of a platform's course as its roster last gave them: their portal account (None:
    staff on the platform whom the portal's roster does not name), the role their platform
    roles map to, and whether they are active or dropped (their account and work kept)."""

    __tablename__ = "lti_members"
    __table_args__ = (UniqueConstraint("context", "sub"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    context: Mapped[int] = mapped_column(ForeignKey("lti_contexts.id"), index=True)
    sub: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True, index=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default=ACTIVE)
    changed_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)


class LtiRegistration(Base):
    """A platform registered by LTI Dynamic Registration: what it gave back, who let it register
    and when; a revoked one takes no launch."""

    __tablename__ = "lti_registrations"
    __table_args__ = (UniqueConstraint("issuer", "client_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issuer: Mapped[str] = mapped_column(String(300))
    client_id: Mapped[str] = mapped_column(String(200))
    deployment_id: Mapped[str] = mapped_column(String(200))
    auth_login_url: Mapped[str] = mapped_column(Text)
    token_url: Mapped[str] = mapped_column(Text)
    jwks_url: Mapped[str] = mapped_column(Text)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class LtiRegistrationLink(Base):
    """A one-time registration URL an instructor made: only its token's SHA-256 is kept."""

    __tablename__ = "lti_registration_links"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
