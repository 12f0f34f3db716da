"""The portal's tables (SQLAlchemy 2): people, their sessions, sign-in links, API tokens, submissions with
their results, uploads counted per day, and the queue of grading jobs. migrations/ creates them (Alembic)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, DateTime, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint, false
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, validates

from ...names import visible

STUDENT, TA, INSTRUCTOR = "student", "ta", "instructor"
ROLES = (STUDENT, TA, INSTRUCTOR)
QUEUED, RUNNING, GRADED, FAILED = "queued", "running", "graded", "failed"  # a submission's status


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def aware(when: dt.datetime) -> dt.datetime:
    """A time read back from the database, with its zone (UTC): SQLite returns times without it."""
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


class Base(DeclarativeBase):
    pass


class Meta(Base):
    """The portal's own values: the key that signs session cookies."""

    __tablename__ = "portal_meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    # the roster or course.yaml gave the name and role (an LTI launch never rewrites them; else a launch made the user)
    rostered: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    @property
    def staff(self) -> bool:
        return self.role in (TA, INSTRUCTOR)

    @validates("name")
    def _visible(self, key: str, value: str) -> str:
        return visible(value)


class SignInToken(Base):
    """A one-time sign-in link: only the token's SHA-256 is kept."""

    __tablename__ = "signin_tokens"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class WebSession(Base):
    """A browser signed in: its cookie holds a random id, of which only the SHA-256 is kept, so
    a session ends for every copy of the cookie once its row is gone (signing out, a password
    changed, idle too long, 14 days old, ended by its user or an instructor)."""

    __tablename__ = "web_sessions"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    last_seen_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    client: Mapped[str] = mapped_column(String(64), default="")  # the address it signed in from
    last_client: Mapped[str] = mapped_column(String(64), default="")  # the address it was last seen from
    user_agent: Mapped[str] = mapped_column(String(200), default="")  # the browser's, at sign-in


class Submission(Base):
    """An upload (its bytes kept here: no file name is ever a path) and, once graded, what the
    student may see (``student_text``, public symbols) beside the full record for staff."""

    __tablename__ = "submissions"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # random: ids are not guessable
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    assignment: Mapped[str] = mapped_column(String(40), index=True)
    received_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    late: Mapped[int] = mapped_column(Integer, default=0)
    filename: Mapped[str] = mapped_column(String(120))  # as uploaded, shown only
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    status: Mapped[str] = mapped_column(String(16), default=QUEUED)
    graded_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True, index=True)
    total: Mapped[float | None] = mapped_column(nullable=True)
    max_total: Mapped[int | None] = mapped_column(Integer, nullable=True)
    symbols: Mapped[str | None] = mapped_column(Text, nullable=True)  # every test's, for staff
    public_symbols: Mapped[str | None] = mapped_column(Text, nullable=True)
    public_total: Mapped[float | None] = mapped_column(nullable=True)
    student_text: Mapped[str | None] = mapped_column(Text, nullable=True)  # public tests only
    full_text: Mapped[str | None] = mapped_column(Text, nullable=True)  # for staff
    records: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON: each test's record (TestResult.record)
    stopped: Mapped[str | None] = mapped_column(Text, nullable=True)  # why the run stopped before its last test
    plan_digest: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the plan it was graded on
    # the result a rerun replaced, and why it was rerun (the plan changed, or the instructor asked)
    previous_total: Mapped[float | None] = mapped_column(nullable=True)
    previous_max_total: Mapped[int | None] = mapped_column(Integer, nullable=True)
    previous_symbols: Mapped[str | None] = mapped_column(Text, nullable=True)
    previous_public_symbols: Mapped[str | None] = mapped_column(Text, nullable=True)
    previous_public_total: Mapped[float | None] = mapped_column(nullable=True)
    change_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)  # a grader error: not the student's fault
    graded_by: Mapped[str | None] = mapped_column(String(100), nullable=True)  # the worker that held its lease
    gradings: Mapped[int] = mapped_column(Integer, default=0)  # results written: 1, and 1 more for each rerun

    @validates("filename")
    def _visible(self, key: str, value: str) -> str:
        return visible(value)


