"""Fair CPU: each untrusted process tree (a test's script, an engine, a regression program)
in CPU cgroups of its own, so that no program can slow another down.

Each tree gets (where the system offers the controller, and the grader may use it: as root)

    cpu      an equal weight and a quota of its job slot's cores (cgroup v1 cpu.shares and
             cpu.cfs_quota_us, v2 cpu.weight and cpu.max); in a cgroup of its own, the
             kernel's per-session autogroups no longer apply, so children calling setsid()
             gain nothing
    cpuset   pinning to the cores of its job slot, where there are at least as many cores as slots
    freezer  freezing (v1 freezer.state, v2 cgroup.freeze): an engine not on move, and an
             engine waiting between its games, runs nothing at all
    cpuacct  the CPU time of the whole tree (v1 cpuacct.usage, v2 cpu.stat), for a CPU clock

Every process of a tree is born in its cgroups (it joins them between fork and exec, before
it runs anything of the script's); its children are born there too and cannot leave: the
cgroups' files belong to root, and a slot's uid may write only its own tree's.
"""

from __future__ import annotations

import atexit
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import GraderError

V1 = Path("/sys/fs/cgroup")
V2_MOUNTS = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))
PERIOD_US = 100_000  # the quota's period
FAIR_CPU = ("auto", "required")  # config.yaml's fair_cpu: use what works (and say what does not), or refuse
_FREEZE_SECONDS = 2.0  # the most a freeze or thaw is waited for


@dataclass(frozen=True)
class Support:
    """What this machine enforces of fair CPU, and through which cgroup version."""

    share: str | None  # 'v1', 'v2': equal weight and a quota; None: not enforced
    pinning: str | None  # cpuset
    freezing: str | None  # freezer
    accounting: str | None  # CPU time of the whole tree
    cores: tuple[int, ...] = ()  # the cores the grader may use

    @property
    def complete(self) -> bool:
        """The share and the freezing are enforced (pinning needs enough cores: a bonus)."""
        return self.share is not None and self.freezing is not None

    def lines(self) -> list[str]:
        """What is and is not enforced, a line each (``grader doctor``)."""

        def said(what: str, how: str | None) -> str:
            return f"{what}: {'yes (cgroup ' + how + ')' if how else 'no'}"

        return [
            said("an equal, bounded CPU share per program (cpu)", self.share),
            said(f"pinning to the job slot's cores (cpuset, {len(self.cores)} cores)", self.pinning),
            said("engines frozen off move and between games (freezer)", self.freezing),
            said("CPU time of a program's whole tree (cpuacct)", self.accounting),
        ]

    def missing(self) -> str | None:
        """One line saying what is not enforced and what that allows, with the fix; None when complete."""
        if self.complete:
            return None
        gone = [name for name, how in (("cpu share", self.share), ("freezer", self.freezing)) if how is None]
        return (
            f"fair CPU is not enforced here (no writable {' or '.join(gone)} cgroup: the grader runs as root "
            "with cgroup v1's cpu and freezer controllers, or v2's cpu controller delegated), so a program "
            "starting busy processes can slow others' tests and games; set 'fair_cpu: required' in config.yaml "
            "to refuse such runs"
        )


# --- the hierarchies ----------------------------------------------------------------------

_CONTROLLERS = {  # v1 hierarchy -> the file a cgroup of it must have; the freezer first (a dead
    # grader's frozen programs are thawed and killed before its other cgroups are removed)
    "freezer": "freezer.state",
    "cpu": "cpu.cfs_quota_us",
    "cpuset": "cpuset.cpus",
    "cpuacct": "cpuacct.usage",
}


