"""The one executor: every unit of work (a test, a game, a proof position) runs through it.

Its interface is small: ``submit(key, task)``, then ``results()`` yields ``(key, value)`` as
tasks finish (more may be submitted while iterating), and ``cancel(keys)`` drops tasks not
yet started. A task is a picklable callable taking a ``Worker``: what it gets where it runs.
``LocalExecutor`` runs tasks on threads; a cluster backend implements the same interface.

Stopping is per executor: ``executor.stop`` is its run's ``Stop``. Leaving a ``with`` block
on an exception (Ctrl-C arrives in the main thread as KeyboardInterrupt) sets it, which kills
every running script; ``drain()`` then yields what finished meanwhile.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import os
import queue
import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterable, Iterator

from ..engines.fairness import assign_slot
from ..engines.isolation import Sandbox, choose, claim_uid, release_uid
from ..engines.resident import close_this_thread
from ..engines.runner import dedicate_this_thread
from ..engines.scripts import RunSettings, Stage
from ..stop import Stop, Stopped, interrupt_reason


class Worker:
    """What a task gets where it runs: its job slot, its run's Stop, staged scripts, solvers."""

    host: str | None = None  # the machine's name on a cluster worker (recorded with each run)

    def __init__(self, slot: int, stop: Stop, stage: Stage):
        self.slot, self.stop, self.stage = slot, stop, stage
        self._cache: dict[Any, Any] = {}
        self._uid: int | None = None

    def sandbox(self, settings: RunSettings) -> Sandbox:
        """The sandbox of this worker's runs: the mechanism the settings ask for (resolved on
        this machine), and as root the worker's own unprivileged uid."""
        mechanism = choose(settings.isolation, settings.python)
        if os.geteuid() != 0 or mechanism == "none":
            return Sandbox(mechanism)
        if self._uid is None:
            self._uid = claim_uid()
        return Sandbox(mechanism, self._uid)

    def here(self, settings: RunSettings) -> RunSettings:
        """The settings as scripts run with them on this machine (a cluster worker may differ)."""
        return settings

    def release(self) -> None:
        """Give back this worker's uid (its runs are over)."""
        if self._uid is not None:
            release_uid(self._uid)
            self._uid = None

    def cached(self, key: Any, make: Callable[[], Any]) -> Any:
        """A value kept for this worker's later tasks (a solver and its table, say)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


Task = Callable[[Worker], Any]
TICK = 0.25  # seconds between the job slots' looks at whether a run turned long (JobSlots.long)
SLOTS_CLOSED = "stopped: its job slots were closed"


class Executor(ABC):
    """Runs tasks and hands back their results as they finish."""

    def __init__(self, stop: Stop | None = None):
        self.stop = stop or Stop()

    @abstractmethod
    def submit(self, key: Any, task: Task) -> None:
        """Queue ``task``; its result comes back from ``results()`` under ``key``."""

    @abstractmethod
    def cancel(self, keys: Iterable[Any]) -> set[Any]:
        """Drop the tasks of these keys that have not started (started ones finish); returns
        the keys dropped."""

    @abstractmethod
    def results(self) -> Iterator[tuple[Any, Any]]:
        """``(key, value)`` of each task as it finishes, until none is left. A task stopped
        by the run's Stop yields nothing; a task's own error is raised here."""

    @abstractmethod
    def pending(self) -> int:
        """Tasks submitted whose results have not been yielded."""

    def drain(self) -> Iterator[tuple[Any, Any]]:
        """After a stop: drop what has not started and yield what still finishes."""
        self.cancel(self._keys())
        yield from self.results()

    @abstractmethod
    def _keys(self) -> list[Any]: ...

    def close(self) -> None:
        """Release the workers; running tasks are waited for (stop first to end them now)."""

    def __enter__(self) -> Executor:
        return self

    def abort(self, error: BaseException) -> None:
        """A run on this executor failed with ``error`` (Ctrl-C too): stop it, start nothing more."""
        self.stop.set(interrupt_reason(error) if isinstance(error, KeyboardInterrupt) else "stopped by an error")
        self.cancel(self._keys())

    def __exit__(self, kind, error, tb) -> None:
        if error is not None:
            self.abort(error)
        self.close()


@contextlib.contextmanager
def using(executor: Executor | None, jobs: int, stop: Stop | None = None) -> Iterator[Executor]:
    """The executor of one run: the caller's, left open for its next run (its Stop is the
    caller's switch: once set, every run on it ends at once); or a LocalExecutor of ``jobs``
    threads stopped by ``stop`` (the caller's switch, else its own), made and closed here."""
    if executor is None:
        with LocalExecutor(jobs, stop) as ex:
            yield ex
        return
    try:
        yield executor
    except BaseException as error:
        executor.abort(error)
        raise


class _Share:
    """One run's part of the job slots: its tasks not yet started, and the slot time it has had."""

    def __init__(self, order: int):
        self.order = order  # runs with equal slot time: the older first
        self.waiting: collections.deque[tuple[Future, Task, Stop, Stage]] = collections.deque()
        self.used = 0.0  # seconds of its tasks that finished
        self.running: dict[Future, float] = {}  # its tasks running: when each started

    def attained(self, moment: float) -> float:
        """Slot seconds this run has had: its finished tasks' and its running ones' so far."""
        return self.used + sum(moment - start for start in self.running.values())


class JobSlots:
    """The job slots of a LocalExecutor and its lanes: ``jobs`` threads of this process, each
    one ``Worker`` (its uid, cgroups, resident sandbox and cached values), running the tasks
    of every run on them. A slot that frees takes the next task of the run that has had the
    least slot time so far (its finished and running tasks'; the older run on a tie): one run's
    tasks come first come, first served, while a run whose tasks are slow (a script timing out on
    every test) leaves the slots to the runs beside it instead of holding them (as a fair
    scheduler picks the task with the least run time). With ``long`` (seconds: a portal's
    gradings), a run that has had that much slot time (its running tasks' so far counted) is
    long: the long runs' tasks, the running ones too, hold at most ``jobs - 1`` of the ``jobs``
    slots (all of them with one slot), and a short run's task is always due before a long
    one's, so that a task held to its time limit (a script timing out on every test) never
    keeps the short runs from a slot for longer than it takes its run to be long (a running
    task is never stopped to free its slot). No more than ``jobs`` tasks ever run at once: a
    test's time is measured on the slot's own cores, never on cores shared with another slot. A slot with nothing queued gives back
    its resident sandbox (``grader.engines.resident``), unless ``keep_sandboxes``: slots kept
    open for run after run (a portal worker's, across uploads) keep them until they close, as a
    class's run keeps them from one student to the next."""

    def __init__(self, jobs: int, keep_sandboxes: bool = False, long: float | None = None):
        self.jobs, self.keep_sandboxes, self.long = max(1, jobs), keep_sandboxes, long
        self.long_cap = max(1, self.jobs - 1)  # the slots the long runs may hold: one is kept for the short
        self._pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="grader-job")
        self._local = threading.local()
        self._numbers = itertools.count()
        self._workers: list[Worker] = []
        self._queued = 0  # tasks submitted and not yet started
        self._shares: dict[Stage, _Share] = {}  # each run's (its Stage is its own)
        self._orders = itertools.count()
        self._closed = False
        self._lock = threading.Lock()
        self.on_drained: Callable[[], object] | None = None  # told when a run's last waiting task starts
        if long is not None:  # a run turning long frees short slots with no task ending: looked at a tick
            threading.Thread(target=self._tick, name="grader-job-tick", daemon=True).start()

    def submit(self, task: Task, stop: Stop, stage: Stage) -> Future:
        """Queue ``task`` of the run stopped by ``stop`` whose scripts ``stage`` holds."""
        fut: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new tasks after the job slots closed")
            share = self._shares.get(stage)
            if share is None:
                share = self._shares[stage] = _Share(next(self._orders))
            share.waiting.append((fut, task, stop, stage))
            self._queued += 1
            self._pool.submit(self._next)  # one pick for each task: a slot takes whichever is due then
        return fut

    def cancel(self, fut: Future) -> bool:
        """Drop a queued task; False if it has started."""
        with self._lock:
            if not fut.cancel():
                return False
            for share in self._shares.values():
                for entry in share.waiting:
                    if entry[0] is fut:
                        share.waiting.remove(entry)
                        self._queued -= 1
                        return True
        return True  # taken off its queue by a slot already, which skips it

    def attained(self, stage: Stage) -> float:
        """The slot seconds the run of ``stage`` has had so far."""
        with self._lock:
            share = self._shares.get(stage)
            return share.attained(time.monotonic()) if share is not None else 0.0

    def waiting(self, stage: Stage) -> int:
        """The tasks of the run of ``stage`` not started yet."""
        with self._lock:
            share = self._shares.get(stage)
            return len(share.waiting) if share is not None else 0

    def forget(self, stage: Stage) -> None:
        """The run of ``stage`` is over (its lane closed): its share is dropped."""
        with self._lock:
            share = self._shares.get(stage)
            if share is not None and not share.waiting and not share.running:
                del self._shares[stage]

    def _tick(self) -> None:
        """Every TICK seconds until the slots close: a slot for the task due, if one is due now."""
        while True:
            time.sleep(TICK)
            with self._lock:
                if self._closed:
                    return
                due = self._queued > 0 and self._pick(time.monotonic()) is not None
                if due:
                    self._pool.submit(self._next)

    def _pick(self, moment: float) -> tuple[_Share, bool] | None:
        """The run whose task is due now, and whether it is long (under the lock): while a slot
        is free, the short run with the least slot time, else the long one with the least while
        the long runs hold fewer than ``long_cap`` slots."""
        kinds = {s: self.long is not None and s.attained(moment) >= self.long for s in self._shares.values()}
        running = {kind: sum(len(s.running) for s in kinds if kinds[s] == kind) for kind in (False, True)}
        if running[False] + running[True] >= self.jobs:
            return None
        for long, room in ((False, True), (True, running[True] < self.long_cap)):
            mine = [s for s in kinds if s.waiting and kinds[s] == long]
            if mine and room:
                return min(mine, key=lambda s: (s.attained(moment), s.order)), long
        return None

    def _next(self) -> None:
        """Run the tasks due, one after another, until none is (``_pick``)."""
        while True:
            with self._lock:
                moment = time.monotonic()
                picked = self._pick(moment)
                if picked is None:
                    return
                share, _ = picked
                fut, task, stop, stage = share.waiting.popleft()
                self._queued -= 1
                drained = not share.waiting
                if not fut.set_running_or_notify_cancel():
                    continue  # cancelled as it was taken
                share.running[fut] = moment
            if drained and self.on_drained is not None:
                self.on_drained()
            result: Any = None
            error: BaseException | None = None
            try:
                result = self._run(task, stop, stage)
            except BaseException as e:
                error = e
            with self._lock:  # the run's books kept before it is told (its lane may close and forget it then)
                share.used += time.monotonic() - share.running.pop(fut)
            if error is None:
                fut.set_result(result)
            else:
                fut.set_exception(error)

    def _run(self, task: Task, stop: Stop, stage: Stage) -> Any:
        try:
            worker = self._worker(stop, stage)
            stop.check()
            return task(worker)
        finally:
            with self._lock:
                draining = self.jobs > 1 and self._queued == 0 and not self.keep_sandboxes
            if draining:  # nothing left for this slot now: it gives back its resident sandbox
                close_this_thread()

    def _worker(self, stop: Stop, stage: Stage) -> Worker:
        """This slot's Worker, serving the run of ``stop`` and ``stage`` now."""
        worker = getattr(self._local, "worker", None)
        if worker is None:
            worker = self._local.worker = Worker(next(self._numbers), stop, stage)
            with self._lock:
                self._workers.append(worker)
            dedicate_this_thread()
            assign_slot(worker.slot % self.jobs, self.jobs)  # its programs pinned to the slot's cores
        worker.stop, worker.stage = stop, stage
        return worker

    def close(self) -> None:
        """End the threads once their tasks are done (queued ones are dropped); give back the uids."""
        with self._lock:
            self._closed = True
            dropped = [entry[0] for share in self._shares.values() for entry in share.waiting]
            for share in self._shares.values():
                share.waiting.clear()
            self._queued = 0
        for fut in dropped:
            fut.cancel()
        self._pool.shutdown(wait=True, cancel_futures=True)
        for worker in self._workers:
            worker.release()
        self._workers.clear()


