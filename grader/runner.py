"""Running one untrusted script under limits, keeping control of it whatever it does.

Each run gets a fresh temporary directory (removed afterwards), a minimal environment,
stdin at end-of-file, and its own session (process group). Resource limits bound its
memory, CPU seconds, processes and file sizes; where a pids cgroup (v1) is writable (Linux,
as root) the scripts are also born in one, which caps processes even for root and finds
every descendant. Stdout goes to a sink as it arrives (the caller scans it, keeping what it
needs) up to a byte limit; a tail of stdout and stderr is kept for diagnoses.

At the end of a run, at the wall-clock limit, or on ``kill_all()`` (Ctrl-C), everything the
script started is killed: its process group, its cgroup, and any orphan it left behind
(the grader is a child subreaper, so orphans become its children and are reaped).
"""

from __future__ import annotations

import atexit
import ctypes
import itertools
import math
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from .errors import GraderError

_READ = 1 << 16
_TAIL = 4096  # bytes of stdout and of stderr kept for showing
_GRACE = 0.2  # seconds to collect output still in the pipes once the script has ended
_PASS_THROUGH = ("PATH", "LANG", "LC_ALL", "JAVA_HOME", "SYSTEMROOT")
ISOLATIONS = ("none", "unshare", "bwrap")


@dataclass(frozen=True)
class Limits:
    """What one run of a script may use. None: no limit of that kind."""

    wall_seconds: float = 10.0
    cpu_seconds: float | None = 60.0
    memory_mb: int | None = 2048  # address space, so allocations fail beyond it
    processes: int | None = 64  # processes and threads at once
    output_bytes: int | None = 64 * 2**20  # stdout read before the script is stopped; also the largest file it may write


@dataclass(frozen=True)
class RunResult:
    """What happened to one run of a script."""

    exit_code: int | None  # negative: killed by that signal; None: never started
    timed_out: bool
    wall_seconds: float
    cpu_seconds: float
    stdout_tail: str = ""
    stderr_tail: str = ""
    start_error: str | None = None  # why the script could not be started
    output_limited: bool = False  # stopped for printing more than the output limit
    stdout_bytes: int = 0
    interrupted: bool = False  # stopped by kill_all() (Ctrl-C): not a verdict on the script
    cpu_limited: bool = False

    @property
    def signal(self) -> int | None:
        """The signal that ended the script, if one did."""
        return -self.exit_code if self.exit_code is not None and self.exit_code < 0 else None

    @property
    def crashed(self) -> bool:
        """Ended on its own with a failure: non-zero exit, or a signal the grader did not send."""
        if self.start_error is not None:
            return True
        if self.timed_out or self.output_limited or self.interrupted:
            return False
        return self.exit_code not in (0, None)

    def describe(self) -> str:
        """How the run ended, in words ('' for a clean exit)."""
        if self.start_error:
            return self.start_error
        if self.interrupted:
            return "was interrupted"
        if self.output_limited:
            return f"was stopped after printing more than {_size(self.stdout_bytes)} (limits.output_bytes)"
        if self.timed_out:
            return f"timed out after {self.wall_seconds:.1f} s and was killed"
        if self.cpu_limited:
            return f"ran out of CPU time ({self.cpu_seconds:.1f} s, limits.cpu_seconds) and was killed"
        if self.signal:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            return f"was killed by {name}"
        if self.exit_code:
            return f"exited with code {self.exit_code}"
        return ""


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"


# --- the environment a script sees ------------------------------------------------


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


_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")

# Runs inside unshare's new mount namespace: a tmpfs root holding the system folders, the
# extra folders given (read-only) and the test directory (read-write), then chroot into it.
_UNSHARE_SETUP = r"""
set -e
root=$1; work=$2; shift 2
mount -t tmpfs -o mode=755 grader-root "$root"
ro() { mkdir -p "$root$1"; mount --rbind "$1" "$root$1"; mount -o remount,bind,ro "$root$1"; }
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc /opt; do
  if [ -L "$d" ]; then ln -s "$(readlink "$d")" "$root$d"; elif [ -d "$d" ]; then ro "$d"; fi
done
mkdir -p "$root/proc" "$root/dev" "$root/tmp"
mount -t proc proc "$root/proc"
for n in null zero full random urandom; do touch "$root/dev/$n"; mount --bind "/dev/$n" "$root/dev/$n"; done
mount -t tmpfs -o mode=1777 grader-tmp "$root/tmp"
while [ "$1" != "--" ]; do ro "$1"; shift; done
shift
mkdir -p "$root$work"; mount --bind "$work" "$root$work"
exec chroot "$root" /usr/bin/env --chdir="$work" "$@"
"""


