"""Running one untrusted script under a time limit, keeping control of it.

The script runs in its own session (process group) in a fresh temporary directory with a
minimal environment and stdin at end-of-file. Its stdout goes to a sink as it arrives (the
caller scans it); a tail of stdout and of stderr is kept for diagnoses. At the time limit
the whole process group is killed; output printed before then still counts.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, Sequence

_READ = 1 << 16
_TAIL = 4096  # bytes of stdout and of stderr kept for showing
_GRACE = 0.2  # seconds to collect output still in the pipes once the script has ended

# The script's environment: nothing of the grader's, only what interpreters need.
_PASS_THROUGH = ("PATH", "LANG", "LC_ALL", "JAVA_HOME", "SYSTEMROOT")


@dataclass(frozen=True)
class RunResult:
    """What happened to one run of a script."""

    exit_code: int | None  # None when the script could not be started
    timed_out: bool
    wall_seconds: float
    cpu_seconds: float
    stdout_tail: str = ""
    stderr_tail: str = ""
    start_error: str | None = None  # why the script could not be started

    @property
    def signal(self) -> int | None:
        """The signal that ended the script, if one did."""
        return -self.exit_code if self.exit_code is not None and self.exit_code < 0 else None

    @property
    def crashed(self) -> bool:
        """Ended on its own with a failure: non-zero exit or a signal not sent by the grader."""
        return self.start_error is not None or (not self.timed_out and self.exit_code not in (0, None))

    def describe(self) -> str:
        """How the run ended, in words ('' for a clean exit)."""
        if self.start_error:
            return self.start_error
        if self.timed_out:
            return f"timed out after {self.wall_seconds:.1f} s and was killed"
        if self.signal:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            return f"killed by {name}"
        if self.exit_code:
            return f"exited with code {self.exit_code}"
        return ""


def script_env(workdir: str) -> dict[str, str]:
    """A minimal environment: PATH and locale, a private HOME and TMPDIR, unbuffered Python."""
    env = {k: os.environ[k] for k in _PASS_THROUGH if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        HOME=workdir,
        TMPDIR=workdir,
        PYTHONUNBUFFERED="1",  # a killed script's printed lines are not lost in its buffer
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONIOENCODING="utf-8",
    )
    return env


def run(
    command: Sequence[str],
    time_limit: float,
    on_stdout: Callable[[bytes], None] | None = None,
) -> RunResult:
    """Run ``command`` in a fresh temporary directory; stop it at ``time_limit`` seconds."""
    workdir = tempfile.mkdtemp(prefix="grader-")
    try:
        return _run(list(command), time_limit, on_stdout, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run(command: list[str], time_limit: float, on_stdout, workdir: str) -> RunResult:
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            env=script_env(workdir),
            start_new_session=True,
            bufsize=0,
        )
    except OSError as e:
        return RunResult(None, False, 0.0, 0.0, start_error=f"cannot start {command[0]!r}: {e.strerror or e}")

    out_tail, err_tail = bytearray(), bytearray()
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")  # type: ignore[arg-type]
    sel.register(proc.stderr, selectors.EVENT_READ, "err")  # type: ignore[arg-type]
    pidfd = os.pidfd_open(proc.pid)
    sel.register(pidfd, selectors.EVENT_READ, "exit")
    deadline = start + time_limit
    timed_out = False

    def pump(until: float) -> bool:
        """Read until everything is closed (True) or the clock reaches ``until`` (False)."""
        while sel.get_map():
            remaining = until - time.monotonic()
            if remaining <= 0:
                return False
            for key, _ in sel.select(remaining):
                if key.data == "exit":  # the script ended: collect what is left in the pipes
                    sel.unregister(pidfd)
                    until = min(until, time.monotonic() + _GRACE)
                    continue
                data = os.read(key.fd, _READ)
                if not data:
                    sel.unregister(key.fileobj)
                elif key.data == "out":
                    if on_stdout:
                        on_stdout(data)
                    _keep_tail(out_tail, data)
                else:
                    _keep_tail(err_tail, data)
        return True

    try:
        if not pump(deadline):
            timed_out = pidfd in sel.get_map()  # the script itself, not a leftover child, was running
            _kill_group(proc.pid)
            if pidfd in sel.get_map():
                sel.unregister(pidfd)
            pump(time.monotonic() + _GRACE)  # lines printed before the kill still count
    finally:
        _kill_group(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        os.close(pidfd)
        sel.close()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
        proc.returncode = os.waitstatus_to_exitcode(status)
    return RunResult(
        exit_code=proc.returncode,
        timed_out=timed_out,
        wall_seconds=wall,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        stdout_tail=out_tail.decode("utf-8", "replace"),
        stderr_tail=err_tail.decode("utf-8", "replace"),
    )


def _keep_tail(buf: bytearray, data: bytes) -> None:
    buf += data
    if len(buf) > 2 * _TAIL:
        del buf[:-_TAIL]


def _kill_group(pid: int) -> None:
    """SIGKILL every process in the script's group (the script's own session)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
