"""Grades sent back to the platforms (IMS Assignment and Grade Services 2.0): when a
submission becomes a student's counted one (graded, graded again after a rerun), when its
private results are released, and when the late policy changes a grade (an extension, a
moved deadline or penalty), its score as the gradebook gives it (after late days and
penalties, with a comment saying how the policy made it) is recorded for each line item the
student's platform gave, then sent by a thread of the server: an OAuth 2 client-credentials token got
with a signed JWT assertion, then the score POSTed to the line item's /scores. Where a launch
gave only the line items container (``lineitems``), the sender first finds the assignment's
line item there (by ``resourceId``) or creates it (``lineitems.py``). Every try is counted and
its error kept; a failure never touches the grade, and staff see it."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

import jwt
from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from ..course.course import Course
from ..course.lti import Platform
from ..course.policy import Counted, counted
from ..course.teams import mates
from ..database.lti import FAILED as SEND_FAILED
from ..database.lti import PENDING, SENT, LtiIdentity, LtiLineItem, LtiLink, LtiScore
from ..database.models import Release, Submission, User, now
from .keys import signing_key
from .lineitems import LINEITEM_SCOPE, LineItemError, find_or_create
from .platforms import find_platform

log = logging.getLogger("grader.portal")
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
MAX_ATTEMPTS = 5  # then the score is marked failed, for staff to send again
LEASE_SECONDS = 60  # a score being sent is not taken by another sender for this long
HTTP_SECONDS = 15
CLAIM_SECONDS = 4 * HTTP_SECONDS  # a line item claimed this long ago and still not found or made: its sender died
CLAIM_WAIT = 2 * HTTP_SECONDS  # how long a sender waits for another to find or make a line item
GRANTS = {  # what to allow on the platform when its token answer leaves out a scope the tool asked for
    SCORE_SCOPE: "to send scores (AGS's score scope)",
    LINEITEM_SCOPE: "to manage its gradebook columns (AGS's lineitem scope; on Moodle, the tool's 'IMS LTI "
    "Assignment and Grade Services' set to 'Use this service for grade sync and column management'; on "
    "Canvas, the developer key's line item scope)",
}


class SendError(Exception):
    """A platform refused or could not be reached: the text kept on the score's row."""

    def __init__(self, text: str, status: int | None = None):
        super().__init__(text)
        self.status = status  # the HTTP status of a refusal


@dataclass
class _Token:
    value: str
    until: float


