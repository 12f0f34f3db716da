"""The sender: a thread of ``grader serve`` (and of ``grader worker``) draining the outbox,
one message at a time under a lease, so that any number of processes share the work and none
sends a message another holds. A mail server slow or down holds up only this thread: never a
page, never a grading."""

from __future__ import annotations

import logging
import threading
import time

from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from ..course.course import Course
from .outbox import LEASE_SECONDS, claim, failed, prune, sent
from .smtp import MailError, deliver, message

log = logging.getLogger("grader.portal")
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

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="grader-mail", daemon=True)
            self._thread.start()

    def kick(self) -> None:
        """Look at the outbox now (a message was enqueued)."""
        self.wake.set()

    def stop(self, wait: float = 5.0) -> None:
        """End the thread (what is left waits in the outbox, sent at the next start)."""
        self.stopping.set()
        self.wake.set()
        if self._thread is not None:
            self._thread.join(wait)

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                busy = self.send_once()
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
