"""Running one untrusted script under limits, keeping control of it whatever it does.

Each run gets a fresh temporary directory (removed afterwards), a minimal environment,
stdin at end-of-file, and its own session (process group). Resource limits bound its
memory, CPU seconds, processes and file sizes; where a pids cgroup (v1) is writable (Linux,
as root) the scripts are also born in one, which caps processes even for root and finds
every descendant. Stdout goes to a sink as it arrives (the caller scans it, keeping what it
needs) up to a byte limit; a tail of stdout and stderr is kept for diagnoses.

At the end of a run, at the wall-clock limit, or when its run's ``Stop`` is set (Ctrl-C),
everything the script started is killed: its process group, its cgroup, and any orphan it
left behind (the grader is a child subreaper, so orphans become its children and are reaped).
"""

from __future__ import annotations

import atexit
import collections
import ctypes
import itertools
import math
import os
import re
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from ..errors import GraderError
from ..limits import Limits
from ..stop import Stop
from . import fairness
from .fairness import FairCgroup
from .sandbox import SLOT_UIDS, Sandbox, kill_uid, preexec_for, wrap

_READ = 1 << 16
_TAIL = 4096  # bytes of stdout and of stderr kept for showing
LINE_BYTES = 1 << 16  # the most of one protocol line a Session keeps: the rest of a longer line is dropped
_GRACE = 0.2  # seconds to collect output still in the pipes once the script has ended
_PASS_THROUGH = ("PATH", "LANG", "LC_ALL", "JAVA_HOME", "SYSTEMROOT")
MARK = "GRADER_SCRIPT"  # in every script's environment: how the orphan sweep knows a script's stray
# What a program prints when an allocation fails: with limits.memory_mb set, the limit is the likely cause.
_OUT_OF_MEMORY = re.compile(r"MemoryError|bad_alloc|OutOfMemoryError|[Cc]annot allocate memory|[Oo]ut of memory")
_NO_PROCESSES = re.compile(r"BlockingIOError|Resource temporarily unavailable|fork: retry")


@dataclass(frozen=True)
class RunResult:
    """What happened to one run of a script.

    The grader stops a script at the wall-time limit, the CPU limit, the output limit and
    on its run's Stop; anything else that ends it with a failure is a crash.
    """

    exit_code: int | None  # negative: killed by that signal; None: never started
    timed_out: bool
    wall_seconds: float
    cpu_seconds: float
    stdout_tail: str = ""
    stderr_tail: str = ""
    start_error: str | None = None  # why the script could not be started
    output_limited: bool = False  # stopped for printing more than the output limit
    stdout_bytes: int = 0
    interrupted: bool = False  # stopped by its run's Stop (Ctrl-C): not a verdict on the script
    cpu_limited: bool = False  # stopped at limits.cpu_seconds
    limit_note: str | None = None  # the limit a crash most likely ran into, in words
    host: str | None = None  # the cluster worker's machine that ran it; None: this machine

    @property
    def signal(self) -> int | None:
        """The signal that ended the script, if one did."""
        return -self.exit_code if self.exit_code is not None and self.exit_code < 0 else None

    @property
    def stopped_by_grader(self) -> bool:
        """Stopped at a limit or by Ctrl-C: graded on what it printed until then."""
        return self.timed_out or self.output_limited or self.cpu_limited or self.interrupted

    @property
    def crashed(self) -> bool:
        """Ended on its own with a failure: could not start, a non-zero exit, or a signal the
        grader did not send."""
        if self.start_error is not None:
            return True
        return not self.stopped_by_grader and self.exit_code not in (0, None)

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
            return f"ran out of CPU time ({self.cpu_seconds:.1f} s, limits.cpu_seconds) and was stopped"
        note = f" ({self.limit_note})" if self.limit_note else ""
        if self.signal:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = f"signal {self.signal}"
            return f"crashed: it was killed by {name}{note}"
        if self.exit_code:
            return f"crashed: it exited with code {self.exit_code}{note}"
        return ""


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"


def _limit_note(exit_code: int, stderr: str, limits: Limits, out_of_memory: bool = False) -> str | None:
    """The limit a failing script most likely ran into, from how it died and its last words
    (``out_of_memory``: the kernel killed one of its processes at its memory cgroup's cap)."""
    if limits.output_bytes and (exit_code == -signal.SIGXFSZ or "File too large" in stderr):
        return f"it wrote a file larger than limits.output_bytes, {_size(limits.output_bytes)}"
    if limits.memory_mb and (out_of_memory or _OUT_OF_MEMORY.search(stderr)):
        return f"it ran out of memory: limits.memory_mb is {limits.memory_mb} MB"
    if limits.processes and _NO_PROCESSES.search(stderr):
        return f"it could not start more processes: limits.processes is {limits.processes}"
    return None


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
    env[MARK] = "1"
    return env


# --- keeping track of every process a script starts --------------------------------

