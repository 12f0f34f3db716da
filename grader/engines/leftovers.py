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
import weakref
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


class WorkFolders:
    """Work folders kept for the next run (a grading run's, say): each run takes an empty one
    (``take``) and gives it back (``give_back``), emptied. Reusing one spares a mkdir and an
    rmdir per run, which on a disk's file system under load cost milliseconds (its journal).
    ``close`` removes them (at exit too, if never called)."""

    def __init__(self) -> None:
        self._kept: list[str] = []
        self._lock = threading.Lock()
        weakref.finalize(self, _remove_all, self._kept, self._lock)

    def take(self) -> str:
        """An empty private work folder: one a run gave back, else a new one (``work_folder``)."""
        with self._lock:
            if self._kept:
                return self._kept.pop()
        return work_folder()

    def give_back(self, folder: str) -> None:
        """Keep ``folder`` for the next run once emptied (``empty``), else remove it."""
        if empty(folder):
            with self._lock:
                self._kept.append(folder)

    def close(self) -> None:
        """Remove every folder kept."""
        _remove_all(self._kept, self._lock)


def _remove_all(kept: list[str], lock: threading.Lock) -> None:
    with lock:
        folders, kept[:] = list(kept), []
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def empty(folder: str) -> bool:
    """Empty ``folder`` of everything a run left there (whatever its names and modes; links are
    removed, never followed) and set it back to the grader's, mode 0700, with no extended
    attribute but the system's labels (an ACL or data a script set would outlive it): True. A
    folder that cannot be brought back to that is removed: False. Call it once every process of
    the run has ended."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise OSError(f"{folder} is no longer a folder")
        os.lchown(folder, os.geteuid(), os.getegid())
        os.chmod(folder, 0o700)
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                _remove_tree(entry.path)
            else:
                os.unlink(entry.path)
        for name in os.listxattr(folder, follow_symlinks=False):
            if not name.startswith("security."):  # the system's own labels (SELinux) stay
                os.removexattr(folder, name, follow_symlinks=False)
        if os.listdir(folder):
            raise OSError(f"{folder} could not be emptied")
    except OSError:
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                os.unlink(folder)  # a file or a link the run put in its place
                return False
        except OSError:
            return False
        _remove_tree(folder, ignore_errors=True)
        return False
    return True


def _remove_tree(path: str, ignore_errors: bool = False) -> None:
    """Remove the folder ``path``, also where a script took its own folders' permissions away
    (chmod 0: a grader not root could neither list nor empty them): opened to their owner, top
    down, and removed again."""
    try:
        shutil.rmtree(path)
        return
    except OSError:
        pass
    _open_up(path)
    for root, folders, _ in os.walk(path):  # each folder opened before the walk lists it
        for name in folders:
            _open_up(os.path.join(root, name))
    shutil.rmtree(path, ignore_errors=ignore_errors)


def _open_up(folder: str) -> None:
    try:
        if not os.path.islink(folder):
            os.chmod(folder, 0o700)
    except OSError:
        pass


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