def _extra_dirs(command: Sequence[str]) -> list[str]:
    """Folders the script needs beyond the system ones: the interpreter's and the script's."""
    wanted = {sys.prefix, sys.base_prefix}
    wanted |= {str(Path(c).resolve().parent) for c in command if os.path.isabs(c) and os.path.exists(c)}
    covered = [d for d in _SYSTEM_DIRS if os.path.exists(d)]
    out: list[str] = []
    for d in sorted(wanted, key=len):  # parents first, so nested folders are skipped
        real = os.path.realpath(d)
        if os.path.isdir(real) and not any(real == c or real.startswith(c.rstrip("/") + "/") for c in covered + out):
            out.append(real)
    return out


def isolation_prefix(isolation: str, command: Sequence[str], workdir: str) -> list[str]:
    """The command that runs ``command`` under ``isolation`` ('none', 'unshare', 'bwrap').

    Both tools cut the network, give the script its own process namespace, and show it a
    file system of only the system folders, the interpreter's and script's folders
    (read-only) and the test directory. Raises GraderError when the tool is missing.
    """
    if isolation == "none":
        return list(command)
    tool = shutil.which(isolation)
    if tool is None:
        package = "bubblewrap" if isolation == "bwrap" else "util-linux"
        raise GraderError(
            f"isolation '{isolation}' needs the '{isolation}' command, which is not installed: install it "
            f"(Debian: apt-get install {package}), set 'isolation: none', or allow 'isolation_fallback: true'"
        )
    extra = _extra_dirs(command)
    if isolation == "unshare":
        user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
        return [
            tool, *user, "--mount", "--net", "--pid", "--fork", "--kill-child", "--ipc", "--uts",
            "sh", "-c", _UNSHARE_SETUP, "grader-isolate", workdir + ".root", workdir, *extra, "--", *command,
        ]  # fmt: skip
    binds: list[str] = []
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            binds += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            binds += ["--ro-bind", d, d]
    binds += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for d in extra:  # after /tmp's tmpfs, so that folders under /tmp stay visible
        binds += ["--ro-bind", d, d]
    return [
        tool, "--unshare-all", "--die-with-parent", "--new-session", *binds,
        "--bind", workdir, workdir, "--chdir", workdir, *command,
    ]  # fmt: skip


_checked: dict[str, str | None] = {}


def check_isolation(isolation: str) -> None:
    """Raise GraderError (naming the fix) when ``isolation`` cannot be used here.

    Runs a trivial command under it once, so a tool that is installed but not permitted
    (no namespaces in a container, say) is caught before any test.
    """
    if isolation not in ISOLATIONS:
        raise GraderError(f"unknown isolation {isolation!r}: use one of {', '.join(ISOLATIONS)}")
    if isolation == "none":
        return
    if isolation not in _checked:
        isolation_prefix(isolation, ["true"], tempfile.gettempdir())  # raises if missing
        result = run(["/bin/sh", "-c", "echo isolated"], Limits(wall_seconds=10), isolation=isolation)
        ok = result.exit_code == 0 and "isolated" in result.stdout_tail
        reason = (result.stderr_tail.strip().splitlines() or [result.describe()])[-1] if not ok else None
        _checked[isolation] = reason
    if _checked[isolation]:
        raise GraderError(
            f"isolation '{isolation}' does not work here ({_checked[isolation]}): "
            "set 'isolation: none', or allow 'isolation_fallback: true'"
        )


# --- keeping track of every process a script starts --------------------------------

_lock = threading.Lock()  # held while starting a script and while sweeping orphans
_live: dict[int, "_Cgroup | None"] = {}  # pid of each running script -> its cgroup
_interrupt = threading.Event()
_subreaper_done = False


