"""Isolation: what a script can see and do beyond the limits, and which mechanism runs it here
(each is tried once, through the runner; the mechanisms themselves are in sandbox.py).

    auto     the strongest mechanism that works here: bwrap, else unshare, else (as root) uid
    bwrap    bubblewrap: no network, its own process, IPC and UTS namespaces, a file system of
             the system folders, the interpreter, its own folder (read-only) and its test
             directory; a fresh /proc and /tmp
    unshare  the same built with util-linux unshare and a small mount script
    uid      as root without namespaces (some containers): each job slot runs scripts as its
             own unprivileged uid, with no network (a seccomp filter), its files copied into
             its test directory, and the grader's files out of its reach by their permissions
    none     the limits only

Whenever the grader runs as root, scripts run as an unprivileged uid of their job slot (never
root) under every mechanism but ``none`` (the limits only: as the grader's own user): the
slot's uid is claimed for the life of the process, so no other grader on the machine shares it.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Sequence

from ..errors import GraderError, GraderWarning
from ..limits import Limits
from . import runner
from .sandbox import (
    ISOLATIONS,
    MECHANISMS,
    PRLIMIT,
    SETPRIV,
    SLOT_UIDS,
    Sandbox,
    claim_uid,
    missing_tool,
    release_uid,
    tool_path,
)

__all__ = ["ISOLATIONS", "MECHANISMS", "SLOT_UIDS", "Sandbox", "choose", "guard", "nothing_works", "private_paths_problem",
           "problem"]  # fmt: skip


# --- choosing a mechanism ------------------------------------------------------------------

_works: dict[tuple[str, str], str | None] = {}  # (mechanism, python) -> why it does not work (None: it works)


def problem(mechanism: str, python: str) -> str | None:
    """Why ``mechanism`` cannot isolate a Python script here (None: it works): a trivial
    script is run under it once, through the very code that runs tests."""
    if mechanism == "none":
        return None
    if (mechanism, python) not in _works:
        _works[(mechanism, python)] = _probe(mechanism, python)
    return _works[(mechanism, python)]


def _probe(mechanism: str, python: str) -> str | None:
    if mechanism == "uid" and os.geteuid() != 0:
        return "it needs the grader to run as root (it runs scripts as other uids)"
    if mechanism != "uid" and tool_path(mechanism) is None:
        return missing_tool(mechanism)
    if os.geteuid() == 0 and not (os.path.exists(SETPRIV) and os.path.exists(PRLIMIT)):
        return f"as root it needs {SETPRIV} and {PRLIMIT} (util-linux) to run scripts as an unprivileged uid"
    uid = claim_uid() if os.geteuid() == 0 else None
    try:
        result = runner.run([python, "-c", "import os; print('isolated', os.getuid())"], Limits(wall_seconds=20),
                            sandbox=Sandbox(mechanism, uid))  # fmt: skip
    finally:
        if uid is not None:
            release_uid(uid)
    if result.exit_code == 0 and "isolated" in result.stdout_tail:
        return None
    last = (result.stderr_tail.strip().splitlines() or [result.describe() or f"exit code {result.exit_code}"])[-1]
    hint = ""
    if uid is not None and "Permission denied" in last:
        hint = f": uid {uid} cannot reach {python}; use a Python every user can run (python: in config.yaml)"
    return f"a test script did not run under it ({last}){hint}"


def choose(isolation: str, python: str) -> str:
    """The mechanism to use for ``isolation`` ('auto': the strongest that works; 'none' if
    nothing does). Raises GraderError, naming the fix, for a named mechanism that does not work."""
    if isolation not in ISOLATIONS:
        raise GraderError(f"unknown isolation {isolation!r}: use one of {', '.join(ISOLATIONS)}")
    if isolation == "auto":
        return next((m for m in MECHANISMS if problem(m, python) is None), "none")
    why = problem(isolation, python)
    if why:
        raise GraderError(f"isolation '{isolation}' does not work here: {why}; set 'isolation: auto' to use what works")
    return isolation


def nothing_works(python: str) -> str:
    """The one-line error when 'auto' finds no mechanism, naming what to install."""
    reasons = "; ".join(f"{m}: {problem(m, python)}" for m in MECHANISMS)
    return (
        "no isolation works on this machine, so a script could read or change other students' results "
        f"({reasons}). Install bubblewrap (apt-get install bubblewrap), allow user namespaces, or run as "
        "root; or set 'isolation: none' to grade without isolation (unsafe for a class)"
    )


def private_paths_problem(paths: Sequence[Path]) -> str | None:
    """For 'uid' (permissions are all that keep a script out): the first path another user
    could read, with the fix; None when every one is private."""
    for p in paths:
        if _others_can_read(p):
            return f"'{p}' can be read by other users, so a script could read it: chmod -R go-rwx '{p}'"
    return None


def _others_can_read(path: Path) -> bool:
    """True when a user other than the owner (and not in its group) can read ``path``."""
    try:
        p = path.resolve()
        for parent in reversed(p.parents):
            if not os.stat(parent).st_mode & 0o001:
                return False
        return bool(os.stat(p).st_mode & 0o004)
    except OSError:
        return False


def guard(isolation: str, python: str, private: Sequence[Path], strict: bool) -> str:
    """The mechanism runs will use here, checked before any script runs. Where nothing keeps
    scripts away from the grades (no mechanism works, or 'uid' with files others can read),
    ``strict`` (a class, a tournament) raises GraderError naming the fix; otherwise (a
    self-test) it warns and goes on."""
    mechanism = choose(isolation, python)
    problem_ = None
    if mechanism == "none" and isolation == "auto":
        problem_ = nothing_works(python)
    elif mechanism == "uid":
        problem_ = private_paths_problem(private)
        problem_ = problem_ and f"isolation 'uid' (no namespaces here): {problem_}"
    if problem_ and strict:
        raise GraderError(problem_)
    if problem_:
        warnings.warn(problem_, GraderWarning, stacklevel=3)
    return mechanism
