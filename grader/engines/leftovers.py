"""What a grader killed with SIGKILL leaves behind, and how the next one tells it: every cgroup
and work folder is named after its grader (``grader_id``), so a later grader removes those of
dead graders of its PID namespace, and never a live grader's, a reused pid's or one of another
namespace's."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from pathlib import Path

from .sandbox import SLOT_UIDS

_WORK = re.compile(r"grader-(?:scripts-|doctor-)?(\d+)-(\d+-\d+)-[a-z0-9_]{8}(?:\.root)?")
_swept = threading.Lock()  # held for good once this process has swept


def process_id(pid: int) -> str | None:
    """'PID-STARTTIME': a process, told apart from a later one given the same pid."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f"{pid}-{f.read().rsplit(')', 1)[1].split()[19]}"
    except (OSError, IndexError):
        return None


def grader_id() -> str | None:
    """'NAMESPACE-PID-STARTTIME': this grader, told apart from a later process given its pid
    and from a process of another PID namespace (whose pids ours cannot tell); None without /proc."""
    me = process_id(os.getpid())
    try:
        return None if me is None else f"{os.stat('/proc/self/ns/pid').st_ino}-{me}"
    except OSError:
        return None


def dead_grader(namespace: str, process: str) -> bool:
    """True when the grader named by a grader_id() of this PID namespace has ended."""
    mine = grader_id()
    return mine is not None and mine.split("-")[0] == namespace and process_id(int(process.split("-")[0])) != process


def kill(pid: int, sig: int = signal.SIGKILL) -> bool:
    """Send ``sig`` to ``pid`` (a negative pid: a process group); False if it is gone or not ours."""
    try:
        os.kill(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def work_folder(prefix: str = "grader-") -> str:
    """A new private folder in the temporary directory, named after this grader (grader_id()),
    made after ``sweep_work_folders()``."""
    me = grader_id()
    if me is None:
        return tempfile.mkdtemp(prefix=prefix)  # no /proc: nothing to tell the dead by
    sweep_work_folders()
    return tempfile.mkdtemp(prefix=f"{prefix}{me}-")


def sweep_work_folders() -> None:
    """Remove, once per process, the work folders of graders of this PID namespace that died
    without removing theirs (killed with SIGKILL): copies of scripts, their runs' files and
    doctor's attack folders, owned by this user (or by a job slot's uid). Every command of
    the CLI calls it as it starts, the first work folder a library caller makes too."""
    if grader_id() is None or not _swept.acquire(blocking=False):
        return
    owners = {os.geteuid(), *(SLOT_UIDS if os.geteuid() == 0 else ())}
    for stale in Path(tempfile.gettempdir()).glob("grader-*"):
        named = _WORK.fullmatch(stale.name)
        if not named or not dead_grader(named[1], named[2]):
            continue
        try:
            st = stale.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid in owners:
            shutil.rmtree(stale, ignore_errors=True)  # never follows a link