_lock = threading.Lock()  # held while starting a script and while sweeping orphans
_live: set[int] = set()  # pid of each running script, whatever run it belongs to
_script_pids: collections.deque[int] = collections.deque(maxlen=4096)  # scripts started lately
_adopting = 0  # runs under way whose scripts' orphans we adopt


def _adopt_orphans(on: bool) -> None:
    """Be a child subreaper while runs need it: orphans of scripts (double forks, daemons)
    become our children, to kill and reap. Only runs without a process namespace need it
    ('none', 'uid'); under bwrap or unshare nothing escapes the namespace, and what a dying
    namespace leaves behind is better left to init than adopted."""
    global _adopting
    with _lock:
        _adopting += 1 if on else -1
        if (on and _adopting == 1) or (not on and _adopting == 0):
            try:
                ctypes.CDLL(None, use_errno=True).prctl(36, int(on), 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
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


def _is_script_process(pid: int) -> bool:
    """True for a process a script started: its environment carries the mark, or (a zombie has
    no environment left) it stayed in the session or process group of a script we started."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            if f"\0{MARK}=1\0".encode() in b"\0" + f.read():
                return True
    except OSError:
        pass  # a zombie's environment cannot be read at all
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[2]) in _script_pids or int(fields[3]) in _script_pids  # process group, session
    except (OSError, IndexError, ValueError):
        return False


def _sweep_orphans() -> None:
    """Kill and reap every child of the grader that a script left behind. Other children
    (a Dask worker, a caller's own subprocesses) are left alone."""
    for _ in range(50):
        with _lock:
            strays = {pid for pid in _our_children() - _live if _is_script_process(pid)}
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


def _end_uid(uid: int) -> None:
    """Nothing of a slot's uid outlives its test, not even a zombie: what the kill leaves to us
    (the subreaper) is reaped, since zombies count against the uid's process limit. Only
    scripts run as a slot's uid, so the uid alone says what to reap."""
    give_up = time.monotonic() + 1.0
    while time.monotonic() < give_up:
        alive = kill_uid(uid)
        ours = [pid for pid in _our_children() if _owner(pid) == uid]
        for pid in ours:
            try:
                os.waitpid(pid, 0)  # killed above, or a zombie already
            except ChildProcessError:
                pass
        if not alive and not ours:
            return
        time.sleep(0.002)


def _owner(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _signal(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


class Cgroup:
    """A pids cgroup (cgroup v1, writable: Linux as root) for the scripts one worker thread
    starts, and beside it a memory cgroup of the same name where the system offers one.

    The worker thread itself joins the pids cgroup once (v1 lets a single thread join), so
    every script the thread starts is born inside it: no costly move per run. The cgroup caps
    the processes (the thread counts as one task) and lists every one of them, escaped or
    not. Each script moves itself into the memory cgroup before it runs (``enter_memory``):
    all its processes together, and the files they keep in memory (tmpfs), get at most
    limits.memory_mb; past it the kernel kills one of them, never the grader (which is not in it).
    """

    _base: Path | None = None
    _memory_base: Path | None = None
    _probed = False
    _counter = itertools.count()
    _local = threading.local()
    _lock = threading.Lock()
    _all: list[Cgroup] = []

    def __init__(self, path: Path):
        self.path = path
        self.memory: Path | None = None  # the memory cgroup beside it, None where there is none
        self.memory_mb: int | None = None  # its limit now

    @classmethod
    def for_this_thread(cls, processes: int | None, memory_mb: int | None = None) -> Cgroup | None:
        """The cgroup of this thread, made on its first use, capped at ``processes`` and
        ``memory_mb`` (None: no cap); None for a thread not dedicated to running scripts
        (whatever it started later would be killed with the scripts)."""
        if not getattr(cls._local, "dedicated", False):
            return None
        cgroup = getattr(cls._local, "cgroup", None)
        if cgroup is None:
            cgroup = cls._local.cgroup = cls._join()
            if cgroup is None:
                return None
        try:
            (cgroup.path / "pids.max").write_text(str(processes + 1) if processes else "max")
        except OSError:
            pass
        cgroup._limit_memory(memory_mb)
        return cgroup

    def _limit_memory(self, memory_mb: int | None) -> None:
        """Cap the memory cgroup at ``memory_mb``, swap included where the kernel counts it
        (memory.memsw: a swapped page is not a killed process), or take the cap off."""
        if self.memory is None or memory_mb == self.memory_mb:
            return
        value = str(memory_mb * 2**20) if memory_mb else "-1"
        files = ["memory.limit_in_bytes"] + (
            ["memory.memsw.limit_in_bytes"] if (self.memory / "memory.memsw.limit_in_bytes").exists() else []
        )
        if not memory_mb or (self.memory_mb is not None and memory_mb > self.memory_mb):
            files.reverse()  # memsw is never below the memory limit: raised first, lowered last
        try:
            for name in files:
                (self.memory / name).write_text(value)
            self.memory_mb = memory_mb
        except OSError:
            self.memory_mb = None

    @property
    def enter_memory(self) -> str | None:
        """The file a script writes its pid to, between fork and exec, to enter the memory
        cgroup; None when there is no memory cap."""
        return str(self.memory / "cgroup.procs") if self.memory is not None and self.memory_mb else None

    def oom_kills(self) -> int:
        """How many processes the kernel has killed in the memory cgroup for going over its limit."""
        if self.memory is None:
            return 0
        try:
            for line in (self.memory / "memory.oom_control").read_text().splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    @classmethod
    def _join(cls) -> Cgroup | None:
        """Put this thread in a cgroup of its own: one left empty by a thread that ended, or a new one."""
        base = cls.find_base()
        if base is None:
            return None
        tid = str(threading.get_native_id())
        with cls._lock:
            free = [c for c in cls._all if not c.tasks()]
            cgroup = free[0] if free else cls(base / f"grader-ns{_grader_id()}-{next(cls._counter)}")
            try:
                if not free:
                    cgroup.path.mkdir()
                (cgroup.path / "tasks").write_text(tid)
            except OSError:
                return None
            if not free and cls._memory_base is not None:
                try:
                    (cls._memory_base / cgroup.path.name).mkdir()
                    cgroup.memory = cls._memory_base / cgroup.path.name
                except OSError:
                    pass
            if not cls._all:
                atexit.register(cls._remove_all)
            if not free:
                cls._all.append(cgroup)
        return cgroup

    def tasks(self) -> list[str]:
        """The threads and processes in the cgroup."""
        try:
            return (self.path / "tasks").read_text().split()
        except OSError:
            return []

    @classmethod
    def find_base(cls) -> Path | None:
        """The pids cgroup hierarchy this process may make cgroups in (probed once), or None."""
        if not cls._probed:
            cls._probed = True
            cls._base = cls._probe(Path("/sys/fs/cgroup/pids"), "pids.max")
            if cls._base is not None:
                cls._memory_base = cls._probe(Path("/sys/fs/cgroup/memory"), "memory.limit_in_bytes")
        return cls._base

    @classmethod
    def _probe(cls, base: Path, limit: str) -> Path | None:
        """``base`` if this process may make cgroups there that have ``limit``, else None."""
        cls._remove_stale(base)
        probe = base / f"grader-ns{_grader_id()}-probe"
        try:
            probe.mkdir()
            ok = (probe / limit).exists() and (probe / "tasks").exists()
            probe.rmdir()
            return base if ok else None
        except OSError:
            return None

    @staticmethod
    def _remove_stale(base: Path) -> None:
        """Remove the cgroups of graders of this PID namespace that died without removing
        theirs (killed with SIGKILL), killing what still runs in them. A cgroup is named after
        its grader's namespace, pid and start time, so a live grader's, a reused pid's, or
        one of another namespace (whose pids ours cannot tell) is never taken for stale."""
        for stale in base.glob("grader-*"):
            named = _CGROUP.fullmatch(stale.name)
            if named and _dead_grader(named[1], named[2]):
                _remove_cgroup(stale)

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
            try:
                for tid in (cgroup.path / "tasks").read_text().split():  # our threads go back
                    (cgroup.path.parent / "tasks").write_text(tid)
            except OSError:
                pass
            for path in (cgroup.path, cgroup.memory):
                if path is not None:
                    _remove_cgroup(path)


def _remove_cgroup(path: Path) -> None:
    """Kill what runs in the cgroup at ``path`` (never this process), let it leave, remove the cgroup."""
    try:
        for pid in (path / "cgroup.procs").read_text().split():
            if int(pid) != os.getpid():
                _signal(int(pid), signal.SIGKILL)
        for _ in range(100):  # the killed leave in a moment
            if not (path / "cgroup.procs").read_text().split():
                break
            time.sleep(0.01)
        path.rmdir()
    except OSError:
        pass


def _process_id(pid: int) -> str | None:
    """'PID-STARTTIME': a process, told apart from a later one given the same pid."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f"{pid}-{f.read().rsplit(')', 1)[1].split()[19]}"
    except (OSError, IndexError):
        return None


def _grader_id() -> str | None:
    """'NAMESPACE-PID-STARTTIME': this grader, told apart from a later process given its pid
    and from a process of another PID namespace (whose pids ours cannot tell); None without /proc."""
    me = _process_id(os.getpid())
    try:
        return None if me is None else f"{os.stat('/proc/self/ns/pid').st_ino}-{me}"
    except OSError:
        return None


def _dead_grader(namespace: str, process: str) -> bool:
    """True when the grader named by a _grader_id() of this PID namespace has ended."""
    mine = _grader_id()
    return mine is not None and mine.split("-")[0] == namespace and _process_id(int(process.split("-")[0])) != process


# 'ns' before the namespace: earlier graders took a name's first number for a pid, so to them
# a live grader's cgroup would look stale
_CGROUP = re.compile(r"grader-ns(\d+)-(\d+-\d+)-(?:\d+|probe|cpu(?:\d+|probe))")
fairness.configure(lambda: f"grader-ns{_grader_id()}-cpu", lambda name: _stale_cgroup(name))
_WORK = re.compile(r"grader-(?:scripts-|doctor-)?(\d+)-(\d+-\d+)-[a-z0-9_]{8}(?:\.root)?")
_swept = threading.Lock()  # held for good once this process has swept


def _stale_cgroup(name: str) -> bool:
    """Whether a cgroup of this name is a dead grader's (of this PID namespace)."""
    named = _CGROUP.fullmatch(name)
    return named is not None and _dead_grader(named[1], named[2])


def work_folder(prefix: str = "grader-") -> str:
    """A new private folder in the temporary directory, named after this grader (_grader_id()),
    made after ``sweep_work_folders()``."""
    me = _grader_id()
    if me is None:
        return tempfile.mkdtemp(prefix=prefix)  # no /proc: nothing to tell the dead by
    sweep_work_folders()
    return tempfile.mkdtemp(prefix=f"{prefix}{me}-")


def sweep_work_folders() -> None:
    """Remove, once per process, the work folders of graders of this PID namespace that died
    without removing theirs (killed with SIGKILL): copies of scripts, their runs' files and
    doctor's attack folders, owned by this user (or by a job slot's uid). Every command of
    the CLI calls it as it starts, the first work folder a library caller makes too."""
    if _grader_id() is None or not _swept.acquire(blocking=False):
        return
    owners = {os.geteuid(), *(SLOT_UIDS if os.geteuid() == 0 else ())}
    for stale in Path(tempfile.gettempdir()).glob("grader-*"):
        named = _WORK.fullmatch(stale.name)
        if not named or not _dead_grader(named[1], named[2]):
            continue
        try:
            st = stale.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid in owners:
            shutil.rmtree(stale, ignore_errors=True)  # never follows a link


def dedicate_this_thread() -> None:
    """Mark the calling thread as one that starts only scripts (a job slot): its scripts are
    then born in a pids cgroup of its own, where the system offers one."""
    Cgroup._local.dedicated = True


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


_NO_LIMIT = 2**63 - 1  # the largest limit setrlimit takes: in effect none


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
        soft, hard = min(soft, _NO_LIMIT), min(hard, _NO_LIMIT)
        _, ceiling = resource.getrlimit(kind)
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        out.append((kind, (soft, hard)))
    return out


def _nproc(limits: Limits, sandbox: Sandbox) -> int | None:
    """RLIMIT_NPROC for a script: the slot's uid runs nothing but it ('uid'); without a uid of
    its own it counts all our processes (root ignores it); the other mechanisms set it inside
    their sandbox (``wrap``)."""
    if limits.processes and sandbox.mechanism == "uid":
        return limits.processes
    if limits.processes and sandbox.uid is None and os.geteuid() != 0:
        return _user_processes() + limits.processes
    return None


def _preexec(rlimits: list[tuple[int, tuple[int, int]]], then: Callable[[], None] | None,
             cgroup: Cgroup | None = None, join: Sequence[Path] = ()) -> Callable[[], None]:  # fmt: skip
    """Runs in the child between fork and exec: enter ``cgroup``'s memory cgroup (where it
    can: as root) and the cgroup folders ``join`` (its fair-CPU cgroups), set the resource
    limits, then ``then``."""
    enter = [cgroup.enter_memory] if cgroup is not None and cgroup.enter_memory and os.geteuid() == 0 else []
    files = [*enter, *(str(folder / "cgroup.procs") for folder in join)]

    def setup() -> None:
        for path in files:
            try:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, str(os.getpid()).encode())
                finally:
                    os.close(fd)
            except OSError:
                pass  # the cgroup is gone: RLIMIT_AS still bounds each process
        for kind, values in rlimits:
            resource.setrlimit(kind, values)
        if then:
            then()

    return setup


# --- running ----------------------------------------------------------------------


def _spawn(argv: list[str], workdir: str, rlimits: list[tuple[int, tuple[int, int]]], sandbox: Sandbox, stdin: bool,
           cwd: str | None = None, cgroup: Cgroup | None = None, fair: FairCgroup | None = None) -> subprocess.Popen:  # fmt: skip
    """Start a script in its own session, under ``rlimits``, ``sandbox`` and ``cgroup``'s
    memory cap, born in ``fair``'s CPU cgroups; stdin a pipe (``stdin``) or at end-of-file.
    ``cwd``: where it starts (default ``workdir``)."""
    with _lock:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd or workdir,
            env=script_env(workdir),
            start_new_session=True,
            bufsize=0,
            preexec_fn=_preexec(rlimits, preexec_for(sandbox), cgroup, fair.folders if fair else ()),
            **_as_uid(sandbox),
        )
        _live.add(proc.pid)
        _script_pids.append(proc.pid)
    return proc


def run(
    command: Sequence[str],
    limits: Limits | float,
    on_stdout: Callable[[bytes], None] | None = None,
    sandbox: Sandbox | str = Sandbox(),
    stop: Stop | None = None,
    script_dir: str | None = None,
) -> RunResult:
    """Run ``command`` in a fresh temporary directory under ``limits`` (or a wall-clock limit)
    and ``sandbox`` (or a mechanism's name), ``script_dir`` being the script's own folder.

    Setting ``stop`` kills the script at once; a run asked for after it is set never starts.
    """
    if not isinstance(limits, Limits):
        limits = Limits(wall_seconds=float(limits))
    if isinstance(sandbox, str):
        sandbox = Sandbox(sandbox)
    stop = stop or Stop()
    if stop.is_set():
        return RunResult(None, False, 0.0, 0.0, interrupted=True)
    adopt = sandbox.mechanism in ("none", "uid")
    if adopt:
        _adopt_orphans(True)
    workdir = work_folder()
    try:
        if sandbox.mechanism == "unshare":
            os.mkdir(workdir + ".root")  # mount point of the script's private root
        if sandbox.mechanism == "uid" and script_dir:  # no mounts: the script reads a copy of its folder
            copy = os.path.join(workdir, "submission")
            shutil.copytree(script_dir, copy)
            command = [part.replace(script_dir, copy) for part in command]
            script_dir = copy
        if sandbox.uid is not None:
            for path in [workdir, *(str(p) for p in Path(workdir).rglob("*"))]:
                os.lchown(path, sandbox.uid, sandbox.uid)
        cgroup = Cgroup.for_this_thread(limits.processes, limits.memory_mb)
        nproc = None if cgroup else limits.processes  # a cgroup caps processes
        argv = wrap(sandbox, command, workdir, script_dir, nproc, space=limits.output_bytes)
        # a job slot's thread is in its slot's CPU cgroups already; a script started elsewhere joins its own
        fair = None if cgroup is not None and fairness.for_this_thread() else fairness.take(sandbox.uid)
        try:
            return Run(argv, limits, on_stdout, workdir, stop, sandbox, cgroup, fair).result()
        finally:
            if fair is not None:
                fair.release()
    finally:
        if sandbox.mechanism == "uid" and sandbox.uid is not None:
            _end_uid(sandbox.uid)
        shutil.rmtree(workdir, ignore_errors=True)
        if sandbox.mechanism == "unshare":
            shutil.rmtree(workdir + ".root", ignore_errors=True)
        if adopt:
            _adopt_orphans(False)


class Run:
    """One run: start, pump output until the end or a limit, then clean up everything."""

    def __init__(self, argv: list[str], limits: Limits, on_stdout, workdir: str, stop: Stop, sandbox: Sandbox,
                 cgroup: Cgroup | None, fair: FairCgroup | None = None):  # fmt: skip
        self.argv, self.limits, self.on_stdout, self.workdir, self.stop = argv, limits, on_stdout, workdir, stop
        self.sandbox, self.cgroup, self.fair = sandbox, cgroup, fair
        self.out_tail, self.err_tail = bytearray(), bytearray()
        self.stdout_bytes = 0
        self.output_limited = False
        self.ended: float | None = None  # when the script exited or was killed
        self.cpu_at_kill = 0.0  # CPU seconds of the script's process tree just before the grader killed it

    def result(self) -> RunResult:
        limits = self.limits
        cgroup = self.cgroup
        rlimits = _rlimits(limits, _nproc(limits, self.sandbox))
        start = time.monotonic()
        try:
            kills = cgroup.oom_kills() if cgroup else 0
            proc = _spawn(self.argv, self.workdir, rlimits, self.sandbox, stdin=False, cgroup=cgroup, fair=self.fair)
        except (OSError, subprocess.SubprocessError) as e:
            reason = getattr(e, "strerror", None) or str(e)
            return RunResult(None, False, 0.0, 0.0, start_error=f"could not be started: {self.argv[0]!r}: {reason}")
        # Registered after the start: a Stop set in between is seen by the check just below.
        self.stop.watch(proc.pid, lambda: _kill_group(proc.pid, cgroup))
        timed_out = False
        try:
            if self.stop.is_set():
                _kill_group(proc.pid, cgroup)
            timed_out = self._pump(proc, cgroup, start + limits.wall_seconds)
        finally:
            status, usage = self._clean_up(proc, cgroup)
        wall = (self.ended or time.monotonic()) - start  # the script's own time, not our cleanup
        exit_code = os.waitstatus_to_exitcode(status)
        if self.sandbox.mechanism in ("bwrap", "unshare") and 128 < exit_code < 128 + 65:
            exit_code = 128 - exit_code  # the namespace's first process exits 128+N when the script dies of signal N
        # A sandbox's first process killed before it reaps the script loses the script's usage
        # from its own: the tree's usage read just before the kill keeps it.
        cpu = max(usage.ru_utime + usage.ru_stime, self.cpu_at_kill)
        # SIGXCPU comes from RLIMIT_CPU (the grader never sends it; a script that sends it to
        # itself gains nothing a clean exit would not give); past its hard limit a second later
        # the kernel sends SIGKILL, told from the grader's own kills by the CPU time used.
        cpu_limited = (
            bool(limits.cpu_seconds)
            and not timed_out
            and (
                exit_code == -signal.SIGXCPU
                or (exit_code == -signal.SIGKILL and cpu >= 0.9 * (limits.cpu_seconds or 0))
            )
        )
        interrupted = self.stop.is_set() and exit_code == -signal.SIGKILL and not timed_out and not cpu_limited
        stderr = self.err_tail.decode("utf-8", "replace")
        out_of_memory = cgroup is not None and cgroup.oom_kills() > kills
        return RunResult(
            exit_code=exit_code,
            timed_out=timed_out,
            wall_seconds=wall,
            cpu_seconds=cpu,
            stdout_tail=self.out_tail.decode("utf-8", "replace"),
            stderr_tail=stderr,
            output_limited=self.output_limited,
            stdout_bytes=self.stdout_bytes,
            interrupted=interrupted,
            cpu_limited=cpu_limited,
            limit_note=_limit_note(exit_code, stderr, limits, out_of_memory) if exit_code else None,
        )

    def _pump(self, proc: subprocess.Popen, cgroup: Cgroup | None, deadline: float) -> bool:
        """Read output until the script and its pipes are done; True if it hit the wall limit."""
        sel = selectors.DefaultSelector()
        pidfd = os.pidfd_open(proc.pid)
        try:
            sel.register(proc.stdout, selectors.EVENT_READ, "out")  # type: ignore[arg-type]
            sel.register(proc.stderr, selectors.EVENT_READ, "err")  # type: ignore[arg-type]
            sel.register(pidfd, selectors.EVENT_READ, "exit")
            if self._read(sel, deadline, pidfd):
                return False
            timed_out = pidfd in sel.get_map() and not self.output_limited and not self.stop.is_set()
            self.ended = self.ended or time.monotonic()
            if pidfd in sel.get_map():
                sel.unregister(pidfd)
            # Kill everything first, then read what is left: lines printed before the kill count,
            # nothing printed after it (say by an escaped child) can.
            self.cpu_at_kill = _tree_cpu_seconds(proc.pid)
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

    def _kill_everything(self, proc: subprocess.Popen, cgroup: Cgroup | None) -> None:
        """Kill the script's group, cgroup and orphans, leaving the script itself unreaped:
        while its zombie holds its pid, the group id cannot be reused by another process."""
        _kill_group(proc.pid, cgroup)
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

    def _clean_up(self, proc: subprocess.Popen, cgroup: Cgroup | None):
        """Kill everything the script started, then reap it. Returns (status, rusage)."""
        self._kill_everything(proc, cgroup)
        self.stop.unwatch(proc.pid)  # before the reap: once reaped, its pid may be reused
        with _lock:
            _, status, usage = os.wait4(proc.pid, 0)
            _live.discard(proc.pid)
        _sweep_orphans()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
        proc.returncode = os.waitstatus_to_exitcode(status)
        return status, usage


class Ended(Exception):
    """The program ended, or closed its output, while the grader waited for a line."""


class Session(Run):
    """One untrusted program kept running for many exchanges (a protocol engine's game).

    It starts as a run does (a fresh directory, the minimal environment, the limits but CPU
    seconds, the sandbox, a session and, where there is one, a pids cgroup of its own) with
    stdin a pipe; the grader writes lines to it and reads its lines with a deadline each.
    ``close`` kills it and everything it started, and says how it ended. Its stdout counts
    against ``limits.output_bytes`` over its whole life; stderr keeps a tail. A line longer
    than LINE_BYTES is cut there (the grader's memory stays flat whatever the program prints).

    Its processes are born in CPU cgroups of their own (``fairness``) where the system offers
    them: ``pause`` freezes them all (the engine is not on move), ``resume`` lets them run.
    """

    def __init__(self, command: Sequence[str], limits: Limits, sandbox: Sandbox, stop: Stop,
                 script_dir: str | None = None, cwd: str | None = None):  # fmt: skip
        super().__init__(list(command), replace(limits, cpu_seconds=None), None, "", stop, sandbox, None)
        self.script_dir, self.cwd = script_dir, cwd
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self._buf = bytearray()
        self._skipping = False  # dropping the rest of a line longer than LINE_BYTES
        self._eof = False
        self._sel = selectors.DefaultSelector()
        self._pidfd = -1
        self.start_error: str | None = None
        self._closed = threading.Event()
        self._launcher: threading.Thread | None = None

    def start(self) -> str | None:
        """Start the program; the reason it could not be started, or None."""
        self.workdir = work_folder()
        if self.sandbox.mechanism in ("none", "uid"):
            _adopt_orphans(True)
        if self.sandbox.mechanism == "unshare":
            os.mkdir(self.workdir + ".root")
        if self.sandbox.mechanism == "uid" and self.script_dir:  # no mounts: the program reads a copy of its folder
            copy = os.path.join(self.workdir, "submission")
            shutil.copytree(self.script_dir, copy)
            self.argv = [part.replace(self.script_dir, copy) for part in self.argv]
            self.cwd = copy if self.cwd == self.script_dir else self.cwd
            self.script_dir = copy
        if self.sandbox.uid is not None:
            for path in [self.workdir, *(str(p) for p in Path(self.workdir).rglob("*"))]:
                os.lchown(path, self.sandbox.uid, self.sandbox.uid)
        rlimits = _rlimits(self.limits, _nproc(self.limits, self.sandbox))
        error: list[BaseException] = []
        ready = threading.Event()
        self.fair = fairness.take(self.sandbox.uid)  # this thread's job slot's cores

        # The program is born in a thread of its own, in a cgroup of its own, and that thread
        # waits until the program is closed: bwrap's --die-with-parent (PR_SET_PDEATHSIG)
        # follows the thread that started it, not the grader.
        def launch() -> None:
            dedicate_this_thread()
            self.cgroup = Cgroup.for_this_thread(self.limits.processes, self.limits.memory_mb)
            try:
                argv = wrap(self.sandbox, self.argv, self.workdir, self.script_dir,
                            None if self.cgroup else self.limits.processes, self.cwd, self.limits.output_bytes)  # fmt: skip
                self.proc = _spawn(argv, self.workdir, rlimits, self.sandbox, stdin=True, cwd=self.cwd,
                                   cgroup=self.cgroup, fair=self.fair)  # fmt: skip
            except (OSError, subprocess.SubprocessError, GraderError) as e:
                error.append(e)
            ready.set()
            self._closed.wait()

        self._launcher = threading.Thread(target=launch, name="grader-engine", daemon=True)
        self._launcher.start()
        ready.wait()
        self.started = time.monotonic()
        if error or self.proc is None:
            reason = getattr(error[0], "strerror", None) or str(error[0]) if error else "unknown"
            self.start_error = f"could not be started: {self.argv[0]!r}: {reason}"
            return self.start_error
        proc, cgroup, fair = self.proc, self.cgroup, self.fair
        self.stop.watch(proc.pid, lambda: _kill_group(proc.pid, cgroup, fair))
        if self.stop.is_set():
            _kill_group(proc.pid, cgroup, fair)
        os.set_blocking(proc.stdin.fileno(), False)  # type: ignore[union-attr]
        self._pidfd = os.pidfd_open(proc.pid)
        self._sel.register(proc.stdout, selectors.EVENT_READ, "out")  # type: ignore[arg-type]
        self._sel.register(proc.stderr, selectors.EVENT_READ, "err")  # type: ignore[arg-type]
        return None

    def send(self, text: str) -> bool:
        """Write ``text`` (whole lines) to the program; False when it cannot take it: it ended,
        or it left its input unread until the pipe filled up."""
        assert self.proc is not None and self.proc.stdin is not None
        data = text.encode()
        try:
            while data:
                data = data[os.write(self.proc.stdin.fileno(), data) :]
        except (BrokenPipeError, BlockingIOError, OSError):
            return False
        return True

    def read_line(self, until: float) -> str | None:
        """The next line the program prints (without its line end), or None at ``until``
        (monotonic seconds). Raises Ended once it has ended (or closed its output, or printed
        more than the output limit) and every line it printed before was read."""
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                return line.decode("utf-8", "replace").rstrip("\r")
            if self._eof:
                raise Ended()
            remaining = until - time.monotonic()
            if remaining <= 0:
                return None
            for key, _ in self._sel.select(remaining):
                data = os.read(key.fd, _READ)
                if key.data == "err":
                    if data:
                        _keep_tail(self.err_tail, data)
                    else:
                        self._sel.unregister(key.fileobj)
                    continue
                limit = self.limits.output_bytes
                if limit is not None and self.stdout_bytes + len(data) > limit:
                    data, self.output_limited = data[: limit - self.stdout_bytes], True
                self.stdout_bytes += len(data)
                _keep_tail(self.out_tail, data)
                self._take(data)
                if not data or self.output_limited:
                    self._eof = True
                    self._sel.unregister(key.fileobj)
                    if self._buf and not self._buf.endswith(b"\n"):
                        self._buf += b"\n"  # a last line without its end still counts

    def _take(self, data: bytes) -> None:
        """Add what the program printed to the lines not yet read, the first line cut at
        LINE_BYTES (read while no whole line waits, so that the buffer stays within
        LINE_BYTES and one read)."""
        if self._skipping:
            end = data.find(b"\n")
            if end < 0:
                return
            self._skipping, data = False, data[end:]
        self._buf += data
        end = self._buf.find(b"\n")
        if end < 0 and len(self._buf) > LINE_BYTES:
            del self._buf[LINE_BYTES:]
            self._skipping = True
        elif end > LINE_BYTES:
            del self._buf[LINE_BYTES:end]

    def pause(self) -> None:
        """Freeze all the program's processes (it is not on move), where the system can."""
        if self.fair is not None and self.proc is not None:
            self.fair.freeze()

    def resume(self) -> None:
        """Let the program's processes run again (its turn)."""
        if self.fair is not None:
            self.fair.thaw()

    def place(self) -> None:
        """Pin the program to the calling thread's job slot (it played its last game on another)."""
        if self.fair is not None:
            self.fair.place()

    def cpu_seconds(self) -> float:
        """CPU seconds all the program's processes have used so far."""
        counted = self.fair.cpu_seconds() if self.fair is not None else None
        if counted is not None:
            return counted
        return _tree_cpu_seconds(self.proc.pid) if self.proc is not None else 0.0

    def alive(self) -> bool:
        """True while the program runs (checked without reaping it: its pid stays ours)."""
        if self.proc is None:
            return False
        try:
            return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
        except ChildProcessError:
            return False

    def close(self) -> RunResult:
        """Kill the program and all it started, clean up, and say how it ended: a crash only
        when it ended by itself with a failure (at the end of a game the grader kills it)."""
        try:
            if self.proc is None:
                return RunResult(None, False, 0.0, 0.0, start_error=self.start_error)
            proc = self.proc
            self.resume()  # a frozen process would neither end nor die
            if self._eof and not self.output_limited:  # its output closed: it is ending, give it a moment
                settle = time.monotonic() + 0.5
                while self.alive() and time.monotonic() < settle:
                    time.sleep(0.005)
            on_its_own = not self.alive() and not self.output_limited
            self.ended = time.monotonic()
            self.cpu_at_kill = _tree_cpu_seconds(proc.pid)
            self._sel.close()
            try:
                proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
            status, usage = self._clean_up(proc, self.cgroup)
            if self._pidfd >= 0:
                os.close(self._pidfd)
            exit_code = os.waitstatus_to_exitcode(status)
            if self.sandbox.mechanism in ("bwrap", "unshare") and 128 < exit_code < 128 + 65:
                exit_code = 128 - exit_code
            if not on_its_own:
                exit_code = 0  # killed by the grader at the end: not a verdict on the program
            stderr = self.err_tail.decode("utf-8", "replace")
            return RunResult(
                exit_code=exit_code,
                timed_out=False,
                wall_seconds=self.ended - self.started,
                cpu_seconds=max(usage.ru_utime + usage.ru_stime, self.cpu_at_kill),
                stdout_tail=self.out_tail.decode("utf-8", "replace"),
                stderr_tail=stderr,
                output_limited=self.output_limited,
                stdout_bytes=self.stdout_bytes,
                interrupted=self.stop.is_set(),
                limit_note=_limit_note(exit_code, stderr, self.limits) if exit_code else None,
            )
        finally:
            self._closed.set()
            if self._launcher is not None:
                self._launcher.join()
            if self.fair is not None:
                self.fair.release()
                self.fair = None
            if self.sandbox.mechanism == "uid" and self.sandbox.uid is not None:
                _end_uid(self.sandbox.uid)
            if self.workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)
                if self.sandbox.mechanism == "unshare":
                    shutil.rmtree(self.workdir + ".root", ignore_errors=True)
                if self.sandbox.mechanism in ("none", "uid"):
                    _adopt_orphans(False)
                self.workdir = ""


def _tree_cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by ``pid`` and its descendants: each live process's own time
    plus that of the children it has reaped (so each process counts once)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total / tick


def _as_uid(sandbox: Sandbox) -> dict:
    """Popen's arguments that start the script as the slot's uid ('uid'; the other mechanisms
    switch uid inside their sandbox, after building it as root)."""
    if sandbox.mechanism == "uid" and sandbox.uid is not None:
        return {"user": sandbox.uid, "group": sandbox.uid, "extra_groups": []}
    return {}


def _kill_group(pid: int, cgroup: Cgroup | None, fair: FairCgroup | None = None) -> None:
    """SIGKILL a script's process group and every process of its cgroups (``fair``'s thawed first)."""
    if fair:
        fair.kill()
    _signal(-pid, signal.SIGKILL)
    if cgroup:
        cgroup.kill()


def _keep_tail(buf: bytearray, data: bytes) -> None:
    buf += data
    if len(buf) > 2 * _TAIL:
        del buf[:-_TAIL]