class _Hierarchies:
    """The cgroup folders this process may make cgroups in, probed once."""

    def __init__(self) -> None:
        self.v1: dict[str, Path] = {}
        self.v2: Path | None = None
        self.v2_controllers: set[str] = set()
        self.cores: tuple[int, ...] = tuple(sorted(os.sched_getaffinity(0)))
        self.mems = "0"

    @classmethod
    def probe(cls, name: str, stale: Callable[[str], bool]) -> _Hierarchies:
        """What this process may use (as root only: a delegated v2 subtree is not looked for);
        cgroups named as ``stale`` says (dead graders') are removed on the way."""
        found = cls()
        if os.geteuid() != 0:
            return found
        for controller, needed in _CONTROLLERS.items():
            base = V1 / controller
            _remove_stale(base, stale)
            if _makes(base, name, needed):
                found.v1[controller] = base
        if "cpuset" in found.v1:  # the cores both the cpuset and this process's affinity allow (taskset)
            offered = _cpu_list(_read(found.v1["cpuset"] / "cpuset.effective_cpus") or
                                _read(found.v1["cpuset"] / "cpuset.cpus"))  # fmt: skip
            found.cores = tuple(c for c in offered if c in found.cores) or offered or found.cores
            found.mems = _read(found.v1["cpuset"] / "cpuset.mems") or "0"
        if "cpu" in found.v1 and "freezer" in found.v1:
            return found  # v2 would add nothing
        for base in V2_MOUNTS:
            if not _is_cgroup2(base):
                continue
            _remove_stale(base, stale)
            if _makes(base, name, "cgroup.freeze"):
                found.v2 = base
                controllers = set((_read(base / "cgroup.controllers") or "").split())
                for controller in ("cpu", "cpuset"):
                    if controller in controllers and controller not in found.v1:
                        if write_control(base / "cgroup.subtree_control", f"+{controller}"):
                            found.v2_controllers.add(controller)
            break
        return found

    def support(self) -> Support:
        v2 = self.v2_controllers

        def how(controller: str, v2_too: bool = False) -> str | None:
            if controller in self.v1:
                return "v1"
            return "v2" if self.v2 is not None and (v2_too or controller in v2) else None

        share = how("cpu")
        pinning = how("cpuset")
        freezing = how("freezer", v2_too=True)
        accounting = "v1" if "cpuacct" in self.v1 else ("v2" if self.v2 is not None else None)
        return Support(share, pinning, freezing, accounting, self.cores)


def _is_cgroup2(path: Path) -> bool:
    return (path / "cgroup.controllers").exists()


def _remove_stale(base: Path, stale: Callable[[str], bool]) -> None:
    """Remove the cgroups in ``base`` that ``stale`` names (a dead grader's), thawing and
    killing what still runs in them."""
    for folder in base.glob("grader-*"):
        if not folder.is_dir() or not stale(folder.name):
            continue
        if (folder / "cgroup.freeze").exists():
            FairCgroup({}, folder, set(), "0").remove()
        else:
            FairCgroup(
                {"freezer" if (folder / "freezer.state").exists() else base.name: folder}, None, set(), "0"
            ).remove()


def _makes(base: Path, name: str, needed: str) -> bool:
    """Whether this process may make a cgroup in ``base`` that has the file ``needed``."""
    probe = base / f"{name}probe"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return (probe / needed).exists()
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cpu_list(text: str | None) -> tuple[int, ...]:
    """'0-3,6' -> (0, 1, 2, 3, 6)."""
    out: list[int] = []
    for part in (text or "").split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part.strip():
            out.append(int(part))
    return tuple(out)


def slot_cores(cores: tuple[int, ...], slot: int | None, jobs: int | None) -> tuple[tuple[int, ...], float]:
    """The cores a job slot's programs are pinned to (() where there are fewer cores than
    slots, or no slot), and the cores' worth of CPU time its quota gives each program."""
    if not cores:
        return (), 1.0
    if slot is None or not jobs or jobs > len(cores):
        return (), max(0.1, len(cores) / max(1, jobs or 1))
    per = len(cores) // jobs
    return cores[(slot % jobs) * per : (slot % jobs + 1) * per], float(per)


