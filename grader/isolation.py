"""Isolation: what a script can see of the machine beyond the limits (network, files, processes).

    none     the limits only
    unshare  no network, its own process and IPC namespaces, and a file system showing only
             the system folders, the interpreter's and its own folder (read-only) and the
             test directory (util-linux unshare)
    bwrap    the same, built by bubblewrap
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from .errors import GraderError

ISOLATIONS = ("none", "unshare", "bwrap")
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
    tool = _tool(isolation)
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


def _tool(name: str) -> str | None:
    """Where the isolation tool ``name`` is installed, if it is."""
    return shutil.which(name)


_checked: dict[str, str | None] = {}  # isolation -> why it does not work here (None: it works)


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
        workdir = tempfile.mkdtemp(prefix="grader-probe-")
        try:
            if isolation == "unshare":
                os.mkdir(workdir + ".root")
            argv = isolation_prefix(isolation, ["/bin/sh", "-c", "echo isolated"], workdir)
            done = subprocess.run(argv, capture_output=True, text=True, timeout=10, cwd=workdir)
            ok = done.returncode == 0 and "isolated" in done.stdout
            reason = None if ok else ((done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1])
        except (OSError, subprocess.SubprocessError) as e:
            reason = str(e)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            shutil.rmtree(workdir + ".root", ignore_errors=True)
        _checked[isolation] = reason
    if _checked[isolation]:
        raise GraderError(
            f"isolation '{isolation}' does not work here ({_checked[isolation]}): "
            "set 'isolation: none', or allow 'isolation_fallback: true'"
        )


