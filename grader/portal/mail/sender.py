"""The sender: a thread of ``grader serve`` (and of ``grader worker``) draining the outbox,
one message at a time under a lease, so that any number of processes share the work and none
sends a message another holds. A mail server slow or down holds up only this thread: never a
page, never a grading.

It also answers the links asked for by mail on the sign-in page (a sign-in link, a password
reset): the request only counts itself (``ask_by_mail``, one row whatever the address) and
hands the address here, where it is looked up and its link made and enqueued. A request for
an address on the roster then does the same database work as one for a stranger's, and takes
as long. A request handed over is lost if its server stops before it is answered (within
moments); the person asks again."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from ..course.course import Course
from ..database.models import User
from .outbox import LEASE_SECONDS, claim, count_link_request, failed, prune, sent
from .smtp import MailError, deliver, message

log = logging.getLogger("grader.portal")
Send = Callable[
    [Session, Course, User], object
]  # a link's mail to a person (``messages.signin_link``, ``password_reset``)
POLL_SECONDS = 2.0  # how often an idle sender looks for mail another process enqueued
PRUNE_SECONDS = 3600.0  # how often a sender deletes the old sent messages (mail.keep_days), the first time at its start


class MailSender:
    """One thread sending the outbox's messages through the course's mail server."""

    def __init__(self, course: Course, make: sessionmaker[Session], poll: float = POLL_SECONDS,
                 lease: float = LEASE_SECONDS):  # fmt: skip
        self.course, self.make, self.poll, self.lease = course, make, poll, lease
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._pruned_at: float | None = None
        self._asked: deque[tuple[Send, str]] = deque()
        self._unanswered = 0  # asked and not answered yet (the one being answered too)
        self._lock = threading.Lock()

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="grader-mail", daemon=True)
            self._thread.start()

    def kick(self) -> None:
        """Look at the outbox now (a message was enqueued)."""
        self.wake.set()

    def ask(self, send: Send, email: str) -> None:
        """Answer a link asked for ``email`` by mail (``send`` makes it) in this thread, soon."""
        with self._lock:
            self._asked.append((send, email))
            self._unanswered += 1
        self.wake.set()

    def unanswered(self) -> int:
        """The links asked for by mail not answered yet (as mail waiting: staff's outbox counts them)."""
        with self._lock:
            return self._unanswered

    def answer_once(self) -> bool:
        """Answer one link asked for: its address looked up and, for a person of the course, the
        link made and enqueued (``send`` says whether they get it); False when none was asked."""
        with self._lock:
            if not self._asked:
                return False
            send, email = self._asked.popleft()
        try:
            with self.make.begin() as session:
                user = session.scalar(select(User).where(User.email == email))
                if user is not None:
                    send(session, self.course, user)
        finally:
            with self._lock:
                self._unanswered -= 1
        return True

    def stop(self, wait: float = 5.0) -> None:
        """End the thread (what is left waits in the outbox, sent at the next start)."""
        self.stopping.set()
        self.wake.set()
        if self._thread is not None:
            self._thread.join(wait)

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                busy = self.answer_once() or self.send_once()
            except OperationalError:  # the database away: try again later
                busy = False
            except Exception:
                log.exception("the mail sender")
                busy = False
            if not busy:
                self.wake.wait(self.poll)
                self.wake.clear()

    def send_once(self) -> bool:
        """Claim one message due and send it; False when none is due (or the course sends no mail)."""
        settings = self.course.mail
        if settings is None:
            return False
        if self._pruned_at is None or time.monotonic() - self._pruned_at >= PRUNE_SECONDS:
            with self.make.begin() as session:
                gone = prune(session, settings.keep_days)
            self._pruned_at = time.monotonic()
            if gone:
                log.info(
                    "mail: %d sent message(s) older than %d days deleted from the outbox", gone, settings.keep_days
                )
        with self.make.begin() as session:
            held = claim(session, self.lease)
        if held is None:
            return False
        try:
            deliver(settings, message(settings, held.to, held.subject, held.body, held.name))
        except Exception as e:  # a MailError, or a message the mail library refuses: failing, for staff to see
            text = str(e) if isinstance(e, MailError) else f"the message could not be made: {e}"
            log.warning("mail %s to %s not sent: %s", held.id, held.to, text)
            with self.make.begin() as session:
                failed(session, held, text, settings.retry_seconds)
            return True
        with self.make.begin() as session:
            sent(session, held)
        return True


def ask_by_mail(make: sessionmaker[Session], course: Course, sender: MailSender | None, send: Send, email: str,
                client: str, what: str) -> None:  # fmt: skip
    """A link asked for ``email`` by mail from ``client``: counted (TooManyRequests past the
    limits), then answered by ``sender``'s thread, so that the request does the same work
    whether or not the address is a person's (one row written, no look-up). Without a sender
    (no server's), answered here."""
    with make.begin() as session:
        count_link_request(session, email, client, what)
        if sender is None:
            user = session.scalar(select(User).where(User.email == email))
            if user is not None:
                send(session, course, user)
    if sender is not None:
        sender.ask(send, email)