# --- one process tree's cgroups -----------------------------------------------------------


class FairCgroup:
    """The CPU cgroups of one process tree: made on first use, kept for the next tree once
    empty, removed at exit."""

    def __init__(self, dirs: dict[str, Path], v2: Path | None, v2_controllers: set[str], mems: str):
        self.v1 = dirs  # controller -> folder
        self.v2 = v2
        self._v2_controllers = v2_controllers
        self._mems = mems
        self.cores: tuple[int, ...] = ()
        self.quota = 0.0
        self.uid: int | None = None
        self.joined = False  # a job slot's thread is in it (``for_this_thread``)

    @property
    def folders(self) -> list[Path]:
        """Every folder a process of the tree joins (its cgroup.procs) before it runs."""
        return [*self.v1.values(), *([self.v2] if self.v2 else [])]

    def _set(self, cores: tuple[int, ...], quota: float, uid: int | None) -> None:
        """Pin to ``cores`` (all the grader's if empty) with ``quota`` cores' worth of time,
        writable for ``uid`` (the slot's uid, which joins them after it takes over: 'uid')."""
        quota_us = max(1000, round(quota * PERIOD_US))
        weight = _starter_weight()
        if "cpu" in self.v1:
            write_control(self.v1["cpu"] / "cpu.shares", str(max(2, min(262144, round(1024 * weight)))))
            write_control(self.v1["cpu"] / "cpu.cfs_period_us", str(PERIOD_US))
            write_control(self.v1["cpu"] / "cpu.cfs_quota_us", str(quota_us))
        elif self.v2 and "cpu" in self._v2_controllers:
            write_control(self.v2 / "cpu.weight", str(max(1, min(10000, round(100 * weight)))))
            write_control(self.v2 / "cpu.max", f"{quota_us} {PERIOD_US}")
        everywhere = _hierarchies().cores
        cpus = ",".join(map(str, cores or everywhere))
        if "cpuset" in self.v1:
            write_control(self.v1["cpuset"] / "cpuset.mems", self._mems)
            write_control(self.v1["cpuset"] / "cpuset.cpus", cpus)
        elif self.v2 and "cpuset" in self._v2_controllers:
            write_control(self.v2 / "cpuset.cpus", cpus)
        if uid != self.uid:
            for folder in self.folders:
                try:
                    os.chown(folder / "cgroup.procs", uid if uid is not None else 0, -1)
                except OSError:
                    pass
        self.cores, self.quota, self.uid = cores, quota, uid

    def place(self, slot: int | None = None, jobs: int | None = None) -> None:
        """Pin to the cores of job slot ``slot`` of ``jobs`` (None: the calling thread's slot)."""
        if slot is None:
            slot, jobs = this_slot()
        cores, quota = slot_cores(_hierarchies().cores, slot, jobs)
        if (cores, quota) != (self.cores, self.quota):
            self._set(cores, quota, self.uid)

    def pids(self) -> list[int]:
        """The processes in the tree's cgroups now."""
        out: set[int] = set()
        for folder in self.folders:
            out.update(int(p) for p in (_read(folder / "cgroup.procs") or "").split())
        return sorted(out)

    # freezing

    def freeze(self) -> bool:
        """Stop every process of the tree until ``thaw`` (an engine off move); True once frozen."""
        return self._freeze(True)

    def thaw(self) -> bool:
        """Let the tree run again; True once thawed."""
        return self._freeze(False)

    def _freeze(self, on: bool) -> bool:
        if "freezer" in self.v1:
            state = self.v1["freezer"] / "freezer.state"
            wanted = "FROZEN" if on else "THAWED"
            if not write_control(state, wanted):
                return False
            give_up = time.monotonic() + _FREEZE_SECONDS
            while _read(state) != wanted and time.monotonic() < give_up:
                time.sleep(0.001)
                write_control(state, wanted)  # v1 may stop at FREEZING while a task forks: asking again goes on
            return _read(state) == wanted
        if self.v2 is not None:
            if not write_control(self.v2 / "cgroup.freeze", "1" if on else "0"):
                return False
            give_up = time.monotonic() + _FREEZE_SECONDS
            while self.frozen() != on and time.monotonic() < give_up:
                time.sleep(0.001)
            return self.frozen() == on
        return False

    def frozen(self) -> bool:
        """Whether the tree is frozen now (as the kernel says)."""
        if "freezer" in self.v1:
            return _read(self.v1["freezer"] / "freezer.state") == "FROZEN"
        if self.v2 is not None:
            events = _read(self.v2 / "cgroup.events") or ""
            return "frozen 1" in events.splitlines()
        return False

    def cpu_seconds(self) -> float | None:
        """CPU seconds the tree's processes have used in these cgroups (None: not counted here)."""
        if "cpuacct" in self.v1:
            used = _read(self.v1["cpuacct"] / "cpuacct.usage")
            return int(used) / 1e9 if used and used.isdigit() else None
        if self.v2 is not None:
            for line in (_read(self.v2 / "cpu.stat") or "").splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
        return None

    def kill(self) -> bool:
        """Thaw the tree (a frozen process dies only once thawed) and SIGKILL its processes
        (never the grader); True if there were any."""
        self.thaw()
        others = [p for p in self.pids() if p != os.getpid()]
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return bool(others)

    def release(self) -> None:
        """The tree is over: kill what is left and keep the cgroups for the next tree."""
        self.kill()
        give_up = time.monotonic() + 1.0
        while self.pids() and time.monotonic() < give_up:
            time.sleep(0.002)
            self.kill()
        with _lock:
            _free.append(self)

    def remove(self) -> None:
        """Kill what runs in the cgroups, send this process's threads back up, remove them."""
        self.kill()
        ours = set(os.listdir("/proc/self/task")) if self.joined else set()
        for folder in self.folders:
            for tid in set((_read(folder / "tasks") or "").split()) & ours:
                write_control(folder.parent / "tasks", tid)
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except OSError:
                    if not folder.exists():
                        break
                    time.sleep(0.01)