def _become_subreaper() -> None:
    """Orphans of scripts (double forks, daemons) become our children, so we can reap them."""
    global _subreaper_done
    if _subreaper_done or not sys.platform.startswith("linux"):
        return
    _subreaper_done = True
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _our_children() -> set[int]:
    """Pids of the grader's own child processes (orphans adopted as subreaper included)."""
    out: set[int] = set()
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children") as f:
                out.update(int(p) for p in f.read().split())
    except OSError:
        pass
    return out


def _sweep_orphans() -> None:
    """Kill and reap every child of the grader that is not a running script."""
    for _ in range(50):
        with _lock:
            strays = _our_children() - set(_live)
            for pid in strays:
                _signal(pid, signal.SIGKILL)
        if not strays:
            return
        for pid in strays:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        time.sleep(0.005)


def kill_all() -> None:
    """Stop every running script now (Ctrl-C): their runs end with ``interrupted`` set."""
    _interrupt.set()
    with _lock:
        for pid, cgroup in _live.items():
            _signal(-pid, signal.SIGKILL)
            if cgroup:
                cgroup.kill()


def reset_interrupt() -> None:
    """Allow runs again after ``kill_all()``."""
    _interrupt.clear()


def _signal(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


class _Cgroup:
    """A pids cgroup (cgroup v1, writable: Linux as root) for the scripts one worker thread starts.

    The worker thread itself joins it once (v1 lets a single thread join), so every script
    the thread starts is born inside it: no costly move per run. The cgroup caps the
    processes (the thread counts as one task) and lists every one of them, escaped or not.
    """

    _base: Path | None = None
    _probed = False
    _counter = itertools.count()
    _local = threading.local()
    _all: list[_Cgroup] = []

    def __init__(self, path: Path):
        self.path = path

    @classmethod
    def for_this_thread(cls, processes: int | None) -> _Cgroup | None:
        cgroup = getattr(cls._local, "cgroup", None)
        if cgroup is None:
            base = cls._find_base()
            if base is None:
                return None
            path = base / f"grader-{os.getpid()}-{next(cls._counter)}"
            try:
                path.mkdir()
                (path / "tasks").write_text(str(threading.get_native_id()))
            except OSError:
                return None
            cgroup = cls._local.cgroup = cls(path)
            if not cls._all:
                atexit.register(cls._remove_all)
            cls._all.append(cgroup)
        try:
            (cgroup.path / "pids.max").write_text(str(processes + 1) if processes else "max")
        except OSError:
            pass
        return cgroup

    @classmethod
    def _find_base(cls) -> Path | None:
        if not cls._probed:
            cls._probed = True
            probe = Path("/sys/fs/cgroup/pids") / f"grader-probe-{os.getpid()}"
            for stale in probe.parent.glob("grader-*"):  # left by a grader that was killed
                owner = stale.name.split("-")[1]
                if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                    try:
                        stale.rmdir()
                    except OSError:
                        pass
            try:
                probe.mkdir()
                ok = (probe / "pids.max").exists() and (probe / "tasks").exists()
                probe.rmdir()
                cls._base = probe.parent if ok else None
            except OSError:
                pass
        return cls._base

    def kill(self) -> bool:
        """SIGKILL every process in the cgroup but the grader; True if there were any."""
        try:
            pids = [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return False
        others = [p for p in pids if p != os.getpid()]
        for pid in others:
            _signal(pid, signal.SIGKILL)
        return bool(others)

    @classmethod
    def _remove_all(cls) -> None:
        for cgroup in cls._all:
            cgroup.kill()
            try:
                for tid in (cgroup.path / "tasks").read_text().split():  # our threads go back
                    (cgroup.path.parent / "tasks").write_text(tid)
                cgroup.path.rmdir()
            except OSError:
                pass


def _user_processes() -> int:
    """How many processes our user runs now (RLIMIT_NPROC counts them all)."""
    uid = os.getuid()
    n = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                n += os.stat(f"/proc/{name}").st_uid == uid
            except OSError:
                pass
    return n


def _rlimits(limits: Limits, nproc: int | None) -> list[tuple[int, tuple[int, int]]]:
    """The resource limits to set, never above the hard limits we run under ourselves."""
    wanted = [(resource.RLIMIT_CORE, 0, 0)]
    if limits.memory_mb:
        wanted.append((resource.RLIMIT_AS, limits.memory_mb * 2**20, limits.memory_mb * 2**20))
    if limits.cpu_seconds:
        cpu = max(1, math.ceil(limits.cpu_seconds))
        wanted.append((resource.RLIMIT_CPU, cpu, cpu + 1))  # SIGXCPU, then SIGKILL a second later
    if nproc:
        wanted.append((resource.RLIMIT_NPROC, nproc, nproc))
    if limits.output_bytes:
        wanted.append((resource.RLIMIT_FSIZE, limits.output_bytes, limits.output_bytes))
    out = []
    for kind, soft, hard in wanted:
        _, ceiling = resource.getrlimit(kind)
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        out.append((kind, (soft, hard)))
    return out


def _preexec(rlimits: list[tuple[int, tuple[int, int]]]) -> Callable[[], None]:
    """Runs in the child between fork and exec: set the resource limits."""

    def setup() -> None:
        for kind, values in rlimits:
            resource.setrlimit(kind, values)

    return setup


# --- running ----------------------------------------------------------------------


def run(
    command: Sequence[str],
    limits: Limits | float,
    on_stdout: Callable[[bytes], None] | None = None,
    isolation: str = "none",
) -> RunResult:
    """Run ``command`` in a fresh temporary directory under ``limits`` (or a wall-clock limit)."""
    if not isinstance(limits, Limits):
        limits = Limits(wall_seconds=float(limits))
    if _interrupt.is_set():
        return RunResult(None, False, 0.0, 0.0, interrupted=True)
    _become_subreaper()
    workdir = tempfile.mkdtemp(prefix="grader-")
    try:
        if isolation == "unshare":
            os.mkdir(workdir + ".root")  # mount point of the script's private root
        argv = isolation_prefix(isolation, command, workdir)
        return _Run(argv, limits, on_stdout, workdir).result()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if isolation == "unshare":
            shutil.rmtree(workdir + ".root", ignore_errors=True)


class _Run:
    """One run: start, pump output until the end or a limit, then clean up everything."""

    def __init__(self, argv: list[str], limits: Limits, on_stdout, workdir: str):
        self.argv, self.limits, self.on_stdout, self.workdir = argv, limits, on_stdout, workdir
        self.out_tail, self.err_tail = bytearray(), bytearray()
        self.stdout_bytes = 0
        self.output_limited = False
        self.ended: float | None = None  # when the script exited or was killed

    def result(self) -> RunResult:
        limits = self.limits
        nproc = None
        if limits.processes and os.geteuid() != 0:  # RLIMIT_NPROC counts all our processes; root ignores it
            nproc = _user_processes() + limits.processes
        cgroup = _Cgroup.for_this_thread(limits.processes)
        rlimits = _rlimits(limits, nproc)
        start = time.monotonic()
        try:
            with _lock:
                if _interrupt.is_set():  # Ctrl-C came while we were getting ready
                    return RunResult(None, False, 0.0, 0.0, interrupted=True)
                proc = subprocess.Popen(
                    self.argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=self.workdir,
                    env=script_env(self.workdir),
                    start_new_session=True,
                    bufsize=0,
                    preexec_fn=_preexec(rlimits),
                )
                _live[proc.pid] = cgroup
        except (OSError, subprocess.SubprocessError) as e:
            reason = getattr(e, "strerror", None) or str(e)
            return RunResult(None, False, 0.0, 0.0, start_error=f"could not be started: {self.argv[0]!r}: {reason}")

        timed_out = False
        try:
            timed_out = self._pump(proc, cgroup, start + limits.wall_seconds)
        finally:
            status, usage = self._clean_up(proc, cgroup)
        wall = (self.ended or time.monotonic()) - start  # the script's own time, not our cleanup
        exit_code = os.waitstatus_to_exitcode(status)
        cpu = usage.ru_utime + usage.ru_stime
        return RunResult(
            exit_code=exit_code,
            timed_out=timed_out,
            wall_seconds=wall,
            cpu_seconds=cpu,
            stdout_tail=self.out_tail.decode("utf-8", "replace"),
            stderr_tail=self.err_tail.decode("utf-8", "replace"),
            output_limited=self.output_limited,
            stdout_bytes=self.stdout_bytes,
            interrupted=_interrupt.is_set() and exit_code == -signal.SIGKILL and not timed_out,
            # SIGXCPU comes only from RLIMIT_CPU; past its hard limit the kernel sends SIGKILL
            cpu_limited=exit_code == -signal.SIGXCPU
            or (exit_code == -signal.SIGKILL and not timed_out and cpu >= (limits.cpu_seconds or float("inf"))),
        )

    def _pump(self, proc: subprocess.Popen, cgroup: _Cgroup | None, deadline: float) -> bool:
        """Read output until the script and its pipes are done; True if it hit the wall limit."""
        sel = selectors.DefaultSelector()
        pidfd = os.pidfd_open(proc.pid)
        try:
            sel.register(proc.stdout, selectors.EVENT_READ, "out")  # type: ignore[arg-type]
            sel.register(proc.stderr, selectors.EVENT_READ, "err")  # type: ignore[arg-type]
            sel.register(pidfd, selectors.EVENT_READ, "exit")
            if self._read(sel, deadline, pidfd):
                return False
            timed_out = pidfd in sel.get_map() and not self.output_limited
            self.ended = self.ended or time.monotonic()
            if pidfd in sel.get_map():
                sel.unregister(pidfd)
            # Kill everything first, then read what is left: lines printed before the kill count,
            # nothing printed after it (say by an escaped child) can.
            self._kill_everything(proc, cgroup)
            self._read(sel, time.monotonic() + _GRACE, pidfd)
            return timed_out
        finally:
            sel.close()
            os.close(pidfd)

    def _read(self, sel: selectors.BaseSelector, until: float, pidfd: int) -> bool:
        """Read until everything is closed (True), or ``until``, or the output limit (False)."""
        limit = self.limits.output_bytes
        while sel.get_map():
            remaining = until - time.monotonic()
            if remaining <= 0:
                return False
            for key, _ in sel.select(remaining):
                if key.data == "exit":  # the script ended: collect what is left in the pipes
                    sel.unregister(pidfd)
                    self.ended = time.monotonic()
                    until = min(until, self.ended + _GRACE)
                    continue
                data = os.read(key.fd, _READ)
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                if key.data == "err":
                    _keep_tail(self.err_tail, data)
                    continue
                if limit is not None and self.stdout_bytes + len(data) > limit:
                    data = data[: limit - self.stdout_bytes]
                    self.output_limited = True
                self.stdout_bytes += len(data)
                if self.on_stdout:
                    self.on_stdout(data)
                _keep_tail(self.out_tail, data)
                if self.output_limited:
                    sel.unregister(key.fileobj)
                    return False
        return True

    def _kill_everything(self, proc: subprocess.Popen, cgroup: _Cgroup | None) -> None:
        """Kill the script's group, cgroup and orphans, leaving the script itself unreaped:
        while its zombie holds its pid, the group id cannot be reused by another process."""
        _signal(-proc.pid, signal.SIGKILL)
        if cgroup:
            cgroup.kill()
        try:
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # dead, not yet reaped
        except ChildProcessError:
            pass
        give_up = time.monotonic() + 1.0
        for _ in range(2):  # again for any process forked while the first kill was going on
            _sweep_orphans()
            _signal(-proc.pid, signal.SIGKILL)
            while cgroup and cgroup.kill() and time.monotonic() < give_up:
                _sweep_orphans()
                time.sleep(0.002)

    def _clean_up(self, proc: subprocess.Popen, cgroup: _Cgroup | None):
        """Kill everything the script started, then reap it. Returns (status, rusage)."""
        self._kill_everything(proc, cgroup)
        _, status, usage = os.wait4(proc.pid, 0)
        with _lock:
            del _live[proc.pid]
        _sweep_orphans()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
        proc.returncode = os.waitstatus_to_exitcode(status)
        return status, usage


def _keep_tail(buf: bytearray, data: bytes) -> None:
    buf += data
    if len(buf) > 2 * _TAIL:
        del buf[:-_TAIL]
