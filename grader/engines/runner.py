"""Running one untrusted script under limits, keeping control of it whatever it does.

Each run gets an empty private directory (removed afterwards, or emptied for a later run: a
grading run's), a minimal environment, stdin at end-of-file, and its own session (process
group). Resource limits bound its memory, CPU seconds, processes and file sizes; where a pids
cgroup (v1) is writable (Linux, as root) the scripts are also born in one, which caps
processes even for root and finds every descendant. Stdout goes to a sink as it arrives (the
caller scans it, keeping what it needs) up to a byte limit; a tail of stdout and stderr is
kept for diagnoses.

At the end of a run, at the wall-clock limit, or when its run's ``Stop`` is set (Ctrl-C),
everything the script started is killed: its process group, its cgroup, and any orphan it
left behind (the grader is a child subreaper, so orphans become its children and are reaped).

The script is started by spawn.py (through the launcher, never a fork of the grader), in its
job slot's cgroups (cgroups.py), in a work folder named after this grader (leftovers.py); under
bwrap as root, by its job slot's resident sandbox (resident.py), which serves the slot's runs
one after the other.
"""

from __future__ import annotations

import fcntl
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..errors import GraderError
from ..limits import Limits
from ..stop import Stop
from . import fairness, resident
from .cgroups import Cgroup, dedicate_this_thread
from .fairness import FairCgroup
from .leftovers import WorkFolders, work_folder
from .leftovers import kill as _signal
from .leftovers import process_id as _process_id
from .sandbox import Sandbox, wrap
from .spawn import (
    adopt_orphans,
    end_namespace,
    end_uid,
    kill_group,
    nproc,
    reap,
    rlimits,
    script_env,
    start,
    sweep_orphans,
)

# _process_id: the tests of dead graders' folders name a live grader with it
__all__ = ["Cgroup", "Run", "RunResult", "WorkFolders", "dedicate_this_thread", "run", "script_env",
           "work_folder", "_process_id"]  # fmt: skip

READ_BYTES = 1 << 16
# A script's stdout pipe is widened to this (Linux's default most for a pipe, pipe-max-size) and
# read in blocks as big: a flood is read in a sixteenth of the reads, each scanned from its end.
_STDOUT_PIPE = 1 << 20
_TAIL = 4096  # bytes of stdout and of stderr kept for showing
FLOOD_BYTES = 1 << 20  # a script that printed this much when it timed out is told it flooded its output
_GRACE = 0.2  # seconds to collect output still in the pipes once the script has ended
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
    sandbox_error: str | None = None  # why its job slot's resident sandbox failed it mid-run

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
        if self.start_error is not None or self.sandbox_error is not None:
            return True
        return not self.stopped_by_grader and self.exit_code not in (0, None)

    def describe(self) -> str:
        """How the run ended, in words ('' for a clean exit)."""
        if self.start_error:
            return self.start_error
        if self.sandbox_error:
            return f"could not be run to its end: {self.sandbox_error} (its job slot starts a new sandbox)"
        if self.interrupted:
            return "was interrupted"
        if self.output_limited:
            return f"was stopped after printing more than {_size(self.stdout_bytes)} (limits.output_bytes)"
        if self.timed_out and self.stdout_bytes >= FLOOD_BYTES:
            return (f"timed out after {self.wall_seconds:.1f} s and was killed, having printed "
                    f"{_size(self.stdout_bytes)}: a flood of output, which took its time")  # fmt: skip
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


def limit_note(exit_code: int, stderr: str, limits: Limits, out_of_memory: bool = False) -> str | None:
    """The limit a failing script most likely ran into, from how it died and its last words
    (``out_of_memory``: the kernel killed one of its processes at its memory cgroup's cap)."""
    if limits.output_bytes and (exit_code == -signal.SIGXFSZ or "File too large" in stderr):
        return f"it wrote a file larger than limits.output_bytes, {_size(limits.output_bytes)}"
    if limits.memory_mb and (out_of_memory or _OUT_OF_MEMORY.search(stderr)):
        return f"it ran out of memory: limits.memory_mb is {limits.memory_mb} MB"
    if limits.processes and _NO_PROCESSES.search(stderr):
        return f"it could not start more processes: limits.processes is {limits.processes}"
    if exit_code == 126:  # the shell's and the sandboxes' code for a program that cannot be executed
        return "its program could not be executed: it is not executable, or not a program"
    return None


# --- running ----------------------------------------------------------------------


