"""A run's stop switch: Ctrl-C, SIGTERM or a library caller stops one run, and only that run."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
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


def interrupt_reason(error: BaseException) -> str:
    """'interrupted (Ctrl-C)', or the signal named in the KeyboardInterrupt (SIGTERM)."""
    return f"interrupted ({error.args[0] if error.args else 'Ctrl-C'})"


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
        self._reason: str | None = None
        self._signalled: str | None = None  # set by a signal handler, at once and without a lock

    @property
    def reason(self) -> str | None:
        """Why the run was stopped (the first reason given); None while it runs."""
        return self._reason if self._reason is not None else self._signalled

    def set(self, reason: str = "interrupted") -> None:
        """Stop the run now: kill what is running (the first reason given is kept)."""
        with self._lock:
            if not self._event.is_set():
                self._reason = self._signalled or reason
                self._event.set()
            kills = list(self._kills.values())
        for kill in kills:
            kill()

    def _signal(self, reason: str) -> None:
        """A signal handler's half of ``set``: the switch reads as set from the handler's next
        instruction on, so no check made after the signal misses it; it takes no lock (the
        interrupted code may hold it), and the kills are left to ``set``, which follows."""
        if self._signalled is None:
            self._signalled = reason

    def is_set(self) -> bool:
        return self._signalled is not None or self._event.is_set()

    __call__ = is_set  # a Stop is also the ``should_stop`` callable that solvers poll

    def watch(self, key: Hashable, kill: Callable[[], None]) -> bool:
        """Call ``kill`` when the run stops; False (and nothing kept) if it has stopped already."""
        with self._lock:
            if self.is_set():
                return False
            self._kills[key] = kill
            return True

    def unwatch(self, key: Hashable) -> None:
        with self._lock:
            self._kills.pop(key, None)

    def check(self) -> None:
        """Raise ``Stopped`` if the run was stopped."""
        if self.is_set():
            raise Stopped(self.reason)


# The runs that answer SIGINT and SIGTERM now (``on_signals``): each one's stop, and the pipe
# its watcher thread reads. Only the main thread changes it or reads it (in the handler).
_runs: dict[object, tuple[Stop, int]] = {}


def _interrupted(signum: int) -> KeyboardInterrupt:
    """The KeyboardInterrupt a signal is outside any run: plain for SIGINT, as Python's own,
    and KeyboardInterrupt('SIGTERM') for SIGTERM (``interrupt_reason`` reads it)."""
    return KeyboardInterrupt() if signum == signal.SIGINT else KeyboardInterrupt(signal.Signals(signum).name)


def _handler(signum: int, frame: object) -> None:
    """SIGINT and SIGTERM: the runs inside ``on_signals`` stop (their switches read as set at
    once; their watchers kill what runs), else a KeyboardInterrupt where the main thread is."""
    runs = list(_runs.values())
    if not runs:
        raise _interrupted(signum)
    reason = f"interrupted ({SIGNAL_NAMES.get(signal.Signals(signum), 'signal')})"
    for stop, write in runs:
        stop._signal(reason)
        with contextlib.suppress(OSError):
            os.write(write, bytes([signum]))


def _unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """``sys.unraisablehook``: a KeyboardInterrupt that Python swallowed is kept, to be answered.

    Python prints and drops an exception raised where nothing can catch it: in a garbage
    collector's callback (hypothesis installs one), a finalizer (``__del__``), a weakref's
    callback. A signal whose handler ran there was lost: the solve it was to stop went on.
    Kept here, it stops the next run to begin (``on_signals``) or ends the command
    (``take_swallowed``); any other exception goes to the hook there was before."""
    error = unraisable.exc_value
    if isinstance(error, KeyboardInterrupt):
        _swallowed.append(error)
        return
    _previous_hook(unraisable)


_swallowed: list[KeyboardInterrupt] = []  # signals' KeyboardInterrupts Python dropped, not answered yet


def take_swallowed() -> KeyboardInterrupt | None:
    """The KeyboardInterrupt of a signal Python swallowed (``_unraisable``) and nothing has
    answered yet, taken: the command then ends as interrupted. None: there is none."""
    return _swallowed.pop() if _swallowed else None


_previous_hook = sys.unraisablehook


def install() -> None:
    """From now on SIGINT and SIGTERM stop the runs inside ``on_signals``, and are a
    KeyboardInterrupt anywhere else: SIGINT too when it came ignored (a job started in the
    background by a script), as a run answers it anyway, and never one swallowed where Python
    drops exceptions (``_unraisable``). The grader's first instruction."""
    global _previous_hook
    for s in SIGNAL_NAMES:
        signal.signal(s, _handler)
    if sys.unraisablehook is not _unraisable:
        _previous_hook, sys.unraisablehook = sys.unraisablehook, _unraisable


