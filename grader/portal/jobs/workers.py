"""Workers: threads (of the server, or of ``grader worker`` on other machines) that claim jobs
from the queue and grade each submission with the call ``grader grade`` makes
(``grade_submission``, on the assignment's plan and the settings ``grader.settings``
resolves; a GTP lab's with the call ``grader gradescope`` makes, ``grading.grade_program``),
then keep what each reader may see, if their lease on the job still holds."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Callable, TypeVar

from sqlalchemy.orm import Session, sessionmaker

from ...engines.cgroups import dedicate_this_thread
from ...engines.fairness import assign_slot
from ...errors import GraderError
from ...execution.executor import Executor, Lane, LocalExecutor
from ...grading.results import TestResult
from ...settings import jobs
from ...stop import Stop
from ..arena.leases import GameLease, renew_game
from ..arena.play import ArenaPlayer, GamesDone
from ..course.course import Assignment, Course
from ..database.leases import LEASE_SECONDS, MAX_ATTEMPTS
from ..database.models import FAILED, GRADED, Submission, now
from ..database.outage import outage
from ..ladders import ladders
from ..mail import messages as mails
from .grading import Feedback, grade_upload, test_count
from .queue import Lease, claim, finish, give_back, progress, release, renew

log = logging.getLogger("grader.portal")
CLOSE_SECONDS = 60.0  # how long closing waits for the gradings it stopped to give their jobs back
STOPPING = "the worker stopped"
GRADING_NICE = 10  # a grading thread's nice value by default: its CPU weight a tenth of the pages' (nice 0)
RETRY_SECONDS = 2.0  # how often a worker tries a database that is away again
LONG_SECONDS = 5.0  # slot seconds after which a grading is long: its waiting tests hold no spare thread back
SPARE = 8  # grading threads beside the workers' own, claiming an upload when no short grading has a test waiting
PROGRESS_SECONDS = 1.0  # how often a grading writes its tests done, at most
T = TypeVar("T")


def grade_below_pages(nice: int = GRADING_NICE) -> None:
    """Lower the calling thread's CPU priority to ``nice`` (Linux: a thread's own), so that in
    a rush the pages answer first; the tests' scripts it starts inherit it, in their fair-CPU
    cgroups too (``grader.engines.fairness`` weighs a cgroup by its starter's nice value)."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), nice))
    except (AttributeError, OSError):  # not Linux, or not allowed: grading keeps the pages' priority
        pass


class Workers:
    """``count`` threads grading from the queue until ``stop``; ``wake`` after an upload. Each
    job is held by a lease of ``lease`` seconds, renewed while it is graded; one claimed
    ``attempts`` times whose worker died each time is failed, not claimed again. The threads run
    at ``nice`` (``grade_below_pages``: 0 keeps the pages' priority). The threads grade on one
    set of config.yaml's job slots, a lane each (``LocalExecutor.lane``): the tests of an
    upload queue behind those of the uploads already under way, so that while one upload's
    last test runs, the next one's fill the other slots; the slots keep their sandboxes from
    one upload to the next, as ``grade class`` keeps them from one student to the next. With
    ``cluster`` (a Dask scheduler's address), each thread grades on the cluster through a
    client of its own instead, connected here (so an unreachable scheduler is an error at
    the start).

    Fairness: the slots take each next test from the grading that has had the least slot time
    (``JobSlots``), and whenever no grading under way that is short so far (less than ``long``
    slot seconds) has a test waiting for a slot, one of ``spare`` more threads claims the
    next upload, whose tests then go first: a script timing out test after test takes a slot
    only when no other upload's test wants it, instead of holding the workers (at most
    ``count + spare`` slow ones at once; no spare thread on a cluster, whose scheduler
    shares its workers). Each grading writes its tests done on its job as they come."""

    def __init__(self, course: Course, make: sessionmaker[Session], count: int = 1, name: str | None = None,
                 lease: float = LEASE_SECONDS, cluster: str | None = None,
                 on_graded: Callable[[str], object] | None = None, attempts: int = MAX_ATTEMPTS,
                 nice: int = GRADING_NICE, on_games: GamesDone | None = None, spare: int = SPARE,
                 long: float = LONG_SECONDS, before_claim: Callable[[], object] | None = None):  # fmt: skip
        self.course, self.make, self.lease, self.cluster, self.nice = course, make, lease, cluster, nice
        self.attempts = attempts  # claims of a job whose worker died on each before it is failed
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.on_graded = on_graded  # told each submission graded (the LTI tool sends its score)
        self.on_games = on_games  # told of a job's games written that no test queued (a ladder's)
        self.before_claim = before_claim  # called before each claim (a worker process follows a sync there)
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.long = long
        self.threads = [threading.Thread(target=self._loop, args=(i,), name=f"grader-worker-{i}", daemon=True)
                        for i in range(count)]  # fmt: skip
        self.spares = [threading.Thread(target=self._spare, args=(i,), name=f"grader-spare-{i}", daemon=True)
                       for i in range(0 if cluster else spare)]  # fmt: skip
        self._claiming = threading.Lock()  # one spare claim at a time
        self._hungry = threading.Event()  # a grading's last waiting test started, or one ended: a spare may claim
        self._claims: dict[int, Lane | None] = {}  # each grading under way (by job): its lane once it has one
        self._lock = threading.Condition()
        self._gradings = 0  # claimed and not yet written
        self._lanes: dict[Lane, LocalExecutor] = {}  # the gradings on job slots, and whose slots
        self._retired: list[LocalExecutor] = []  # slots a sync replaced, closed once their gradings end
        self._away = False  # the database is away: said once in the log, until it is back
        self.executors: list[Executor | None] = [None] * count
        self.shared = None if cluster else self._slots()
        try:
            for i in range(count if cluster else 0):
                self.executors[i] = self._connect()
        except BaseException:
            self.close()
            raise

    def _slots(self) -> LocalExecutor:
        """The job slots of this process's gradings (config.yaml's ``jobs``)."""
        shared = LocalExecutor(jobs(self.course.config), keep_sandboxes=True, long=self.long)
        shared.slots.on_drained = self._hungry.set
        return shared

    def start(self) -> None:
        for t in [*self.threads, *self.spares]:
            t.start()

    def stop(self) -> None:
        """Stop claiming (``close`` also stops the gradings under way)."""
        self.stopping.set()
        self.wake.set()

    def close(self, wait: float = CLOSE_SECONDS) -> None:
        """Stop claiming and stop the gradings under way: their scripts are killed and their jobs
        given back to the queue at once (not counted among their attempts); once they are (for
        at most ``wait`` seconds), close the job slots and the cluster's clients."""
        self.stop()
        with self._lock:
            for ex in [*self._lanes, *self.executors]:
                if ex is not None:
                    ex.stop.set(STOPPING)
            self._lock.wait_for(lambda: self._gradings == 0, wait)
        for ex in [*self.executors, self.shared, *self._retired]:
            if ex is not None:
                ex.close()

    def _usable(self, executor: Executor | None) -> Executor:
        """The cluster's client ``executor`` if a grading can run on it, else a new one (the old
        closed): its scheduler gone, or its Stop set by a grading that failed (every later
        run on it would stop at once)."""
        if executor is not None and not (getattr(executor, "lost", None) or executor.stop.is_set()):
            return executor
        if executor is not None:
            executor.close()
        return self._connect()

    def _connect(self) -> Executor:
        from ...execution.cluster import DaskExecutor  # distributed: only with --cluster (the cluster extra)

        assert self.cluster is not None
        return DaskExecutor.connect(self.cluster, self.course.config.cluster, Stop())

    def _loop(self, i: int) -> None:
        me = f"{self.name}-{i}"
        grade_below_pages(self.nice)
        dedicate_this_thread()  # its engines' processes in cgroups of their own, pinned to the slot's cores,
        assign_slot(i, len(self.threads))  # as a tournament's job slots run theirs
        player = ArenaPlayer(i, self.on_games)
        try:
            while not self.stopping.is_set():
                try:
                    if self.cluster:
                        self.executors[i] = self._usable(self.executors[i])
                    with self._under_way():  # close() waits for a claim until its result or release is written
                        worked = self.work_once(me, self.executors[i])
                    worked = worked or self.play_once(me, player) or self.plan_ladders()
                    self._back()
                except Exception as e:  # a database or a scheduler gone for a moment: try again, never end the thread
                    self._trouble(me, e)
                    worked = False
                if not worked:
                    self.wake.wait(RETRY_SECONDS if self._away else 1.0)
                    self.wake.clear()
        finally:
            player.close()

    def _spare(self, i: int) -> None:
        """A spare thread: grades an upload whenever the gradings under way want one more
        (``wants_more``), else waits until one's last waiting test starts or one ends."""
        me = f"{self.name}-spare-{i}"
        grade_below_pages(self.nice)
        dedicate_this_thread()
        while not self.stopping.is_set():
            try:
                with self._under_way():
                    worked = self.work_once(me, None, spare=True)
                self._back()
            except Exception as e:  # as _loop: never end the thread
                self._trouble(me, e)
                worked = False
            if not worked:
                self._hungry.wait(1.0)
                self._hungry.clear()

    def wants_more(self) -> bool:
        """No grading under way that is short so far has a test waiting (there is one at least):
        each is long (``long`` slot seconds), or has all its tests started. One claimed and not
        started yet (its upload unpacked, its plan checked) counts as waiting."""
        with self._lock:
            claims = list(self._claims.values())

        def waits(lane: Lane | None) -> bool:
            return lane is None or not lane.submitted or (lane.waiting() > 0 and lane.attained() < self.long)

        return bool(claims) and not any(waits(lane) for lane in claims)

    def play_once(self, me: str, player: ArenaPlayer) -> bool:
        """Claim one game job of the arena (gradings first: ``work_once`` found none) and play
        it, renewing its lease meanwhile; False when there was none."""

        def renewing(lease: GameLease) -> AbstractContextManager[None]:
            return self._renewing(lambda session: renew_game(session, lease, self.lease), f"arena job {lease.job_id}")

        return player.play_next(self.make, self.course, me, self.lease, renewing, self.attempts)

    def plan_ladders(self) -> bool:
        """With nothing to grade or play: the course's ladders queue their next pairs (when no game
        job waits); whether any was queued."""
        if not self.course.ladders:
            return False
        with self.make.begin() as session:
            return ladders.schedule_idle(session, self.course) > 0

    def work_once(self, me: str, executor: Executor | None = None, spare: bool = False) -> bool:
        """Claim one job and grade it, renewing its lease meanwhile; False when the queue was
        empty (or, ``spare``, while the gradings under way want no more: ``wants_more``). The result
        is written only if the lease still holds (else another worker grades it)."""
        if self.before_claim is not None:
            self.before_claim()
        with self._claiming if spare else nullcontext():
            if spare and not self.wants_more():
                return False
            with self.make.begin() as session:
                lease = claim(session, me, self.lease, self.attempts)
                if lease is None:
                    return False
                sub = session.get(Submission, lease.submission_id)
                assert sub is not None
                filename, content, name = sub.filename, sub.content, sub.assignment
                rerun = sub.change_reason is not None
                assignment = self.course.assignments.get(name)
                total = test_count(assignment) if assignment is not None else None
                progress(session, lease, 0, total)
            with self._lock:  # counted as waiting until its lane is made; a GTP lab's (on no slot) all along
                self._claims[lease.job_id] = None
        try:
            return self._grade(me, executor, lease, assignment, name, filename, content, rerun)
        finally:
            with self._lock:
                self._claims.pop(lease.job_id, None)
            self._hungry.set()

    def _grade(self, me: str, executor: Executor | None, lease: Lease, assignment: Assignment | None, name: str,
               filename: str, content: bytes, rerun: bool) -> bool:  # fmt: skip
        """Grade a claimed job (``work_once``), its tests done written as they come."""
        told = [0.0]

        def on_test(_: str, test: TestResult) -> None:  # every PROGRESS_SECONDS at most, and the first
            moment = time.monotonic()
            if moment - told[0] >= PROGRESS_SECONDS:
                told[0] = moment
                try:
                    with self.make.begin() as session:
                        progress(session, lease, test.index)
                except Exception as e:  # the database away for a moment: the next test's write may reach it
                    self._trouble(f"writing the progress of {lease.submission_id}", e)

        with self._renewing(lambda session: renew(session, lease, self.lease), lease.submission_id):
            try:
                if assignment is None:
                    raise GraderError(f"the course has no assignment {name!r} any more")
                with self._lane(executor, lease.job_id) as on:
                    found: Feedback | None = grade_upload(self.course, assignment, filename, content, on, on_test)
                error = None
            except GraderError as e:  # the grader's or the course's problem, never the student's: not counted
                found, error = None, str(e)
            except Exception as e:  # a bug of the grader's: the student is not charged for it either
                log.exception("grading %s", lease.submission_id)
                found, error = None, f"the grader failed: {type(e).__name__}: {e}"
        if getattr(executor, "lost", None) or (self.stopping.is_set() and (found is None or found.stopped)):
            # the cluster went away mid-grade, or this worker stops: some tests never ran
            why = getattr(executor, "lost", None) or STOPPING
            log.warning("%s: %s; %s is queued again", me, why, lease.submission_id)
            self._persist(me, lambda: self._release(lease))
            return True
        if self._persist(me, lambda: self._write(me, lease, found, error, rerun)) and found is not None:
            if self.on_graded is not None:
                self.on_graded(lease.submission_id)
        return True

    def _release(self, lease: Lease) -> bool:
        with self.make.begin() as session:
            return release(session, lease)

    def _write(self, me: str, lease: Lease, found: Feedback | None, error: str | None, rerun: bool) -> bool:
        """Write a grading's result (or its error), in one transaction, if the lease still holds."""
        with self.make.begin() as session:
            if not finish(session, lease):
                log.warning("%s lost its lease on %s: another worker grades it", me, lease.submission_id)
                return False
            sub = session.get(Submission, lease.submission_id)
            assert sub is not None
            assignment = self.course.assignments.get(sub.assignment)
            sub.graded_at, sub.graded_by, sub.gradings = now(), me, (sub.gradings or 0) + 1
            if found is not None:
                sub.status = GRADED
                sub.plan_digest = self.course.plan_digest(assignment) if assignment is not None else None
                for field in ("total", "max_total", "symbols", "public_symbols", "public_total", "student_text",
                              "full_text", "records", "stopped"):  # fmt: skip
                    setattr(sub, field, getattr(found, field))
                mails.graded(session, self.course, sub)  # sent if and only if the grade is written
            else:
                sub.status, sub.error = FAILED, error
                if not rerun:  # a rerun took none of the student's uploads
                    give_back(session, sub)
        return True

    def _persist(self, me: str, write: Callable[[], T]) -> T:
        """``write`` (a transaction) done, tried again while the database is away (a grade made is
        never thrown away for an outage: its lease holds until it expires, and the write after
        it finds out whether another worker holds the job now). Raises an error of another kind,
        or the outage once this worker stops."""
        while True:
            try:
                return write()
            except Exception as e:
                if outage(e) is None or self.stopping.is_set():
                    raise
                self._trouble(me, e)
                self.stopping.wait(RETRY_SECONDS)

    def _trouble(self, me: str, error: Exception) -> None:
        """Log an error of a worker's: an outage of the database in one line, once until it is
        back; any other error with its traceback."""
        found = outage(error)
        if found is None:
            log.error("worker %s", me, exc_info=error)
            return
        with self._lock:
            first, self._away = not self._away, True
        if first:
            log.warning("worker %s: %s (%s): waiting for it", self.name, found.reason, found.cause)

    def _back(self) -> None:
        if self._away:
            with self._lock:
                was, self._away = self._away, False
            if was:
                log.warning("worker %s: the database answers again: grading goes on", self.name)

    @contextmanager
    def _under_way(self) -> Iterator[None]:
        """A claim and its grading, until the result (or the release) is written: ``close`` waits for it."""
        with self._lock:
            self._gradings += 1
        try:
            yield
        finally:
            with self._lock:
                self._gradings -= 1
                self._lock.notify_all()

    @contextmanager
    def _lane(self, executor: Executor | None, job: int | None = None) -> Iterator[Executor]:
        """Where a grading runs: on ``executor`` (a cluster's client), else on a lane of the
        job slots, closed after it (its staged copy of the upload removed). A sync that
        changed config.yaml's ``jobs`` gets new slots; the old ones close after their last grading."""
        if executor is not None:
            yield executor
            return
        assert self.shared is not None  # no cluster
        with self._lock:
            if self.shared.jobs != jobs(self.course.config):
                self._retired.append(self.shared)
                self.shared = self._slots()
            lane = self.shared.lane()
            self._lanes[lane] = self.shared
            if job in self._claims:
                self._claims[job] = lane  # its slot time tells the spare threads whether it is long
            if self.stopping.is_set():  # claimed as close() began: given back at once
                lane.stop.set(STOPPING)
        try:
            with lane:
                yield lane
        finally:
            with self._lock:
                del self._lanes[lane]
                idle = [ex for ex in self._retired if ex not in self._lanes.values()]
                self._retired = [ex for ex in self._retired if ex not in idle]
            for ex in idle:
                ex.close()

    @contextmanager
    def _renewing(self, renewed: Callable[[Session], bool], what: str) -> Iterator[None]:
        """Renew a lease (``renewed`` in a transaction: False once it is lost) every third of
        its length while the block runs."""
        done = threading.Event()

        def keep() -> None:
            while not done.wait(self.lease / 3):
                try:
                    with self.make.begin() as session:
                        if not renewed(session):
                            return  # lost: finish() will write nothing
                except Exception as e:  # the database gone for a moment: the next renewal may reach it
                    self._trouble(f"renewing the lease on {what}", e)

        thread = threading.Thread(target=keep, name="grader-lease", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
