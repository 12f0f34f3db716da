"""A run's stop switch: Ctrl-C, SIGTERM or a library caller stops one run, and only that run."""

from __future__ import annotations

import threading
from typing import Callable, Hashable


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
