"""What every route shares (``Portal``): the course, the database's sessions, the workers, the
sign-in limit and the pages waiting for a grade; the course loaded again once it is synced."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

from ...errors import GraderError
from ..accounts.signin import SignInLimit
from ..course.course import Course, load_course
from ..course.sync import synced_since
from ..database.db import reading
from ..jobs.workers import Workers
from ..lti.grades import GradeSync
from ..lti.roster import RosterSync
from ..mail.outbox import base_url as recorded_url
from ..mail.sender import MailSender
from .live import Watch

log = logging.getLogger("grader.portal")
REFRESH_SECONDS = 1.0  # how often at most a server asks the database whether the course was synced


@dataclass
class Portal:
    """What the routes share: the course, the database's sessions, the workers, and the digest
    of the course as loaded (``grader portal sync`` changes the database's: see ``refresh``)."""

    course: Course
    make: sessionmaker[Session]
    workers: Workers | None = None
    signin_limit: SignInLimit = field(default_factory=SignInLimit)
    grades: GradeSync | None = None  # the scores sent to LTI platforms (None: the course is no LTI tool)
    roster: RosterSync | None = None  # the reads of the LTI platforms' rosters (None: the course is no LTI tool)
    public_url: str | None = None  # the address people reach it at (behind a proxy), if not the one it listens at
    address: str = ""  # the address its links name, set at start: public_url, else the one it listens at
    digest: str | None = None
    mail: MailSender | None = None  # the outbox's sender of this process (kicked when a page enqueues a mail)
    problem: str | None = None  # why the course folder does not load now (the last one that did is served)
    read: sessionmaker[Session] = field(init=False)  # sessions for reading only: a page's wait for no writer
    watch: Watch = field(init=False)  # the submissions whose pages wait for their grade
    _checked: float = field(default=0.0, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self.read = reading(self.make)
        self.watch = Watch(self.read)

    def refresh(self) -> None:
        """Load the course again when it was synced since it was loaded, asking the database at
        most once a second (one request asks; the others go on meanwhile). A folder that no
        longer loads (edited after its sync) leaves the course as it was until the next sync,
        saying so (logged, and ``problem`` for the staff's pages)."""
        if time.monotonic() - self._checked < REFRESH_SECONDS or not self._lock.acquire(blocking=False):
            return
        try:
            self._checked = time.monotonic()
            with self.read() as session:
                synced = synced_since(session, self.digest)
            if synced is None:
                return
            self.digest = synced
            try:
                self.course, self.problem = load_course(self.course.folder), None
            except GraderError as e:
                self.problem = str(e)
                log.warning("%s: serving the course as it was until it is fixed (then grader portal sync)", e)
                return
            if self.workers is not None:
                self.workers.course = self.course
            if self.mail is not None:
                self.mail.course = self.course
            if self.grades is not None:
                self.grades.course = self.course
                self.grades.rescore_later()  # a moved deadline or a new penalty: the platforms' grades follow
        finally:
            self._lock.release()


def mailed(portal: Portal) -> None:
    """A page enqueued mail: its sender looks now."""
    if portal.mail is not None:
        portal.mail.kick()


def https(url: str | None) -> bool:
    return url is not None and url.lower().startswith("https://")


def base_url(portal: Portal) -> str:
    """The portal's address, for links it hands out: its public address, else the one it
    listens at, as recorded at its start; never a request's Host header (which a client
    chooses: a link made from it would send its reader to the client's site)."""
    if not portal.address:
        with portal.read() as session:
            portal.address = recorded_url(session)
    return portal.address