class GradeSync:
    """Scores recorded in the database and sent by one thread per server process."""

    def __init__(self, course: Course, make: sessionmaker[Session]):
        self.course, self.make = course, make
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self._tokens: dict[tuple[str, str, str], _Token] = {}
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._rescore = False  # every score to check again (rescore_later)

    # --- recording what to send ---------------------------------------------------------

    def graded(self, submission_id: str) -> int:
        """After a grading: the submission's score for each line item, if it is its student's
        counted submission now, and the student's other scores that it changed (late days are
        spent across assignments); the number recorded."""
        made = 0
        with self.make.begin() as session:
            sub = session.get(Submission, submission_id)
            if sub is None:
                return 0
            for uid in mates(session, sub.user_id, sub.assignment):  # a team's submission: each member's score
                owner = session.get(User, uid)
                for (_, name), found in counted(session, self.course, owner).items() if owner else ():
                    if not found.grade.final:
                        continue
                    if found.submission.id == submission_id:
                        made += self._record(session, found, "graded")
                    elif name != sub.assignment:
                        made += self._record(session, found, "policy", changed_only=True)
        self.kick()
        return made

    def released(self, assignment: str) -> int:
        """After a release or its undo: every student's counted score of ``assignment``, as the
        students see it now (with its private tests, or pending them)."""
        return self.rescore(assignment, "release")

    def rescore(self, assignment: str | None = None, reason: str = "policy", user: User | None = None) -> int:
        """Every final counted score (of ``assignment``, or of all; of ``user``, or of every
        student) that differs from the last one recorded for its line item, recorded again: after
        an extension, a release, or a course synced with a moved deadline or a new penalty. The
        number recorded."""
        made = 0
        with self.make.begin() as session:
            for (_, name), found in counted(session, self.course, user).items():
                if (assignment is None or name == assignment) and found.grade.final:
                    made += self._record(session, found, reason, changed_only=True)
        self.kick()
        return made

    def rescore_later(self) -> None:
        """Every score checked again by the sender thread, not by the caller (a page's request
        after a course was synced): ``rescore`` there, its failure logged and tried again."""
        self._rescore = True
        self.kick()

    def again(self, score_id: int) -> bool:
        """Send a failed score once more (staff): a new row, with the score as it is now."""
        with self.make.begin() as session:
            old = session.get(LtiScore, score_id)
            owner = session.get(User, old.user_id) if old is not None else None
            if old is None or owner is None:
                return False
            found = counted(session, self.course, owner).get((owner.id, old.assignment))
            made = self._record(session, found, "again") if found is not None else 0
        self.kick()
        return made > 0

    def _record(self, session: Session, found: Counted, reason: str, changed_only: bool = False) -> int:
        """The counted score of ``found`` recorded for each line item its student launched from
        (only where it differs from the last one recorded, when ``changed_only``)."""
        sub, score = found.submission, found.score
        student = found.user.id  # the submission's, or in a team each member's
        assignment = self.course.assignments.get(sub.assignment)
        if assignment is None or score.score is None or sub.max_total is None:
            return 0
        shown = assignment.private_shown(session.get(Release, assignment.name) is not None, now())
        given, comment = (score.score, found.grade.why) if shown else (None, None)
        made = 0
        links = session.scalars(select(LtiLink).where(LtiLink.assignment == sub.assignment,
                                                      or_(LtiLink.lineitem.is_not(None),
                                                          LtiLink.lineitems.is_not(None)))
                                .order_by(LtiLink.id)).all()  # fmt: skip
        seen: set[tuple[str, str]] = set()  # two links to one line item: one score
        for link in links:
            who = session.scalar(select(LtiIdentity).where(LtiIdentity.issuer == link.issuer,
                                                           LtiIdentity.user_id == student))  # fmt: skip
            target, container = _target(session, link, sub.assignment)
            if who is None or target is None or (link.issuer, target) in seen:
                continue  # the student never launched from this platform: it does not know them
            seen.add((link.issuer, target))
            if changed_only:
                last = session.scalars(select(LtiScore).where(LtiScore.user_id == student,
                                                              LtiScore.assignment == sub.assignment,
                                                              LtiScore.lineitem == target)
                                       .order_by(LtiScore.id.desc()).limit(1)).first()  # fmt: skip
                if last is not None and (last.score_given, last.score_maximum, last.comment) == (
                    given,
                    sub.max_total,
                    comment,
                ):
                    continue
            session.add(LtiScore(submission_id=sub.id, user_id=student, assignment=sub.assignment,
                                 issuer=link.issuer, client_id=link.client_id, lineitem=target,
                                 container=container, user_sub=who.sub, score_given=given, score_maximum=sub.max_total,
                                 comment=comment, reason=reason, status=PENDING, attempts=0,
                                 created_at=now(), next_at=now()))  # fmt: skip
            made += 1
        return made

    # --- sending ----------------------------------------------------------------------

    def kick(self) -> None:
        """Start the sender thread if it is not running, and wake it."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="grader-lti-scores", daemon=True)
                self._thread.start()
        self.wake.set()

    def stop(self) -> None:
        """End the sender thread (what is left to send stays recorded, sent at the next start)."""
        self.stopping.set()
        self.wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                if self._rescore:
                    self._rescore = False
                    try:
                        self.rescore()
                    except Exception:
                        self._rescore = True  # tried again after the wait below
                        raise
                wait = self.send_due()
            except Exception:  # the database gone for a moment: try again later, never end the thread
                log.exception("sending scores")
                wait = 5.0
            self.wake.wait(wait)
            self.wake.clear()

    def send_due(self) -> float:
        """Send every score that is due; the seconds until the next one is (60 when none waits)."""
        while True:
            with self.make.begin() as session:
                row = session.scalars(select(LtiScore).where(LtiScore.status == PENDING, LtiScore.next_at <= now())
                                      .order_by(LtiScore.id).limit(1)).first()  # fmt: skip
                if row is None:
                    later = session.scalar(select(LtiScore.next_at).where(LtiScore.status == PENDING)
                                           .order_by(LtiScore.next_at).limit(1))  # fmt: skip
                    if later is None:
                        return 60.0
                    later = later if later.tzinfo else later.replace(tzinfo=dt.timezone.utc)
                    return max(0.1, min(60.0, (later - now()).total_seconds()))
                score_id, attempts = row.id, row.attempts + 1  # read before the update, which refreshes ``row``
                taken = session.execute(update(LtiScore).where(LtiScore.id == score_id, LtiScore.status == PENDING,
                                                               LtiScore.attempts == attempts - 1)
                                        .values(attempts=attempts,
                                                next_at=now() + dt.timedelta(seconds=LEASE_SECONDS)))  # fmt: skip
                if getattr(taken, "rowcount", 0) != 1:
                    continue  # another server's sender took it
                message = _score_message(row)
                issuer, client_id, lineitem = row.issuer, row.client_id, row.lineitem
                container, assignment = row.container, row.assignment
            platform = self.platform(issuer, client_id)  # its own session: outside the one that took the score
            error = None
            try:
                if platform is None:
                    raise SendError(f"the platform {issuer} is no longer registered (in course.yaml, or its dynamic "
                                    "registration was revoked)")  # fmt: skip
                if container is not None:
                    lineitem = self.lineitem(platform, container, assignment)
                self._send(platform, lineitem, message)
            except SendError as e:
                error = str(e)
            with self.make.begin() as session:
                done = session.get(LtiScore, score_id)
                assert done is not None
                if container is not None and error is None:
                    done.lineitem, done.container = lineitem, None  # its line item known from now on
                if error is None:
                    done.status, done.sent_at = SENT, now()  # an earlier try's error stays: the retries are seen
                else:
                    done.last_error = error
                    if attempts >= MAX_ATTEMPTS:
                        done.status = SEND_FAILED
                    else:
                        done.next_at = now() + dt.timedelta(seconds=2**attempts)

    def lineitem(self, platform: Platform, container: str, assignment: str) -> str:
        """The URL of ``assignment``'s line item in ``container``: the one this tool found or made
        before, else found there (by its resourceId) or created, by one sender only. Two senders
        needing it at once (two processes sending two students' first scores) race for one row
        under a unique key: the winner finds or creates the line item and keeps its URL, the
        other waits for that URL; a winner that fails gives the claim up, and one that died is
        taken over after ``CLAIM_SECONDS`` (its line item, if it made it, is then found)."""
        digest = _key(platform.issuer, platform.client_id, container, assignment)
        deadline = time.monotonic() + CLAIM_WAIT
        while True:
            with self.make.begin() as session:
                row = session.scalar(select(LtiLineItem).where(LtiLineItem.digest == digest))
                if row is not None and row.url:
                    return row.url
                won = False
                if row is not None and _aware(row.claimed_at) < now() - dt.timedelta(seconds=CLAIM_SECONDS):
                    taken = session.execute(update(LtiLineItem).where(LtiLineItem.digest == digest,
                                                                      LtiLineItem.url.is_(None),
                                                                      LtiLineItem.claimed_at == row.claimed_at)
                                            .values(claimed_at=now()))  # fmt: skip
                    won = getattr(taken, "rowcount", 0) == 1
            if row is None:
                try:
                    with self.make.begin() as session:
                        session.add(LtiLineItem(digest=digest, issuer=platform.issuer, client_id=platform.client_id,
                                                container=container, assignment=assignment, claimed_at=now()))  # fmt: skip
                    won = True
                except IntegrityError:
                    won = False  # another sender claimed it first
            if won:
                return self._claimed(platform, digest, container, assignment)
            if time.monotonic() > deadline:
                raise SendError(f"another sender is still finding or making the line item of {assignment} in "
                                f"{container}: tried again shortly")  # fmt: skip
            time.sleep(0.2)

    def _claimed(self, platform: Platform, digest: str, container: str, assignment: str) -> str:
        """Find or create the line item whose claim this sender won; keep its URL (or give the claim up)."""
        chosen = self.course.assignments.get(assignment)
        with self.make() as session:
            link_id = session.scalar(select(LtiLink.resource_link_id).where(LtiLink.issuer == platform.issuer,
                                                                            LtiLink.lineitems == container,
                                                                            LtiLink.assignment == assignment)
                                     .order_by(LtiLink.id).limit(1))  # fmt: skip
        try:
            if chosen is None:
                raise SendError(f"the course has no assignment {assignment!r} to make a line item of")
            try:
                url = find_or_create(container, self.token(platform, LINEITEM_SCOPE), chosen.name, chosen.title,
                                     chosen.max_points, link_id)  # fmt: skip
            except LineItemError as e:
                if e.status == 401:
                    self.forget_token(platform, LINEITEM_SCOPE)
                raise SendError(str(e), e.status) from None
        except SendError:
            with self.make.begin() as session:
                session.execute(delete(LtiLineItem).where(LtiLineItem.digest == digest, LtiLineItem.url.is_(None)))
            raise
        with self.make.begin() as session:
            session.execute(update(LtiLineItem).where(LtiLineItem.digest == digest).values(url=url))
        return url

    def platform(self, issuer: str, client_id: str) -> Platform | None:
        """The registration of ``issuer`` and ``client_id`` (None: it is gone, or revoked). It
        reads in a session of its own: never call it inside another that may write (on SQLite,
        that one holds the lock this one waits for)."""
        if self.course.lti is None:
            return None
        with self.make() as session:
            return find_platform(session, self.course.lti, issuer, client_id)

    def _send(self, platform: Platform, lineitem: str, message: dict[str, Any]) -> None:
        token = self.token(platform, SCORE_SCOPE)
        parts = urllib.parse.urlsplit(lineitem)
        url = urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/scores"))
        try:
            _http(url, json.dumps(message).encode(), {"Content-Type": SCORE_TYPE, "Authorization": f"Bearer {token}"})
        except SendError as e:
            if e.status == 401:  # the token was revoked or expired early: the next try gets a new one
                self.forget_token(platform, SCORE_SCOPE)
            raise

    def forget_token(self, platform: Platform, scope: str) -> None:
        """Drop the kept token of ``scope`` (the platform refused it): the next need gets a new one."""
        self._tokens.pop((platform.token_url, platform.client_id, scope), None)

    def token(self, platform: Platform, scope: str) -> str:
        """An access token for ``scope`` (AGS's score scope, NRPS's membership scope), got by the
        client-credentials grant with a signed JWT assertion, kept until a minute before it expires."""
        key = (platform.token_url, platform.client_id, scope)
        found = self._tokens.get(key)
        if found is not None and found.until > time.time():
            return found.value
        with self.make.begin() as session:
            signing = signing_key(session)
        issued = int(time.time())
        audience = platform.token_audience or platform.token_url  # the token URL, unless the platform names another
        assertion = jwt.encode({"iss": platform.client_id, "sub": platform.client_id, "aud": audience,
                                "iat": issued, "exp": issued + 300, "jti": secrets.token_urlsafe(16)},
                               signing.private_pem, algorithm="RS256", headers={"kid": signing.kid})  # fmt: skip
        body = urllib.parse.urlencode({
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
            "scope": scope,
        }).encode()  # fmt: skip
        answer = _http(platform.token_url, body, {"Content-Type": "application/x-www-form-urlencoded"})
        try:
            data = json.loads(answer)
            value = str(data["access_token"])
            lifetime = float(data.get("expires_in", 3600))
            granted = data.get("scope")
        except (ValueError, KeyError, TypeError):
            raise SendError(f"the token endpoint {platform.token_url} answered no access_token") from None
        if isinstance(granted, str) and scope not in granted.split():  # no scope given: the one asked (RFC 6749)
            raise SendError(f"the platform {platform.issuer} did not grant the scope {scope} (its token answer "
                            f"gives {granted!r}): ask its administrator to allow the tool "
                            f"{GRANTS.get(scope, 'that scope')}, then send the score again")  # fmt: skip
        self._tokens[key] = _Token(value, time.time() + lifetime - 60)
        return value


def _aware(when: dt.datetime) -> dt.datetime:
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def _key(issuer: str, client_id: str, container: str, assignment: str) -> str:
    """The unique key of an assignment's line item in a platform's container (``LtiLineItem.digest``)."""
    return hashlib.sha256("\n".join((issuer, client_id, container, assignment)).encode()).hexdigest()


def _target(session: Session, link: LtiLink, assignment: str) -> tuple[str | None, str | None]:
    """Where a score of ``link`` goes: (its line item, None); or, when the launches gave only the
    line items container and the tool has not found or made the line item there yet, (the
    container, the container): the sender finds or makes it first."""
    if link.lineitem:
        return link.lineitem, None
    if not link.lineitems:
        return None, None
    key = _key(link.issuer, link.client_id, link.lineitems, assignment)
    url = session.scalar(select(LtiLineItem.url).where(LtiLineItem.digest == key))
    return (url, None) if url else (link.lineitems, link.lineitems)


def _score_message(row: LtiScore) -> dict[str, Any]:
    """The AGS score: the counted score (after the late policy, with the comment saying how it
    made it) once the private results are out, else graded pending them (no score given, so the
    platform shows none too early)."""
    message: dict[str, Any] = {
        "userId": row.user_sub,
        "scoreMaximum": row.score_maximum,
        "activityProgress": "Completed",
        "gradingProgress": "FullyGraded" if row.score_given is not None else "PendingManual",
        "timestamp": now().isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
    if row.score_given is not None:
        message["scoreGiven"] = row.score_given
        if row.comment:
            message["comment"] = row.comment
    else:
        message["comment"] = "graded: the score is sent when the private results are released"
    return message


def _http(url: str, body: bytes, headers: dict[str, str]) -> bytes:
    request = urllib.request.Request(url, data=body, headers={**headers, "Accept": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=HTTP_SECONDS) as answer:  # noqa: S310 (the course's URLs)
            return bytes(answer.read())
    except urllib.error.HTTPError as e:
        detail = e.read(300).decode("utf-8", "replace").strip()
        raise SendError(f"{url} answered {e.code} {e.reason}" + (f": {detail}" if detail else ""), e.code) from None
    except (urllib.error.URLError, OSError) as e:
        raise SendError(f"cannot reach {url}: {getattr(e, 'reason', e)}") from None
