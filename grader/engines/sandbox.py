"""The sandbox mechanisms themselves: how a command is wrapped (bwrap, unshare), the job
slots' unprivileged uids, the 'uid' mechanism's network filter. Which mechanism works here,
and whether a run may go ahead, is isolation.py's to say (it tries them through the runner)."""

from __future__ import annotations

import fcntl
import functools
import os
import platform
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import GraderError
from .interpreters import find_interpreter, is_python

MECHANISMS = ("bwrap", "unshare", "uid")  # strongest first: the order 'auto' tries them in
ISOLATIONS = ("auto", "none", *MECHANISMS)
SLOT_UIDS = range(61000, 62000)  # unprivileged uids for job slots, when the grader is root
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
SETPRIV = "/usr/bin/setpriv"
PRLIMIT = "/usr/bin/prlimit"
NATIVE_LAUNCHER = Path(__file__).resolve().parents[1] / "grader-launch"  # grader/_native/launch.c, built by setup.py
# The first process of a script's namespace: a shell that waits for the script, so that the
# script's CPU time reaches the grader's wait4, and that the script, not being process 1 (which
# signals from inside its namespace cannot kill), dies of any signal, even one it sends itself.
# A death by signal N comes out as exit status 128+N (the runner reads it back).
_INIT = ["/bin/sh", "-c", '"$@"; exit $?', "grader-init"]
_DROP = ["--clear-groups", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs"]


@dataclass(frozen=True)
class Sandbox:
    """How one run is isolated: the mechanism, and the uid scripts run as (None: the grader's own)."""

    mechanism: str = "none"
    uid: int | None = None


# --- building the command ----------------------------------------------------------------

# Runs inside unshare's new mount namespace: a tmpfs root holding the system folders, the
# read-only folders given and the test directory, then chroot into it as an unprivileged
# process (no capabilities, so no way back out of the chroot).
_UNSHARE_SETUP = r"""
set -e
root=$1; work=$2; size=$3; shift 3
mount -t tmpfs -o mode=755 grader-root "$root"
ro() { mkdir -p "$root$1"; mount --rbind -o ro "$1" "$root$1"; }
rofile() { mkdir -p "$root$(dirname "$1")"; touch "$root$1"; mount --bind -o ro "$1" "$root$1"; }
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc /opt; do
  if [ -L "$d" ]; then ln -s "$(readlink "$d")" "$root$d"; elif [ -d "$d" ]; then ro "$d"; fi
done
mkdir -p "$root/proc" "$root/dev" "$root/tmp"
mount -t proc proc "$root/proc"
for n in null zero full random urandom; do touch "$root/dev/$n"; mount --bind "/dev/$n" "$root/dev/$n"; done
mount -t tmpfs -o "mode=1777${size:+,size=$size}" grader-tmp "$root/tmp"
while [ "$1" != "--" ]; do if [ -d "$1" ]; then ro "$1"; else rofile "$1"; fi; shift; done
shift
mkdir -p "$root$work"
if [ -n "$size" ]; then mount -t tmpfs -o "mode=1777,size=$size" grader-work "$root$work"; else mount --bind "$work" "$root$work"; fi
exec chroot "$root" "$@"
"""


def native_launcher() -> str | None:
    """The C launcher's path where it was built, else None."""
    return str(NATIVE_LAUNCHER) if os.access(NATIVE_LAUNCHER, os.X_OK) else None


def visible_paths(command: Sequence[str], script_dir: str | None, cwd: str | None = None, *files: str) -> list[str]:
    """What a sandboxed script sees beyond the system folders, read-only: its own folder (and
    ``cwd``, an engine's working folder), the interpreter's install (only its bin, lib and
    pyvenv.cfg: never a whole project folder) and ``files``."""
    wanted = {d for d in (script_dir, cwd, *files) if d}
    # the program, and the folder of each file its command names (a protocol engine's script, say)
    wanted |= {str(Path(c).resolve().parent) for c in command[:1] if os.path.isabs(c) and os.path.exists(c)}
    # a Python interpreter's install and packages (a virtual environment's, its base's); never
    # asked of a program among the script's own files
    own = [os.path.realpath(d) + "/" for d in (script_dir, cwd) if d]
    python = command[0] if command and os.path.isabs(command[0]) and is_python(command[0]) else None
    if python is not None and any(os.path.realpath(python).startswith(d) for d in own):
        python = None
    wanted |= {str(Path(c).resolve().parent) for c in command[1:] if os.path.isabs(c) and os.path.isfile(c)}
    real = {os.path.realpath(d) for d in wanted if d and os.path.exists(d)} | set(_installed(python))
    out: list[str] = []
    inside = [d + "/" for d in _SYSTEM_DIRS]  # seen whole already (a missing one: nothing under it exists)
    for d in sorted(real, key=len):  # parents first
        if not any(d.startswith(c) for c in inside) and d not in _SYSTEM_DIRS:
            out.append(d)
            inside.append(d.rstrip("/") + "/")
    return out


@functools.lru_cache(maxsize=64)
def _installed(python: str | None) -> tuple[str, ...]:
    """The real paths of the folders of the grader's own interpreter and of ``python`` (its
    bin, lib and pyvenv.cfg, a virtual environment's base's too) that exist: an install, the
    same for every run of this process (each run's would cost a dozen realpath calls, some
    milliseconds under load)."""
    wanted: set[str] = set()
    for prefix in {sys.prefix, sys.base_prefix}:
        wanted |= {os.path.join(prefix, p) for p in ("bin", "lib", "lib64", "pyvenv.cfg")}
    found = find_interpreter(python) if python is not None else None
    wanted |= set(found.folders) if found is not None else set()
    return tuple(os.path.realpath(d) for d in wanted if d and os.path.exists(d))


def wrap(
    sandbox: Sandbox,
    command: Sequence[str],
    workdir: str,
    script_dir: str | None,
    nproc: int | None = None,
    cwd: str | None = None,
    space: int | None = None,
) -> list[str]:
    """The command that runs ``command`` in ``sandbox`` with ``workdir`` as its test directory
    (``nproc``: processes the slot's uid may run, set once the sandbox is built as root;
    ``cwd``: a folder to start in instead of ``workdir``, visible read-only; ``space``: under
    bwrap and unshare, the bytes the script may write in ``workdir`` and in /tmp, each a tmpfs
    of that size of its own, so that it can fill neither the disk nor the memory)."""
    if sandbox.mechanism in ("none", "uid"):
        return list(command)  # uid: the uid is set when the process starts (runner)
    tool = tool_path(sandbox.mechanism)
    if tool is None:
        raise GraderError(missing_tool(sandbox.mechanism))
    drop = [SETPRIV, *_uid_flags(sandbox.uid), *_DROP, "--"]
    if nproc and sandbox.uid is not None:  # set by root on itself, then kept through setpriv's switch
        drop = [PRLIMIT, f"--nproc={nproc}", *drop]
    visible = visible_paths(command, script_dir, cwd)
    if sandbox.mechanism == "unshare":
        user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
        return [
            tool, *user, "--mount", "--net", "--pid", "--fork", "--kill-child", "--ipc", "--uts",
            "sh", "-c", _UNSHARE_SETUP, "grader-isolate", workdir + ".root", workdir, str(space or ""), *visible, "--",
            *_INIT, *drop, "/usr/bin/env", f"--chdir={cwd or workdir}", *command,
        ]  # fmt: skip
    # bwrap as root: the C launcher, bound in alone, is the namespace's first process and drops
    # to the slot's uid in one exec, instead of _INIT and setpriv (and prlimit) in three
    init = native_launcher()
    if init is not None:
        visible = visible_paths(command, script_dir, cwd, init)
    binds: list[str] = []
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            binds += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            binds += ["--ro-bind", d, d]
    sized = ["--size", str(space)] if space and _bwrap_sizes(tool) else []
    binds += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", *sized, "--tmpfs", "/tmp"]
    for d in _parents(visible, workdir):  # bwrap would copy a parent's mode (/root: 0700) and lock the script out
        binds += ["--perms", "0755", "--dir", d]
    for d in visible:  # after /tmp's tmpfs, so that folders under /tmp stay visible
        binds += ["--ro-bind", d, d]
    unshare = ["--unshare-all"] if os.geteuid() != 0 else [
        "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
    ]  # fmt: skip
    inner = drop if os.geteuid() == 0 else []  # unprivileged bwrap drops every capability itself
    # bwrap's own init would lose the script's CPU time (it is never waited for): _INIT is the
    # namespace's first process instead (--as-pid-1).
    inner = [*_INIT, *inner]
    if init is not None:
        inner = [init, "--init", *(_launcher_drop(sandbox.uid, nproc) if os.geteuid() == 0 else []), "--"]
    own = ["--perms", "1777", *sized, "--tmpfs", workdir] if sized else ["--bind", workdir, workdir]
    return [
        tool, *unshare, "--die-with-parent", "--new-session", "--as-pid-1", *binds,
        *own, "--chdir", cwd or workdir, *inner, *command,
    ]  # fmt: skip


def _parents(paths: Sequence[str], *more: str) -> list[str]:
    """The folders above ``paths`` that the sandbox must make (not /, /tmp or a system folder), outermost first."""
    out: set[str] = set()
    for p in (*paths, *more):
        for parent in Path(p).parents:
            d = str(parent)
            if d not in ("/", "/tmp") and not any(d == s or d.startswith(s + "/") for s in _SYSTEM_DIRS):
                out.add(d)
    return sorted(out, key=lambda d: (d.count("/"), d))


def _launcher_drop(uid: int | None, nproc: int | None) -> list[str]:
    """The C launcher's options for what setpriv (and prlimit) do in _DROP: no capabilities,
    no groups, the slot's uid, no_new_privs (and RLIMIT_NPROC, set as root before the switch)."""
    limit = ["--rlimit", f"{resource.RLIMIT_NPROC}:{nproc}:{nproc}"] if nproc and uid is not None else []
    return [*limit, "--drop-caps", *(["--uid", str(uid)] if uid is not None else [])]


def _uid_flags(uid: int | None) -> list[str]:
    return [f"--reuid={uid}", f"--regid={uid}"] if uid is not None else []


@functools.lru_cache(maxsize=None)
def _bwrap_sizes(tool: str) -> bool:
    """Whether this bwrap can size a tmpfs (--size: older ones cannot)."""
    try:
        shown = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in shown.stdout + shown.stderr


def tool_path(name: str) -> str | None:
    """Where the isolation tool ``name`` is installed, if it is."""
    return shutil.which(name)


def missing_tool(mechanism: str) -> str:
    """Why ``mechanism`` cannot work here when its command is missing, and how to install it."""
    package = "bubblewrap" if mechanism == "bwrap" else "util-linux"
    return (
        f"isolation '{mechanism}' needs the '{mechanism}' command, which is not installed: install it "
        f"(Debian: apt-get install {package}), or set 'isolation: auto'"
    )


# --- uids of job slots (the grader is root) ------------------------------------------------

_claims: dict[int, int] = {}  # uid -> the open, locked file that claims it for this process
_claim_lock = threading.Lock()


def claim_uid() -> int:
    """An unprivileged uid for a job slot, no other grader on this machine uses, for the life
    of this process. Leftover processes of that uid (a grader killed earlier) are killed."""
    lock_dir = Path("/run/grader") if os.access("/run", os.W_OK) else Path(tempfile.gettempdir()) / "grader-root"
    lock_dir.mkdir(mode=0o700, exist_ok=True)
    os.chmod(lock_dir, 0o700)
    with _claim_lock:
        for uid in SLOT_UIDS:
            if uid in _claims or _uid_in_use(uid):
                continue
            fd = os.open(lock_dir / f"uid-{uid}", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            _claims[uid] = fd
            kill_uid(uid)
            return uid
    raise GraderError(f"no free uid for a job slot in {SLOT_UIDS.start}-{SLOT_UIDS.stop - 1}: too many graders at once")


def claimed_uids() -> set[int]:
    """The uids this process holds for its job slots now."""
    with _claim_lock:
        return set(_claims)


def release_uid(uid: int) -> None:
    """Give back a uid this process claimed, once nothing of its runs is left (killed here)."""
    with _claim_lock:
        fd = _claims.pop(uid, None)
        if fd is None:
            return
        kill_uid(uid)
        os.close(fd)  # drops the lock


def _zombie(pid: str) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "Z"


def _uid_in_use(uid: int) -> bool:
    """True when an account of the system has this uid (never run scripts as a real user)."""
    try:
        import pwd

        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def kill_uid(uid: int) -> int:
    """SIGKILL every live process running as ``uid`` (zombies are dead already); returns how
    many there were."""
    killed = 0
    for _ in range(20):  # again while processes are still forking
        pids = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    if os.stat(f"/proc/{name}").st_uid == uid and not _zombie(name):
                        pids.append(int(name))
                except OSError:
                    pass
        for pid in pids:
            try:
                os.kill(pid, 9)
                killed += 1
            except OSError:
                pass
        if not pids:
            break
    return killed


# --- seccomp filters: the network for 'uid' (no namespaces to cut it with), the keyrings as root ---

# audit arch, socket, io_uring_setup, and the keyring calls (add_key, request_key, keyctl)
_ARCH = {"x86_64": (0xC000003E, 41, 425, (248, 249, 250)), "aarch64": (0xC00000B7, 198, 425, (217, 218, 219))}


def seccomp_filter(network: bool) -> bytes | None:
    """A seccomp program: the kernel's keyrings fail with EPERM (a slot's uid is reused by every
    test, and keys outlive their process: a store shared between students); with ``network``,
    socket() of any family but AF_UNIX fails with EACCES and io_uring (which can open sockets)
    with ENOSYS. Syscalls of another ABI fail. None on other machines."""
    arch = _ARCH.get(platform.machine())
    if arch is None:
        return None
    audit, socket_nr, uring_nr, keyring_nrs = arch
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, ..JGE.., BPF_RET|BPF_K
    allow, eacces, enosys = 0x7FFF0000, 0x00050000 | 13, 0x00050000 | 38  # SECCOMP_RET_ALLOW, ERRNO(...)
    eperm = 0x00050000 | 1
    prog = [
        (ld, 0, 0, 4),  # the architecture
        (jeq, 1, 0, audit),
        (ret, 0, 0, eperm),  # another ABI (32-bit calls)
        (ld, 0, 0, 0),  # the syscall number
        (jge, 0, 1, 0x40000000),
        (ret, 0, 0, eperm),  # x32 calls
    ]
    for nr, errno in [*((nr, eperm) for nr in keyring_nrs), *([(uring_nr, enosys)] if network else [])]:
        prog += [(jeq, 0, 1, nr), (ret, 0, 0, errno)]
    if network:
        prog += [
            (jeq, 0, 4, socket_nr),  # not socket(): allow
            (ld, 0, 0, 16),  # socket's first argument, the address family
            (jeq, 0, 1, 1),  # AF_UNIX
            (ret, 0, 0, allow),
            (ret, 0, 0, eacces),  # any other family
        ]
    prog.append((ret, 0, 0, allow))
    return b"".join(struct.pack("HBBI", *ins) for ins in prog)


def seccomp_for(sandbox: Sandbox) -> bytes | None:
    """The seccomp program a script of ``sandbox`` is started under (the launcher installs it,
    with no_new_privs, before it execs): 'uid' gets the network and keyring filter; bwrap and
    unshare as root the keyring filter (run as a normal user they make a user namespace, whose
    keyrings are its own); None for the rest, and on machines without a filter."""
    if sandbox.mechanism == "uid":
        return seccomp_filter(network=True)
    if sandbox.mechanism in ("bwrap", "unshare") and os.geteuid() == 0:
        return seccomp_filter(network=False)
    return None