def _starter_weight() -> float:
    """The CPU weight of the calling thread's nice value against nice 0's (the kernel's: 1.25
    times less per step): a tree's cgroup weighs what its starter does, so that a grader run
    below other work (the portal's grading, niced below its pages) keeps its scripts below it
    too, where a cgroup of the default weight would lift them back to nice 0's."""
    try:
        nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())  # Linux: the thread's own
    except (AttributeError, OSError):
        return 1.0
    return float(1.25**-nice)


def write_control(path: Path, text: str) -> bool:
    """Write a cgroup's control file (or a task into its ``tasks``); False where the kernel refuses."""
    try:
        path.write_text(text)
        return True
    except OSError:
        return False


# --- the grader's own: probed once, a pool of cgroups, job slots ---------------------------

_lock = threading.Lock()
_probed: _Hierarchies | None = None
_all: list[FairCgroup] = []
_free: list[FairCgroup] = []
_counter = itertools.count()
_slot = threading.local()
_naming: tuple[Callable[[], str], Callable[[str], bool]] = (lambda: f"grader-cpu-{os.getpid()}-", lambda name: False)


def configure(prefix: Callable[[], str], stale: Callable[[str], bool]) -> None:
    """Name this grader's cgroups ``prefix()`` followed by a number or 'probe', and take those
    ``stale`` names for a dead grader's (the runner names them after the grader, as its own)."""
    global _naming
    _naming = (prefix, stale)


def _hierarchies() -> _Hierarchies:
    global _probed
    with _lock:
        if _probed is None:
            _probed = _Hierarchies.probe(_naming[0](), _naming[1])
        return _probed


