"""The course's roster read from its platforms (IMS Names and Role Provisioning Services 2.0):
the memberships URL each launch gives kept per platform course (LTI context), and its members
read with a client-credentials token of the membership scope, page by page through the
``Link: rel="next"`` headers, then by the ``rel="differences"`` URL the last read gave. New
students get an account, a member gone from a full read or Inactive or Deleted is dropped
(their account and work kept), and a member's platform roles give their role by the launches'
rules: no account is ever given a role by the platform, and a Learner is never linked to a
staff account."""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from ...errors import GraderError
from ...names import visible
from ..course.course import Course
from ..course.lti import Platform
from ..database.lti import ACTIVE, DROPPED, LtiContext, LtiIdentity, LtiMember
from ..database.models import STUDENT, User, now
from .grades import HTTP_SECONDS, GradeSync, SendError
from .launch import MAX_SUB, made_address, role_of
from .paging import links

log = logging.getLogger("grader.portal")
NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
MEMBERSHIP_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
MAX_PAGES = 1000  # a platform whose "next" never ends is read no further
MAX_PAGE_BYTES = 50_000_000  # the most of one page read (a page cut there is no JSON: the read fails)
GONE = ("Inactive", "Deleted")  # a member's status that drops them


class RosterError(GraderError):
    """A roster that could not be read: the message says why and what to do."""


@dataclass(frozen=True)
class RosterRead:
    """What one read of a platform course's roster changed."""

    context: int
    members: int  # the members the platform listed
    added: int  # accounts made for new students
    dropped: int  # members dropped by this read
    full: bool  # a full read (else the differences since the last)


class RosterSync:
    """Reads of the platforms' rosters: asked by an instructor, and every ``minutes`` by a
    thread of the server (0: never by itself)."""

    def __init__(self, course: Course, make: sessionmaker[Session], grades: GradeSync, minutes: int):
        self.course, self.make, self.grades, self.minutes = course, make, grades, minutes
        self.stopping = threading.Event()
        self.wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # one read at a time in this process

    def sync(self, context: int, full: bool = False) -> RosterRead:
        """Read the roster of the platform course ``context`` and apply it: from its differences
        URL when the last read gave one and not ``full``, else in full. RosterError (kept on the
        context's row too) when the platform cannot be read."""
        with self._lock:
            with self.make() as session:
                row = session.get(LtiContext, context)
                if row is None:
                    raise RosterError(f"no platform course {context}: launch the tool from the course first")
                issuer, client_id = row.issuer, row.client_id
                start = row.memberships_url if full or not row.differences_url else row.differences_url
                whole = start == row.memberships_url
            platform = self.grades.platform(issuer, client_id)
            try:
                if platform is None:
                    raise RosterError(f"the platform {issuer} is no longer registered: register it again")
                members, differences = self._read(platform, start)
            except RosterError as e:
                with self.make.begin() as session:
                    failed = session.get(LtiContext, context)
                    if failed is not None:
                        failed.last_error = str(e)
                raise
            with self.make.begin() as session:
                row = session.get(LtiContext, context)
                assert row is not None
                added, dropped = _apply(session, platform, row, members, whole)
                row.differences_url, row.synced_at, row.last_error = differences, now(), None
            return RosterRead(context, len(members), added, dropped, whole)

    def _read(self, platform: Platform, url: str) -> tuple[list[dict[str, Any]], str | None]:
        """Every member of every page from ``url`` on, and the differences URL a page gave."""
        members: list[dict[str, Any]] = []
        differences = None
        seen: set[str] = set()
        next_url: str | None = url
        while next_url is not None:
            if next_url in seen or len(seen) >= MAX_PAGES:
                raise RosterError(f"the platform's roster pages do not end (page {next_url} again, or more than "
                                  f"{MAX_PAGES}): ask the platform's administrator")  # fmt: skip
            seen.add(next_url)
            body, links = self._page(platform, next_url)
            try:
                data = json.loads(body)
                page = data["members"]
                if not isinstance(page, list):
                    raise TypeError
            except (ValueError, KeyError, TypeError):
                raise RosterError(f"{next_url} answered no membership list (a JSON object with 'members')") from None
            members.extend(m for m in page if isinstance(m, dict))
            differences = links.get("differences", differences)
            next_url = links.get("next")
        return members, differences

    def _page(self, platform: Platform, url: str) -> tuple[bytes, dict[str, str]]:
        """One page of members: its body and its Link header's URLs by relation."""
        for attempt in (1, 2):
            try:
                token = self.grades.token(platform, NRPS_SCOPE)
            except SendError as e:
                raise RosterError(f"no access token for the roster: {e}") from None
            request = urllib.request.Request(url, headers={"Accept": MEMBERSHIP_TYPE,
                                                           "Authorization": f"Bearer {token}"})  # fmt: skip
            try:
                with urllib.request.urlopen(request, timeout=HTTP_SECONDS) as answer:  # noqa: S310 (the launch's URL)
                    body = bytes(answer.read(MAX_PAGE_BYTES))
                    return body, links(", ".join(answer.headers.get_all("Link") or []), url)
            except urllib.error.HTTPError as e:
                if e.code == 401 and attempt == 1:  # a token revoked or expired early: once more with a new one
                    self.grades.forget_token(platform, NRPS_SCOPE)
                    continue
                detail = e.read(300).decode("utf-8", "replace").strip()
                raise RosterError(f"{url} answered {e.code} {e.reason}" + (f": {detail}" if detail else "")) from None
            except (urllib.error.URLError, OSError) as e:
                raise RosterError(f"cannot reach {url}: {getattr(e, 'reason', e)}") from None
        raise AssertionError("unreachable")

    # --- the scheduled read -------------------------------------------------------------

    def start(self) -> None:
        """Start the thread that reads every roster due (none when ``minutes`` is 0)."""
        if self.minutes > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="grader-lti-roster", daemon=True)
            self._thread.start()

    def kick(self) -> None:
        """Wake the thread: a launch may have brought a platform course never read."""
        self.wake.set()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def due(self) -> list[int]:
        """The platform courses never read, or last read ``minutes`` ago or more."""
        since = now() - dt.timedelta(minutes=self.minutes)
        with self.make() as session:
            rows = session.execute(select(LtiContext.id, LtiContext.synced_at)).all()
        return [i for i, at in rows if at is None or (at if at.tzinfo else at.replace(tzinfo=dt.timezone.utc)) <= since]

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                for context in self.due():
                    try:
                        self.sync(context)
                    except RosterError as e:  # kept on the row for the instructor; tried at the next turn
                        log.warning("reading an LTI roster: %s", e)
            except Exception:  # the database gone for a moment: try again later, never end the thread
                log.exception("reading the LTI rosters")
            self.wake.wait(min(60.0, self.minutes * 60.0))
            self.wake.clear()


