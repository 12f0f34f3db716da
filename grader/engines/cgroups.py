"""The cgroups of a job slot (cgroup v1, writable: Linux as root): a pids cgroup that caps and
lists every process the slot's scripts start, and beside it, named alike, a cgroup of each
other controller the system offers (memory: the cap of a script's processes together).

A script is born in its slot's cgroups: the slot's thread moves itself into them once, on its
first run (cgroup v1 places threads one by one), and the processes it starts are born where it
is. Moving a process costs a grace period of the kernel's RCU (about 10 ms, more on a loaded
machine) while cgroup v1's lock is taken for writing; a thread that moves once spares every
script that cost. The grader's process stays outside: its main thread, whose memory is the
process's, is in none of them, and the kernel's memory-cap kills choose among the processes
whose first thread is in the cgroup, never among threads, so never the grader. Where the thread
could not move, the launcher a script is started through (spawn.py) writes its own pid into
each directory of ``Cgroup.joins()`` before it execs the script; either way the grader never
forks to put it there. A controller is one entry of ``CONTROLLERS``: adding one (cpu,
cpuset, freezer) adds a directory to each slot and to the list its scripts join, and touches
neither the launcher nor the spawn path.

Cgroups are named after their grader (leftovers.grader_id): a grader removes those of dead
graders of its PID namespace (killed with SIGKILL) when it first probes, and its own at exit.
"""

from __future__ import annotations

import atexit
import itertools
import os
import re
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from . import fairness
from .leftovers import dead_grader, grader_id, kill

ROOT = Path("/sys/fs/cgroup")
SETTLE_SECONDS = 0.1  # the most a job slot waits for its last script's killed processes to be reaped


@dataclass(frozen=True)
class Controller:
    """A cgroup v1 hierarchy a slot's scripts are placed in: its folder under /sys/fs/cgroup,
    and a file every cgroup of it has (its presence says the controller works here)."""

    name: str
    probe: str


# pids first: without it a slot has no cgroups at all (it is what kill() and the process cap use)
CONTROLLERS: tuple[Controller, ...] = (Controller("pids", "pids.max"), Controller("memory", "memory.limit_in_bytes"))

# 'ns' before the namespace: earlier graders took a name's first number for a pid, so to them
# a live grader's cgroup would look stale
_NAME = re.compile(r"grader-ns(\d+)-(\d+-\d+)-(?:\d+|probe|cpu(?:\d+|probe))")


def _stale(name: str) -> bool:
    """Whether a cgroup of this name is a dead grader's (of this PID namespace)."""
    named = _NAME.fullmatch(name)
    return named is not None and dead_grader(named[1], named[2])


fairness.configure(lambda: f"grader-ns{grader_id()}-cpu", _stale)  # fair CPU's cgroups: named and swept alike