class LocalExecutor(Executor):
    """Tasks on ``jobs`` threads of this process; each thread is one worker (one job slot).
    ``lane()`` gives another run the same slots at the same time, with results of its own."""

    def __init__(self, jobs: int, stop: Stop | None = None, keep_sandboxes: bool = False, long: float | None = None):
        super().__init__(stop)
        self._begin(JobSlots(jobs, keep_sandboxes, long))

    def _begin(self, slots: JobSlots) -> None:
        self.slots = slots
        self.submitted = 0  # tasks submitted so far
        self._futures: dict[Future, Any] = {}
        self._finished: queue.SimpleQueue[Future] = queue.SimpleQueue()
        self._stage = Stage()

    @property
    def jobs(self) -> int:
        return self.slots.jobs

    def lane(self) -> Lane:
        """A run's own view of these job slots, beside this executor's runs and other lanes':
        its Stop, staged scripts and results are its own; its tasks queue with theirs."""
        return Lane(self.slots)

    def submit(self, key: Any, task: Task) -> None:
        fut = self.slots.submit(task, self.stop, self._stage)
        self.submitted += 1
        self._futures[fut] = key
        fut.add_done_callback(self._finished.put)

    def cancel(self, keys: Iterable[Any]) -> set[Any]:
        keys, dropped = set(keys), set()
        for fut, key in list(self._futures.items()):
            if key in keys and self.slots.cancel(fut):
                del self._futures[fut]
                dropped.add(key)
        return dropped

    def _keys(self) -> list[Any]:
        return list(self._futures.values())

    def pending(self) -> int:
        return len(self._futures)

    def results(self) -> Iterator[tuple[Any, Any]]:
        # A queue, not concurrent.futures.wait: Ctrl-C raises KeyboardInterrupt wherever the
        # main thread is, and wait() can then leave its futures' locks held (a deadlock).
        while self._futures:
            try:
                fut = self._finished.get(timeout=0.5)
            except queue.Empty:  # one taken off the queue as Ctrl-C struck is found here
                done = [f for f in list(self._futures) if f.done()]
                if not done:
                    continue
                fut = done[0]
            key = self._futures.pop(fut, None)
            if key is not None and fut.cancelled():  # not by cancel(): its slots closed under the run
                self.stop.set(SLOTS_CLOSED)
            if key is None or fut.cancelled() or isinstance(fut.exception(), Stopped):
                continue  # dropped by cancel(), or stopped
            yield key, fut.result()

    def close(self) -> None:
        self.slots.close()
        self._stage.close()


class Lane(LocalExecutor):
    """One run on job slots shared with others (``LocalExecutor.lane``). Closing it waits for
    its tasks still running and removes its staged scripts; the slots stay open."""

    def __init__(self, slots: JobSlots):
        Executor.__init__(self)
        self._begin(slots)

    def close(self) -> None:
        self.cancel(self._keys())
        while not all(fut.done() for fut in self._futures):  # polled, as results() does: no wait()
            with contextlib.suppress(queue.Empty):
                self._finished.get(timeout=0.5)
        self.slots.forget(self._stage)
        self._stage.close()

    def attained(self) -> float:
        """The slot seconds this run has had so far (``JobSlots.attained``)."""
        return self.slots.attained(self._stage)

    def waiting(self) -> int:
        """This run's tasks not started yet."""
        return self.slots.waiting(self._stage)
