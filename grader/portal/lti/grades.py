"""Grades sent back to the platforms (IMS Assignment and Grade Services 2.0): when a
submission becomes a student's counted one (graded, graded again after a rerun), when its
private results are released, and when the late policy changes a grade (an extension, a
moved deadline or penalty), its score as the gradebook gives it (after late days and
penalties, with a comment saying how the policy made it) is recorded for each line item the
student's platform gave, then sent by a thread of the server: an OAuth 2 client-credentials token got
with a signed JWT assertion, then the score POSTed to the line item's /scores. Every try is
counted and its error kept; a failure never touches the grade, and staff see it."""

from __future__ import annotations

import datetime as dt
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
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from ..course.course import Course
from ..course.lti import Platform
from ..course.policy import Counted, counted
from ..course.teams import mates
from ..database.lti import FAILED as SEND_FAILED
from ..database.lti import PENDING, SENT, LtiIdentity, LtiLink, LtiScore
from ..database.models import Release, Submission, User, now
from .keys import signing_key
from .platforms import find_platform

log = logging.getLogger("grader.portal")
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
MAX_ATTEMPTS = 5  # then the score is marked failed, for staff to send again
LEASE_SECONDS = 60  # a score being sent is not taken by another sender for this long
HTTP_SECONDS = 15


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
                                                      LtiLink.lineitem.is_not(None))).all()  # fmt: skip
        for link in links:
            who = session.scalar(select(LtiIdentity).where(LtiIdentity.issuer == link.issuer,
                                                           LtiIdentity.user_id == student))  # fmt: skip
            if who is None or link.lineitem is None:
                continue  # the student never launched from this platform: it does not know them
            if changed_only:
                last = session.scalars(select(LtiScore).where(LtiScore.user_id == student,
                                                              LtiScore.assignment == sub.assignment,
                                                              LtiScore.lineitem == link.lineitem)
                                       .order_by(LtiScore.id.desc()).limit(1)).first()  # fmt: skip
                if last is not None and (last.score_given, last.score_maximum, last.comment) == (
                    given,
                    sub.max_total,
                    comment,
                ):
                    continue
            session.add(LtiScore(submission_id=sub.id, user_id=student, assignment=sub.assignment,
                                 issuer=link.issuer, client_id=link.client_id, lineitem=link.lineitem,
                                 user_sub=who.sub, score_given=given, score_maximum=sub.max_total,
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
            platform = self.platform(issuer, client_id)  # its own session: outside the one that took the score
            error = None
            try:
                if platform is None:
                    raise SendError(f"the platform {issuer} is no longer registered (in course.yaml, or its dynamic "
                                    "registration was revoked)")  # fmt: skip
                self._send(platform, lineitem, message)
            except SendError as e:
                error = str(e)
            with self.make.begin() as session:
                done = session.get(LtiScore, score_id)
                assert done is not None
                if error is None:
                    done.status, done.sent_at = SENT, now()  # an earlier try's error stays: the retries are seen
                else:
                    done.last_error = error
                    if attempts >= MAX_ATTEMPTS:
                        done.status = SEND_FAILED
                    else:
                        done.next_at = now() + dt.timedelta(seconds=2**attempts)

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
        except (ValueError, KeyError, TypeError):
            raise SendError(f"the token endpoint {platform.token_url} answered no access_token") from None
        self._tokens[key] = _Token(value, time.time() + lifetime - 60)
        return value


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