class Cgroup:
    """The cgroups of the scripts one worker thread (a job slot) starts, one per controller
    offered here, all of the same name. The process cap (pids.max) and the memory cap
    (memory.limit_in_bytes, and memory.memsw where the kernel counts swap) are set per run:
    past the memory cap the kernel kills one of the scripts' processes, never the grader."""

    _bases: dict[str, Path] | None = None  # controller -> hierarchy this process may make cgroups in
    _counter = itertools.count()
    _local = threading.local()
    _lock = threading.Lock()
    _all: list[Cgroup] = []

    def __init__(self, dirs: dict[str, Path]):
        self.dirs = dirs  # controller -> this slot's directory in it
        self.owner: threading.Thread | None = None  # the thread whose scripts it holds
        self.memory_mb: int | None = None  # the memory cap now
        self.inside: set[str] = set()  # controllers whose cgroup the owner thread is in (its scripts are born there)
        self.residents: set[int] = set()  # the slot's resident sandbox's processes: counted as its own, never killed

    @property
    def path(self) -> Path:
        """The pids cgroup's directory."""
        return self.dirs["pids"]

    @property
    def memory(self) -> Path | None:
        """The memory cgroup's directory, None where there is none."""
        return self.dirs.get("memory")

    def joins(self) -> list[str]:
        """The directories a script of this slot joins before it execs (the launcher's --cgroup):
        those its slot's thread could not move into."""
        return [str(d) for controller, d in self.dirs.items() if controller not in self.inside]

    @classmethod
    def for_this_thread(cls, processes: int | None, memory_mb: int | None = None) -> Cgroup | None:
        """The cgroups of this thread, made on its first use, capped at ``processes`` and
        ``memory_mb`` (None: no cap); None for a thread not dedicated to running scripts (one
        script at a time is what lets kill() take the whole cgroup)."""
        if not getattr(cls._local, "dedicated", False):
            return None
        cgroup = getattr(cls._local, "cgroup", None)
        if cgroup is None:
            cgroup = cls._local.cgroup = cls._take()
            if cgroup is None:
                return None
            cgroup._enter()
        stuck = cgroup._settle()
        try:  # what else is charged there counts against pids.max: the script may start ``processes``
            (cgroup.path / "pids.max").write_text(str(processes + cgroup._own() + stuck) if processes else "max")
        except OSError:
            pass
        cgroup._limit_memory(memory_mb)
        return cgroup

    def _enter(self) -> None:
        """Move the calling thread (the owner) into each of the cgroups it can."""
        tid = str(threading.get_native_id())
        self.inside = {controller for controller, d in self.dirs.items() if fairness.write_control(d / "tasks", tid)}

    def _settle(self) -> int:
        """How many processes other than the grader's threads stay charged to the pids cgroup
        after SETTLE_SECONDS: a process left from the cgroup's last script, killed, counts
        against pids.max until it is reaped (by the grader, or by an init that may never reap
        it), and would take one of the next script's processes."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            try:
                stuck = int((self.path / "pids.current").read_text()) - self._own()
            except (OSError, ValueError):
                return 0
            if stuck <= 0 or time.monotonic() > deadline:
                return max(stuck, 0)
            self.kill()
            time.sleep(0.005)

    def _own(self) -> int:
        """How many of the grader's threads, and processes of the slot's resident sandbox, are in the pids cgroup."""
        if "pids" not in self.inside:
            return 0
        try:
            tasks = set((self.path / "tasks").read_text().split())
        except OSError:
            return 1 + len(self.residents)
        return len(tasks & ({*os.listdir("/proc/self/task"), *map(str, self.residents)}))

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
    def _take(cls) -> Cgroup | None:
        """Cgroups for this thread: those of a thread that ended, left empty, or new ones."""
        bases = cls.find_bases()
        if not bases:
            return None
        me = threading.current_thread()
        with cls._lock:
            free = [c for c in cls._all if c.owner is not None and not c.owner.is_alive() and not c.procs()]
            if free:
                free[0].owner, free[0].residents = me, set()  # the ended thread's sandbox ended with it
                return free[0]
            name = f"grader-ns{grader_id()}-{next(cls._counter)}"
            cgroup = cls({})
            for controller, base in bases.items():
                try:
                    (base / name).mkdir()
                    cgroup.dirs[controller] = base / name
                except OSError:
                    if controller == "pids":
                        return None
            if not cls._all:
                atexit.register(cls._remove_all)
            cgroup.owner = me
            cls._all.append(cgroup)
        return cgroup

    def procs(self) -> list[int]:
        """The processes in the pids cgroup."""
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    @classmethod
    def find_base(cls) -> Path | None:
        """The pids cgroup hierarchy this process may make cgroups in (probed once), or None."""
        return cls.find_bases().get("pids")

    @classmethod
    def find_bases(cls) -> dict[str, Path]:
        """Each controller's hierarchy this process may make cgroups in (probed once); none
        at all without the pids one."""
        with cls._lock:
            if cls._bases is None:
                cls._bases = {}
                for controller in CONTROLLERS:
                    base = _probe(ROOT / controller.name, controller.probe)
                    if base is None and controller.name == "pids":
                        break
                    if base is not None:
                        cls._bases[controller.name] = base
            return cls._bases

    def kill(self) -> bool:
        """SIGKILL every process in the cgroup (never the grader, nor the slot's resident sandbox);
        True if there were any."""
        others = [p for p in self.procs() if p != os.getpid() and p not in self.residents]
        for pid in others:
            kill(pid)
        return bool(others)

    @classmethod
    def _remove_all(cls) -> None:
        ours = set(os.listdir("/proc/self/task"))
        for cgroup in cls._all:
            for path in cgroup.dirs.values():
                try:  # the grader's threads still in it go back up first
                    for tid in set((path / "tasks").read_text().split()) & ours:
                        fairness.write_control(path.parent / "tasks", tid)
                except OSError:
                    pass
                remove_cgroup(path)


def dedicate_this_thread() -> None:
    """Mark the calling thread as one that starts only scripts, one at a time (a job slot):
    its scripts then join cgroups of its own, where the system offers them."""
    Cgroup._local.dedicated = True


def _probe(base: Path, limit: str) -> Path | None:
    """``base`` if this process may make cgroups there that have ``limit``, else None (after
    removing dead graders' cgroups there)."""
    _remove_stale(base)
    probe = base / f"grader-ns{grader_id()}-probe"
    try:
        probe.mkdir()
        ok = (probe / limit).exists() and (probe / "cgroup.procs").exists()
        probe.rmdir()
        return base if ok else None
    except OSError:
        return None


def _remove_stale(base: Path) -> None:
    """Remove the cgroups of graders of this PID namespace that died without removing theirs
    (killed with SIGKILL), killing what still runs in them."""
    for stale in base.glob("grader-*"):
        named = _NAME.fullmatch(stale.name)
        if named and dead_grader(named[1], named[2]):
            remove_cgroup(stale)


def remove_cgroup(path: Path) -> None:
    """Kill what runs in the cgroup at ``path`` (never this process), let it leave, remove the cgroup."""
    try:
        for pid in (path / "cgroup.procs").read_text().split():
            if int(pid) != os.getpid():
                kill(int(pid), signal.SIGKILL)
        for _ in range(100):  # the killed leave in a moment
            if not (path / "cgroup.procs").read_text().split():
                break
            time.sleep(0.01)
        path.rmdir()
    except OSError:
        pass
