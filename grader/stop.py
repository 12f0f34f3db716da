"""A run's stop switch: Ctrl-C, SIGTERM or a library caller stops one run, and only that run."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Callable, Hashable, Iterator

SIGNAL_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
STARTING = "Interrupted (Ctrl-C) while the grader was starting: nothing was run."  # Ctrl-C while the code loads


def exit_status(reason: str) -> int:
    """The exit status of a run stopped for ``reason``: 128 plus the number of the signal it
    names, so 130 for Ctrl-C and 143 for SIGTERM (130 for any other stop)."""
    for sig, name in SIGNAL_NAMES.items():
        if f"({name})" in reason:
            return 128 + sig
    return 128 + signal.SIGINT


class Stopped(Exception):
    """Raised inside work that gave up because its run was stopped; never a verdict."""


class Stop:
    """Once set, the run's scripts are killed, no new script starts and its solvers give up.

    Each run has its own: setting one leaves every other run in the process untouched, and a
    new run after an interrupted one starts with a fresh switch.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._kills: dict[Hashable, Callable[[], None]] = {}
        self.reason: str | None = None

    def set(self, reason: str = "interrupted") -> None:
        """Stop the run now: kill what is running (the first reason given is kept)."""
        with self._lock:
            if not self._event.is_set():
                self.reason = reason
                self._event.set()
            kills = list(self._kills.values())
        for kill in kills:
            kill()

    def is_set(self) -> bool:
        return self._event.is_set()

    __call__ = is_set  # a Stop is also the ``should_stop`` callable that solvers poll

    def watch(self, key: Hashable, kill: Callable[[], None]) -> bool:
        """Call ``kill`` when the run stops; False (and nothing kept) if it has stopped already."""
        with self._lock:
            if self._event.is_set():
                return False
            self._kills[key] = kill
            return True

    def unwatch(self, key: Hashable) -> None:
        with self._lock:
            self._kills.pop(key, None)

    def check(self) -> None:
        """Raise ``Stopped`` if the run was stopped."""
        if self._event.is_set():
            raise Stopped(self.reason)


@contextlib.contextmanager
def on_signals(stop: Stop) -> Iterator[Stop]:
    """While inside, Ctrl-C and SIGTERM set ``stop`` ('interrupted (Ctrl-C)') instead of
    raising KeyboardInterrupt wherever the main thread happens to be: the run then ends at
    its next check with what finished, however busy it was (writing a record, an export).

    The handlers only write the signal's number to a pipe (no lock is taken in a handler); a
    thread reads it and sets the stop. Outside the main thread this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    read, write = os.pipe()
    os.set_blocking(write, False)

    def handler(signum: int, frame: object) -> None:
        with contextlib.suppress(OSError):
            os.write(write, bytes([signum]))

    def watch() -> None:
        while (got := os.read(read, 1)) and got != b"\0":
            stop.set(f"interrupted ({SIGNAL_NAMES.get(signal.Signals(got[0]), 'signal')})")

    previous = {s: signal.signal(s, handler) for s in SIGNAL_NAMES}
    watcher = threading.Thread(target=watch, name="grader-signals", daemon=True)
    watcher.start()
    try:
        yield stop
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        os.set_blocking(write, True)
        os.write(write, b"\0")
        watcher.join()
        os.close(read)
        os.close(write)