def _apply(session: Session, platform: Platform, context: LtiContext, members: list[dict[str, Any]],
           whole: bool) -> tuple[int, int]:  # fmt: skip
    """The members read, applied: (accounts made, members dropped)."""
    added = dropped = 0
    listed: set[str] = set()
    known = {m.sub: m for m in session.scalars(select(LtiMember).where(LtiMember.context == context.id)).all()}
    for member in members:
        sub = str(member.get("user_id") or "")
        if not 0 < len(sub) <= MAX_SUB:  # no user id, or longer than OpenID Connect allows: no one to keep
            continue
        listed.add(sub)
        roles = member.get("roles")
        role = role_of(roles if isinstance(roles, list) else [])
        given = member.get("name") or " ".join(str(member.get(k) or "") for k in ("given_name", "family_name"))
        name = (visible(str(given)).strip() or sub)[:200]
        status = DROPPED if member.get("status") in GONE else ACTIVE
        row = known.get(sub)
        if row is None:
            row = LtiMember(context=context.id, sub=sub, name=name, role=role, status=status, changed_at=now())
            session.add(row)
            known[sub] = row
        elif row.status != status:
            row.changed_at = now()
        if status == DROPPED and row.status != DROPPED:
            dropped += 1
        row.name, row.role, row.status = name, role, status
        user, made = _account(session, platform, sub, member, name, role, status)
        row.user_id = user.id if user is not None else row.user_id
        added += made
    if whole:
        for sub, row in known.items():
            if sub not in listed and row.status != DROPPED:
                row.status, row.changed_at = DROPPED, now()
                dropped += 1
    session.flush()
    return added, dropped


def _account(session: Session, platform: Platform, sub: str, member: dict[str, Any], name: str, role: str,
             status: str) -> tuple[User | None, int]:  # fmt: skip
    """A member's portal account, as a launch would find it, and whether it was made now: the
    account their ``sub`` is linked to; else, for an active Learner, the account of their
    e-mail where the platform's e-mails are trusted (never a staff account, never one linked
    to another platform user), else a new student's. Staff on the platform whom the portal
    does not know get no account: their role comes from the roster or course.yaml only."""
    known = session.scalar(select(LtiIdentity).where(LtiIdentity.issuer == platform.issuer, LtiIdentity.sub == sub))
    if known is not None:
        user = session.get(User, known.user_id)
        if user is not None and not user.rostered:
            user.name = name  # the platform is its only source, as at a launch
        return user, 0
    if role != STUDENT or status != ACTIVE:
        return None, 0
    said = visible(str(member.get("email") or "")).strip().lower()
    made = made_address(platform, sub)
    email = said if platform.trust_emails and "@" in said else made
    user = session.scalar(select(User).where(User.email == email))
    if user is not None:
        linked = session.scalar(select(LtiIdentity.id).where(LtiIdentity.user_id == user.id).limit(1))
        if email != said or user.staff or linked is not None:
            return None, 0  # a Learner never takes a staff account, nor one another platform user has
        session.add(LtiIdentity(issuer=platform.issuer, sub=sub, user_id=user.id))
        return user, 0
    user = User(email=email, name=name, role=STUDENT, rostered=False)
    session.add(user)
    session.flush()
    session.add(LtiIdentity(issuer=platform.issuer, sub=sub, user_id=user.id))
    return user, 1