@contextlib.contextmanager
def answering_signals() -> Iterator[None]:
    """``install`` while inside (the handlers before are put back at the end, unless they were
    ``install``'s already). Outside the main thread this does nothing."""
    if threading.current_thread() is not threading.main_thread() or all(
        signal.getsignal(s) is _handler for s in SIGNAL_NAMES
    ):
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNAL_NAMES}
    hook = sys.unraisablehook
    install()
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        sys.unraisablehook = hook


@contextlib.contextmanager
def on_signals(stop: Stop) -> Iterator[Stop]:
    """While inside, Ctrl-C and SIGTERM set ``stop`` ('interrupted (Ctrl-C)') instead of
    raising KeyboardInterrupt wherever the main thread happens to be: the run then ends at
    its next check with what finished, however busy it was (writing a record, an export).

    No signal is lost at either end. Before the run is inside, and once it is out, a signal
    is a KeyboardInterrupt (``install``: one handler all along, never swapped at the run's
    edges); inside, the switch reads as set from the handler on, so any check after the
    signal sees it. A run that returns although a signal set its switch (the signal came
    after its last check) ends in KeyboardInterrupt: the caller hears of it all the same.

    The handler only marks the switch and writes the signal's number to a pipe (no lock is
    taken in a handler); a thread reads it and sets the stop, which kills what runs. Outside
    the main thread this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    read, write = os.pipe()
    os.set_blocking(write, False)

    def watch() -> None:
        while got := os.read(read, 1):  # b'': the run is over (the write end is closed)
            stop.set(f"interrupted ({SIGNAL_NAMES.get(signal.Signals(got[0]), 'signal')})")

    watcher = threading.Thread(target=watch, name="grader-signals", daemon=True)
    watcher.start()
    key = object()
    try:
        with answering_signals():
            _runs[key] = (stop, write)
            swallowed = take_swallowed()
            if swallowed is not None:  # a signal Python dropped before the run began: it stops it
                stop._signal(interrupt_reason(swallowed))
                stop.set(interrupt_reason(swallowed))
            try:
                signal_point("run")
                yield stop
                signal_point("run-returned")
            finally:
                del _runs[key]  # from here a signal is a KeyboardInterrupt again
            signal_point("run-end")
            if stop._signalled is not None:  # it came after the run's last look at its switch
                raise KeyboardInterrupt(*(() if "Ctrl-C" in stop._signalled else ("SIGTERM",)))
    finally:
        try:
            os.close(write)
        finally:
            watcher.join()
            os.close(read)


# Tests only: the point of the grader's start, run and end at which it sends itself a signal
# ($GRADER_TEST_SIGNAL_AT: 'POINT' for SIGINT, 'POINT:SIGTERM'), read once at import.
_SIGNAL_AT = os.environ.get("GRADER_TEST_SIGNAL_AT", "")


def signal_point(name: str) -> None:
    """Tests: send this process the signal ``$GRADER_TEST_SIGNAL_AT`` asks for at ``name`` (a
    point of a command's start, run or end where no signal may be lost); else nothing."""
    if _SIGNAL_AT and _SIGNAL_AT.partition(":")[0] == name:
        os.kill(os.getpid(), signal.Signals[_SIGNAL_AT.partition(":")[2] or "SIGINT"])