def support() -> Support:
    """What this machine enforces of fair CPU, for this process."""
    return _hierarchies().support()


def bases() -> list[Path]:
    """The cgroup folders this grader makes its fair-CPU cgroups in."""
    found = _hierarchies()
    return [*found.v1.values(), *([found.v2] if found.v2 else [])]


def assign_slot(slot: int, jobs: int) -> None:
    """The calling thread is job slot ``slot`` of ``jobs``: its programs are pinned to that slot's cores."""
    _slot.value = (slot, jobs)


def this_slot() -> tuple[int | None, int | None]:
    """The calling thread's job slot and the number of slots ((None, None): not a job slot)."""
    return getattr(_slot, "value", (None, None))


def take(uid: int | None = None) -> FairCgroup | None:
    """Cgroups for a new process tree started by this thread (pinned to its job slot's cores,
    writable for ``uid``), or None where the machine offers none."""
    found = _hierarchies()
    if not found.v1 and found.v2 is None:
        return None
    with _lock:
        ready = next((c for c in _free if not c.pids()), None)
        if ready is not None:
            _free.remove(ready)
    if ready is None:
        ready = _make(found)
        if ready is None:
            return None
    ready.thaw()
    slot, jobs = this_slot()
    cores, quota = slot_cores(found.cores, slot, jobs)
    ready._set(cores, quota, uid)
    return ready


def for_this_thread() -> FairCgroup | None:
    """The cgroups of the calling thread, a job slot's that starts only scripts: it joins
    them once (all but the freezer: scripts are not frozen), so that every script it starts
    is born in them. A script that moved itself in would cost a grace period of the kernel's
    RCU, 10-20 ms a test. Their cgroups go back to the pool when the thread ends. None where
    a thread cannot join (no v1 hierarchy) or there are no cgroups."""
    mine = getattr(_slot, "cgroup", None)
    if mine is not None:
        return mine
    made = take()
    if made is None or not made.v1 or made.v2 is not None:
        if made is not None:
            made.release()
        return None
    tid = str(threading.get_native_id())
    for controller, folder in made.v1.items():
        if controller != "freezer" and not write_control(folder / "tasks", tid):
            made.release()
            return None
    made.joined = True
    with _lock:
        _free.append(made)  # taken again only once empty: once the thread has ended
    _slot.cgroup = made
    return made


def _make(found: _Hierarchies) -> FairCgroup | None:
    name = f"{_naming[0]()}{next(_counter)}"
    v1: dict[str, Path] = {}
    v2: Path | None = None
    try:
        for controller, base in found.v1.items():
            (base / name).mkdir()
            v1[controller] = base / name
        if found.v2 is not None:
            (found.v2 / name).mkdir()
            v2 = found.v2 / name
    except OSError:
        for folder in [*v1.values(), *([v2] if v2 else [])]:
            try:
                folder.rmdir()
            except OSError:
                pass
        return None
    made = FairCgroup(v1, v2, found.v2_controllers, found.mems)
    with _lock:
        if not _all:
            atexit.register(_remove_all)
        _all.append(made)
    return made


def _remove_all() -> None:
    with _lock:
        made, _all[:], _free[:] = list(_all), [], []
    for cgroup in made:
        cgroup.remove()


def check(setting: str) -> str | None:
    """What of fair CPU is not enforced here, in one line (None: all of it is). Raises
    GraderError where ``setting`` (config.yaml's fair_cpu) is 'required' and something is missing."""
    if setting not in FAIR_CPU:
        raise GraderError(f"unknown fair_cpu {setting!r}: use one of {', '.join(FAIR_CPU)}")
    missing = support().missing()
    if setting == "required" and missing:
        raise GraderError(f"{missing.split('; set ')[0]}; 'fair_cpu: required' in config.yaml refuses to run "
                          "without it: run as root where the controllers are, or set 'fair_cpu: auto'")  # fmt: skip
    return missing