class DailyCount(Base):
    """Uploads of a student to an assignment on a day (UTC): raised only below the limit, in one statement."""

    __tablename__ = "daily_counts"
    __table_args__ = (UniqueConstraint("user_id", "assignment", "day"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    assignment: Mapped[str] = mapped_column(String(40))
    day: Mapped[str] = mapped_column(String(10))
    count: Mapped[int] = mapped_column(Integer, default=0)


class Job(Base):
    """A submission waiting to be graded, or being graded: claimed by a worker, whose lease
    (its token, until an expiry it keeps renewing) says it still holds the job."""

    __tablename__ = "jobs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), unique=True)
    state: Mapped[str] = mapped_column(String(16), index=True, default=QUEUED)
    claimed_by: Mapped[str | None] = mapped_column(String(100), nullable=True)
    claimed_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_token: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    tests_done: Mapped[int | None] = mapped_column(Integer, nullable=True)  # while graded: its tests done so far
    tests_total: Mapped[int | None] = mapped_column(Integer, nullable=True)  # of how many


class Release(Base):
    """An assignment whose private results the instructor released to the students."""

    __tablename__ = "releases"
    assignment: Mapped[str] = mapped_column(String(40), primary_key=True)
    released_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    released_by: Mapped[int] = mapped_column(ForeignKey("users.id"))


class AuditEntry(Base):
    """Who did what the course must be able to account for (a release, sign-in links made)."""

    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    action: Mapped[str] = mapped_column(String(40))
    detail: Mapped[str] = mapped_column(Text)


class Extension(Base):
    """Extra days on an assignment's deadline and hard deadline for one student (the latest grant holds)."""

    __tablename__ = "extensions"
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    assignment: Mapped[str] = mapped_column(String(40), primary_key=True)
    days: Mapped[int] = mapped_column(Integer)
    granted_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    granted_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)


class SignInFailure(Base):
    """A failed sign-in with a password, from a client (its address), kept so that every server
    process shares the limits."""

    __tablename__ = "signin_failures"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320), index=True)
    client: Mapped[str] = mapped_column(String(64), index=True, default="")
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)


class ApiToken(Base):
    """A user's token for the portal's API (``Authorization: Bearer TOKEN``, as ``grader arena
    test --portal`` sends it): only its SHA-256 is kept, shown once when made."""

    __tablename__ = "api_tokens"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    label: Mapped[str] = mapped_column(String(60), default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    @validates("label")
    def _visible(self, key: str, value: str) -> str:
        return visible(value)


class HandGrade(Base):
    """The rubric items staff applied to a submission (their names, as JSON: the points are the
    rubric's in course.yaml now), by whom and when."""

    __tablename__ = "hand_grades"
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), primary_key=True)
    items: Mapped[str] = mapped_column(Text, default="[]")
    graded_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    graded_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)


class HandComment(Base):
    """A comment staff wrote on a line of a submission's file (its path in the upload)."""

    __tablename__ = "hand_comments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id"), index=True)
    path: Mapped[str] = mapped_column(String(300))
    line: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    written_by: Mapped[int] = mapped_column(ForeignKey("users.id"))
    written_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)


class HandRelease(Base):
    """An assignment whose hand grading (items, comments, their points) the instructor released."""

    __tablename__ = "hand_releases"
    assignment: Mapped[str] = mapped_column(String(40), primary_key=True)
    released_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
    released_by: Mapped[int] = mapped_column(ForeignKey("users.id"))


class Team(Base):
    """Students who submit together to an assignment (course.yaml's ``teams``): one submission serves them all."""

    __tablename__ = "teams"
    __table_args__ = (UniqueConstraint("assignment", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assignment: Mapped[str] = mapped_column(String(40), index=True)
    name: Mapped[str] = mapped_column(String(60))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)

    @validates("name")
    def _visible(self, key: str, value: str) -> str:
        return visible(value)


class TeamMember(Base):
    """A student in a team: at most one team per assignment (the unique constraint holds it under races)."""

    __tablename__ = "team_members"
    __table_args__ = (UniqueConstraint("assignment", "user_id"),)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    assignment: Mapped[str] = mapped_column(String(40))  # the team's, kept here for the constraint
    joined_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)


class TeamInvite(Base):
    """A student's invitation of a classmate into their team (or into a team made when it is accepted)."""

    __tablename__ = "team_invites"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assignment: Mapped[str] = mapped_column(String(40), index=True)
    from_user: Mapped[int] = mapped_column(ForeignKey("users.id"))
    to_user: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=now)