def run(
    command: Sequence[str],
    limits: Limits | float,
    on_stdout: Callable[[bytes], None] | None = None,
    sandbox: Sandbox | str = Sandbox(),
    stop: Stop | None = None,
    script_dir: str | None = None,
    folders: WorkFolders | None = None,
) -> RunResult:
    """Run ``command`` in a fresh temporary directory under ``limits`` (or a wall-clock limit)
    and ``sandbox`` (or a mechanism's name), ``script_dir`` being the script's own folder;
    the directory one of ``folders``, given back emptied, where given.

    Setting ``stop`` kills the script at once; a run asked for after it is set never starts.
    """
    if not isinstance(limits, Limits):
        limits = Limits(wall_seconds=float(limits))
    if isinstance(sandbox, str):
        sandbox = Sandbox(sandbox)
    stop = stop or Stop()
    if stop.is_set():
        return RunResult(None, False, 0.0, 0.0, interrupted=True)
    cgroup = Cgroup.for_this_thread(limits.processes, limits.memory_mb)
    if resident.usable(sandbox, cgroup) and (fairness.for_this_thread() or not fairness.bases()):
        assert cgroup is not None
        done = _run_resident(list(command), limits, on_stdout, sandbox, stop, script_dir, cgroup)
        if done is not None:
            return done
    adopt = sandbox.mechanism in ("none", "uid")
    if adopt:
        adopt_orphans(True)
    workdir = folders.take() if folders is not None else work_folder()
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
        processes = None if cgroup else limits.processes  # a cgroup caps processes
        argv = wrap(sandbox, command, workdir, script_dir, processes, space=limits.output_bytes)
        # a job slot's thread is in its slot's CPU cgroups already; a script started elsewhere joins its own
        fair = None if cgroup is not None and fairness.for_this_thread() else fairness.take(sandbox.uid)
        try:
            return Run(argv, limits, on_stdout, workdir, stop, sandbox, cgroup, fair).result()
        finally:
            if fair is not None:
                fair.release()
    finally:
        if sandbox.mechanism == "uid" and sandbox.uid is not None:
            end_uid(sandbox.uid)
        if folders is not None:
            folders.give_back(workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        if sandbox.mechanism == "unshare":
            shutil.rmtree(workdir + ".root", ignore_errors=True)
        if adopt:
            adopt_orphans(False)


def _run_resident(command: list[str], limits: Limits, on_stdout: Callable[[bytes], None] | None, sandbox: Sandbox,
                  stop: Stop, script_dir: str | None, cgroup: Cgroup) -> RunResult | None:  # fmt: skip
    """``run`` in the job slot's resident sandbox (resident.py), started here if it has none;
    None when none can start (the run then takes a bwrap of its own, as every later one does)."""
    try:
        box = resident.for_this_thread(sandbox, limits.output_bytes, cgroup)
    except GraderError:
        return None
    if box.fresh:  # its processes now count as the slot's own: the script still gets limits.processes
        box.fresh = False
        Cgroup.for_this_thread(limits.processes, limits.memory_mb)
    return Run(command, limits, on_stdout, box.workdir, stop, sandbox, cgroup, box=box, script_dir=script_dir).result()


class Run:
    """One run: start, pump output until the end or a limit, then clean up everything."""

    def __init__(self, argv: list[str], limits: Limits, on_stdout, workdir: str, stop: Stop, sandbox: Sandbox,
                 cgroup: Cgroup | None, fair: FairCgroup | None = None, box: resident.Resident | None = None,
                 script_dir: str | None = None):  # fmt: skip
        self.argv, self.limits, self.on_stdout, self.workdir, self.stop = argv, limits, on_stdout, workdir, stop
        self.sandbox, self.cgroup, self.fair, self.box, self.script_dir = sandbox, cgroup, fair, box, script_dir
        self.broken: str | None = None  # why the resident sandbox failed the run
        self.out_tail, self.err_tail = bytearray(), bytearray()
        self.stdout_bytes = 0
        self.output_limited = False
        self.ended: float | None = None  # when the script exited or was killed
        self.cpu_at_kill = 0.0  # CPU seconds of the script's process tree just before the grader killed it

    def result(self) -> RunResult:
        limits = self.limits
        cgroup = self.cgroup
        resource_limits = rlimits(limits, nproc(limits, self.sandbox))
        began = time.monotonic()
        try:
            kills = cgroup.oom_kills() if cgroup else 0
            proc: subprocess.Popen | resident.Started
            if self.box is not None:
                options = resident.options(self.argv, self.workdir, resource_limits, self.sandbox, self.script_dir)
                proc = self.box.start(options, self.argv)
            else:
                proc = start(self.argv, self.workdir, resource_limits, self.sandbox, stdin=False, cgroup=cgroup,
                             join=self.fair.folders if self.fair else ())  # fmt: skip
        except resident.Broken as e:
            return RunResult(None, False, 0.0, 0.0, start_error=f"could not be started: {e}")
        except (OSError, subprocess.SubprocessError) as e:
            reason = getattr(e, "strerror", None) or str(e)
            return RunResult(None, False, 0.0, 0.0, start_error=f"could not be started: {self.argv[0]!r}: {reason}")
        # Registered after the start: a Stop set in between is seen by the check just below.
        fair = self.fair
        self.stop.watch(proc.pid, lambda: kill_group(proc.pid, cgroup, fair))
        timed_out = False
        try:
            if self.stop.is_set():
                kill_group(proc.pid, cgroup, fair)
            timed_out = self._pump(proc, cgroup, began + limits.wall_seconds)
        finally:
            status, cpu = self._clean_up(proc, cgroup)
        wall = (self.ended or time.monotonic()) - began  # the script's own time, not our cleanup
        if self.broken is not None:
            return RunResult(None, timed_out, wall, self.cpu_at_kill, self.out_tail.decode("utf-8", "replace"),
                             self.err_tail.decode("utf-8", "replace"), stdout_bytes=self.stdout_bytes,
                             sandbox_error=self.broken)  # fmt: skip
        exit_code = os.waitstatus_to_exitcode(status)
        if self.box is None and self.sandbox.mechanism in ("bwrap", "unshare") and 128 < exit_code < 128 + 65:
            exit_code = 128 - exit_code  # the namespace's first process exits 128+N when the script dies of signal N
        # A sandbox's first process killed before it reaps the script loses the script's usage
        # from its own: the tree's usage read just before the kill keeps it.
        cpu = max(cpu, self.cpu_at_kill)
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
            limit_note=limit_note(exit_code, stderr, limits, out_of_memory) if exit_code else None,
        )

    def _pump(self, proc: subprocess.Popen | resident.Started, cgroup: Cgroup | None, deadline: float) -> bool:
        """Read output until the script and its pipes are done; True if it hit the wall limit."""
        sel = selectors.DefaultSelector()
        pidfd = os.dup(proc.pidfd) if isinstance(proc, resident.Started) else os.pidfd_open(proc.pid)
        try:
            _widen(proc.stdout.fileno())  # type: ignore[union-attr]
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
            self.cpu_at_kill = tree_cpu_seconds(proc.pid)
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
                data = os.read(key.fd, _STDOUT_PIPE if key.data == "out" else READ_BYTES)
                if not data:
                    sel.unregister(key.fileobj)
                    continue
                if key.data == "err":
                    keep_tail(self.err_tail, data)
                    continue
                if limit is not None and self.stdout_bytes + len(data) > limit:
                    data = data[: limit - self.stdout_bytes]
                    self.output_limited = True
                self.stdout_bytes += len(data)
                if self.on_stdout:
                    self.on_stdout(data)
                keep_tail(self.out_tail, data)
                if self.output_limited:
                    sel.unregister(key.fileobj)
                    return False
        return True

    def _kill_everything(self, proc: subprocess.Popen | resident.Started, cgroup: Cgroup | None) -> None:
        """Kill the script's group, cgroup and orphans, leaving the script itself unreaped:
        while its zombie holds its pid, the group id cannot be reused by another process. A
        sandbox of its own (bwrap, unshare) is ended from inside first, so that it reaps its
        namespace itself."""
        if self.box is None and self.sandbox.mechanism in ("bwrap", "unshare"):
            if self.fair is not None:
                self.fair.thaw()  # a frozen namespace dies only once thawed
            end_namespace(proc.pid)
        kill_group(proc.pid, cgroup, self.fair)
        try:
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # dead, not yet reaped
        except ChildProcessError:
            pass
        ours = self.box is None  # a resident sandbox's script is its server's child, its orphans too: none to sweep
        give_up = time.monotonic() + 1.0
        for _ in range(2):  # again for any process forked while the first kill was going on
            if ours:
                sweep_orphans()
            _signal(-proc.pid, signal.SIGKILL)
            while cgroup and cgroup.kill() and time.monotonic() < give_up:
                if ours:
                    sweep_orphans()
                time.sleep(0.002)

    def _clean_up(self, proc: subprocess.Popen | resident.Started, cgroup: Cgroup | None) -> tuple[int, float]:
        """Kill everything the script started, then reap it (a resident sandbox's script: the
        sandbox's word on it; ``broken`` set where none came). Returns (wait status, CPU seconds)."""
        self._kill_everything(proc, cgroup)
        self.stop.unwatch(proc.pid)  # before the reap: once reaped, its pid may be reused
        if isinstance(proc, resident.Started):
            assert self.box is not None
            try:
                status, cpu = self.box.finish(proc)
            except resident.Broken as e:
                self.broken, status, cpu = str(e), 0, 0.0
        else:
            status, usage = reap(proc.pid)
            cpu = usage.ru_utime + usage.ru_stime
            sweep_orphans()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
        proc.returncode = os.waitstatus_to_exitcode(status)
        return status, cpu


def tree_cpu_seconds(pid: int) -> float:
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


def keep_tail(buf: bytearray, data: bytes) -> None:
    if len(data) > 2 * _TAIL:  # a block of a flood: only its end is kept, as below
        buf[:] = data[-_TAIL:]
        return
    buf += data
    if len(buf) > 2 * _TAIL:
        del buf[:-_TAIL]


def _widen(fd: int) -> None:
    """Make the pipe ``fd`` hold _STDOUT_PIPE bytes, where the system allows it (else as it is)."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _STDOUT_PIPE)
    except (OSError, AttributeError):  # over pipe-max-size, or no F_SETPIPE_SZ (Linux before 2.6.35)
        pass
