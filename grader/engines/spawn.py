"""Starting an untrusted program, and keeping track of every process it starts.

The grader never runs code of its own in a forked child: ``start`` hands subprocess nothing
that needs one (no preexec_fn, no user or group), so the child is made with vfork and at once
execs the launcher (grader/_native/launch.c, built by setup.py; grader/engines/launch.py, run
by the Python running the grader, where it was not built). The launcher, a process of its own,
does to itself what the script's process needs before the script runs: it joins the slot's
cgroups (those the slot's thread is not in already: cgroups.py), sets the resource limits, becomes the slot's uid ('uid') and installs the seccomp
filter, then execs the command (the sandbox's, bwrap or unshare, or the script itself). The new
session is subprocess's own setsid, which vfork allows. Starting a script costs the same from
the grader as from a small process (bench/grading.py prints both).

The runs' processes are tracked here: each script's pid while it runs, and (as a child
subreaper, while runs without a process namespace need it) the orphans scripts leave.
"""

from __future__ import annotations

import collections
import ctypes
import functools
import math
import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Sequence

from ..limits import Limits
from .cgroups import Cgroup
from .fairness import FairCgroup
from .leftovers import kill
from .sandbox import Sandbox, kill_uid, native_launcher, seccomp_for

_PASS_THROUGH = ("PATH", "LANG", "LC_ALL", "JAVA_HOME", "SYSTEMROOT")
MARK = "GRADER_SCRIPT"  # in every script's environment: how the orphan sweep knows a script's stray
_PYTHON = Path(__file__).resolve().with_name("launch.py")
NAMESPACE_SECONDS = 1.0  # the most a sandbox whose namespace was killed is given to reap it and end


def launcher() -> list[str]:
    """The command that starts every untrusted program: the C launcher where it was built,
    else the same steps in Python (a Python start more per run: about 15 ms)."""
    native = native_launcher()
    if native is not None:
        return [native]
    return [sys.executable, "-I", "-S", str(_PYTHON)]


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


# --- resource limits ------------------------------------------------------------------

_NO_LIMIT = 2**63 - 1  # the largest limit setrlimit takes: in effect none


def rlimits(limits: Limits, nproc: int | None) -> list[tuple[int, tuple[int, int]]]:
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


def nproc(limits: Limits, sandbox: Sandbox) -> int | None:
    """RLIMIT_NPROC for a script: the slot's uid runs nothing but it ('uid'); without a uid of
    its own it counts all our processes (root ignores it); the other mechanisms set it inside
    their sandbox (sandbox.wrap)."""
    if limits.processes and sandbox.mechanism == "uid":
        return limits.processes
    if limits.processes and sandbox.uid is None and os.geteuid() != 0:
        return _user_processes() + limits.processes
    return None


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


# --- starting -------------------------------------------------------------------------


def launch_options(limits: list[tuple[int, tuple[int, int]]], sandbox: Sandbox, cgroup: Cgroup | None,
                   join: Sequence[Path] = ()) -> list[str]:  # fmt: skip
    """The launcher's options for a script of ``sandbox`` under ``limits`` in ``cgroup`` and
    the cgroup folders ``join`` (its fair-CPU cgroups)."""
    options: list[str] = []
    for directory in [*(cgroup.joins() if cgroup is not None else ()), *map(str, join)]:
        options += ["--cgroup", directory]
    for kind, (soft, hard) in limits:
        options += ["--rlimit", f"{kind}:{soft}:{hard}"]
    if sandbox.mechanism == "uid" and sandbox.uid is not None:  # the others switch inside their sandbox
        options += ["--uid", str(sandbox.uid)]
    program = seccomp_for(sandbox)
    if program:
        options += ["--seccomp", program.hex()]
    return options


def start(argv: list[str], workdir: str, limits: list[tuple[int, tuple[int, int]]], sandbox: Sandbox, stdin: bool,
          cwd: str | None = None, cgroup: Cgroup | None = None, join: Sequence[Path] = ()) -> subprocess.Popen:  # fmt: skip
    """Start ``argv`` through the launcher in its own session, under ``limits``, ``sandbox``
    and ``cgroup``; stdin a pipe (``stdin``) or at end-of-file. ``cwd``: where it starts
    (default ``workdir``). Raises OSError when the launcher could not set it up or exec it,
    as Popen does for a program it cannot exec."""
    report, channel = os.pipe()
    try:
        with _lock:
            proc = subprocess.Popen(
                [*launcher(), "--errfd", str(channel), *launch_options(limits, sandbox, cgroup, join), "--", *argv],
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd or workdir,
                env=script_env(workdir),
                start_new_session=True,
                bufsize=0,
                pass_fds=(channel,),
            )
            _live.add(proc.pid)
            _script_pids.append(proc.pid)
        os.close(channel)
        channel = -1
        failed = b""
        while chunk := os.read(report, 256):  # end-of-file: the launcher exec'd the command
            failed += chunk
    finally:
        os.close(report)
        if channel >= 0:
            os.close(channel)
    if failed:
        with _lock:
            proc.wait()
            _live.discard(proc.pid)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        step, _, number = failed.decode("ascii", "replace").partition(":")
        code = int(number) if number.isdigit() else 0
        raise OSError(code, os.strerror(code) if step == "exec" else f"{step}: {os.strerror(code)}")
    return proc


# --- keeping track of every process a script starts --------------------------------

_lock = threading.Lock()  # held while starting a script and while sweeping orphans
_live: set[int] = set()  # pid of each running script, whatever run it belongs to
_script_pids: collections.deque[int] = collections.deque(maxlen=4096)  # scripts started lately
_adopting = 0  # runs under way whose scripts' orphans we adopt


def reap(pid: int) -> tuple[int, resource.struct_rusage]:
    """Wait for the script ``pid`` (killed already) and forget it: (status, rusage)."""
    with _lock:
        _, status, usage = os.wait4(pid, 0)
        _live.discard(pid)
    return status, usage


def adopt_orphans(on: bool) -> None:
    """Be a child subreaper while runs need it: orphans of scripts (double forks, daemons)
    become our children, to kill and reap. Only runs without a process namespace need it
    ('none', 'uid'); under bwrap or unshare nothing escapes the namespace, and what a dying
    namespace leaves behind is better left to init than adopted."""
    global _adopting
    with _lock:
        _adopting += 1 if on else -1
        if (on and _adopting == 1) or (not on and _adopting == 0):
            try:
                _libc().prctl(36, int(on), 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
            except (OSError, AttributeError):
                pass


@functools.lru_cache(maxsize=None)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


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


def sweep_orphans() -> None:
    """Kill and reap every child of the grader that a script left behind. Other children
    (a Dask worker, a caller's own subprocesses) are left alone."""
    for _ in range(50):
        with _lock:
            strays = {pid for pid in _our_children() - _live if _is_script_process(pid)}
            for pid in strays:
                kill(pid)
        if not strays:
            return
        for pid in strays:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        time.sleep(0.005)


def end_uid(uid: int) -> None:
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


def end_namespace(pid: int, seconds: float = NAMESPACE_SECONDS) -> None:
    """End the PID namespace of the sandbox process ``pid`` (bwrap's, unshare's) from inside:
    SIGKILL its first process, the sandbox's child (the kernel kills the rest of the namespace
    with it), and give the sandbox, which reaps that process, ``seconds`` to end by itself.
    Killed first, the sandbox would leave it to the system's init, which in some containers
    reaps it late: until then a zombie charged to the slot's pids cgroup, for which the next
    script's process cap was raised (a fork bomb then got one process more when it was reaped)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            firsts = [int(p) for p in f.read().split()]
        pidfd = os.pidfd_open(pid)
    except OSError:
        return  # ended already
    try:
        for first in firsts:
            kill(first, signal.SIGKILL)
        if firsts:
            select.select([pidfd], [], [], seconds)
    finally:
        os.close(pidfd)


def kill_group(pid: int, cgroup: Cgroup | None, fair: FairCgroup | None = None) -> None:
    """SIGKILL a script's process group and every process of its cgroups (``fair``'s thawed first)."""
    if fair:
        fair.kill()
    kill(-pid, signal.SIGKILL)
    if cgroup:
        cgroup.kill()
