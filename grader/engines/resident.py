"""A job slot's resident sandbox: one bwrap kept alive on the slot's thread and reused by its
runs, instead of a new bwrap (new namespaces made and torn down: 5 ms quiet, 25-35 ms under
load) per run.

Its first process is the C launcher serving requests (``grader-launch --serve``, in
grader/_native/launch.c) over a socket. For each run the grader sends the script's argv,
environment, working folder, resource limits, uid, seccomp program and read-only views, with
its stdin, stdout and stderr; the server bind-mounts the views read-only (a mount in a
namespace that stays costs some microseconds), forks the script in a session and an IPC
namespace of its own (SysV and POSIX IPC die with it), and hands back a pidfd of it. When the
script has ended, the server kills every other process of the sandbox, answers with the exit
status and the script's CPU time, then unmounts the views, removes what it made for them and
empties /tmp, /dev/shm and the work folder (their owners, modes and extended attributes put
back) before it takes the next request: nothing a run leaves reaches the next one.

What stays as with a bwrap per run: no network, its own PID and UTS namespaces, the system
folders and the views read-only, a fresh environment, cwd, umask, resource limits and signal
dispositions for each script, the slot's uid with no capability, no_new_privs and the seccomp
filter, the slot's cgroups (the script is born in them: the sandbox is started by the slot's
thread, which is in them; the sandbox's two processes are exempt from the cgroups' kills and
counted beside the slot's threads). The host's root is mounted inside, under a folder only root
may enter, for the server to bind the views from; scripts never run as root here (a resident
sandbox needs the slot's uid). A script cannot reach the server: it runs as root (a script cannot
signal or trace it) and its socket is closed in every script. If the server dies or stops
answering, the run fails with a record saying so and the slot starts a new sandbox.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import weakref
from dataclasses import dataclass
from typing import BinaryIO, Sequence

from ..errors import GraderError
from .cgroups import Cgroup
from .leftovers import kill, work_folder
from .sandbox import _SYSTEM_DIRS, Sandbox, _parents, native_launcher, tool_path, visible_paths
from .spawn import launch_options, script_env

HOST = "/.grader/host"  # the host's root inside the sandbox: /.grader is root's alone (0700)
ANSWER_SECONDS = 10.0  # the most the server may take to answer once its script has ended
ENDING_SECONDS = 2.0  # the most a sandbox told to end may take
# What the server needs, and nothing more: mounts and the IPC namespace (SYS_ADMIN), killing
# every script's process (KILL), emptying folders whatever a script did to them (DAC_OVERRIDE,
# FOWNER, CHOWN), dropping to the slot's uid (SETUID, SETGID, SETPCAP), oom_score_adj (SYS_RESOURCE).
_CAPS = ("CAP_SYS_ADMIN", "CAP_KILL", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_CHOWN", "CAP_SETUID", "CAP_SETGID",
         "CAP_SETPCAP", "CAP_SYS_RESOURCE")  # fmt: skip


class Broken(GraderError):
    """The resident sandbox died or stopped answering during a run."""


@dataclass
class Started:
    """A script the resident sandbox started: its pid (in the grader's namespace), a pidfd of
    it, and the grader's ends of its output pipes."""

    pid: int
    pidfd: int
    stdout: BinaryIO
    stderr: BinaryIO
    returncode: int | None = None


_failed: list[str] = []  # why a resident sandbox could not start in this process: runs then take a bwrap each


def usable(sandbox: Sandbox, cgroup: Cgroup | None) -> bool:
    """Whether a run of ``sandbox`` on this job slot (``cgroup``: its cgroups) can use a
    resident sandbox: bwrap as root, scripts as the slot's uid, the C launcher built (and able
    to serve: one that could not start a resident sandbox is not asked again), and the slot's
    thread in every cgroup its scripts belong in (so that they are born there)."""
    return (
        not _failed
        and sandbox.mechanism == "bwrap"
        and sandbox.uid is not None
        and os.geteuid() == 0
        and native_launcher() is not None
        and cgroup is not None
        and not cgroup.joins()
    )


class Resident:
    """One bwrap sandbox serving the runs of one job slot's thread, for one uid and work-folder size."""

    def __init__(self, uid: int, space: int | None, cgroup: Cgroup):
        self.uid, self.space, self.cgroup = uid, space, cgroup
        self.workdir = work_folder()
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.residents: set[int] = set()
        self.pending = False  # a run ended: the server's "ready" (its cleanup done) is still to be read
        self.fresh = True  # started since the slot's process cap was last set
        self._start()

    def _start(self) -> None:
        os.chown(self.workdir, self.uid, self.uid)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                self._command(theirs.fileno()), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, pass_fds=(theirs.fileno(),), start_new_session=True,
                env={"PATH": "/usr/bin:/bin"},  # none of the grader's: each run brings its script's
            )  # fmt: skip
        except OSError as e:
            ours.close()
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise GraderError(f"the resident sandbox could not be started: {e.strerror}") from None
        finally:
            theirs.close()
        # when the slot's thread ends (its thread-local goes): bwrap killed, reaped, its folder removed
        self._end = weakref.finalize(self, _end, self.proc, ours, self.workdir)
        self.sock = ours
        ours.settimeout(ANSWER_SECONDS)
        try:
            ready = ours.recv(64)
        except OSError:
            ready = b""
        if ready != b"ready":  # said first, and after each run's cleanup
            said = self._said(": ")
            self.close()
            raise GraderError(f"the resident sandbox did not start{said}")
        self.residents = {self.proc.pid, *_children(self.proc.pid)}
        self.cgroup.residents |= self.residents
        _write(f"/proc/{self.proc.pid}/oom_score_adj", "-1000")

    def _command(self, fd: int) -> list[str]:
        tool, launcher = tool_path("bwrap"), native_launcher()
        assert tool is not None and launcher is not None
        binds: list[str] = []
        for d in _SYSTEM_DIRS:
            if os.path.islink(d):
                binds += ["--symlink", os.readlink(d), d]
            elif os.path.isdir(d):
                binds += ["--ro-bind", d, d]
        sized = ["--size", str(self.space)] if self.space else []
        own = (
            ["--perms", "1777", *sized, "--tmpfs", self.workdir]
            if self.space
            else ["--bind", self.workdir, self.workdir]
        )
        binds += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", *sized, "--tmpfs", "/tmp"]
        # The folders above the launcher and the work folder, after /tmp's tmpfs (which would hide
        # those under /tmp): a folder bwrap makes for a mount is root's alone (0700), and the
        # slot's uid could not reach the views the server mounts below it (a grader installed
        # under pytest's /tmp/pytest-of-root, say: every exec refused).
        for d in _parents([launcher], self.workdir):
            binds += ["--perms", "0755", "--dir", d]
        caps = ["--cap-drop", "ALL", *(arg for cap in _CAPS for arg in ("--cap-add", cap))]
        return [
            tool, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--as-pid-1", *caps, *binds,
            "--perms", "0700", "--dir", "/.grader", "--ro-bind", "/", HOST,
            "--ro-bind", launcher, launcher, *own, "--chdir", "/",
            launcher, "--serve", str(fd), "--host", HOST, "--work", self.workdir,
        ]  # fmt: skip

    def alive(self) -> bool:
        """True while the sandbox runs."""
        return self.proc is not None and self.proc.poll() is None and self.sock is not None

    def settled(self) -> bool:
        """True once the sandbox has cleaned up after its last run and waits for the next; False
        (it is closed) when the cleanup failed or it died meanwhile."""
        if not self.alive():
            return False
        if self.pending:
            try:
                self._ask(None, [])  # "ready"
            except Broken:
                return False
            self.pending = False
        return True

    def start(self, options: Sequence[str], argv: Sequence[str]) -> Started:
        """Start ``argv`` with the launcher's ``options`` in the sandbox, stdin at end-of-file.
        Raises OSError where the server could not start it, Broken where the server is gone."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        null = os.open(os.devnull, os.O_RDONLY)
        request = b"\0".join(map(os.fsencode, [*options, "--", *argv]))  # a file's name may not be UTF-8
        try:
            reply, fds = self._ask(request, [null, out_w, err_w])
            self.pending = True
        except BaseException:
            os.close(out_r)
            os.close(err_r)
            raise
        finally:
            for fd in (null, out_w, err_w):
                os.close(fd)
        if reply != "run" or not fds:
            for fd in (out_r, err_r, *fds):
                os.close(fd)
            step, _, number = reply.removeprefix("fail ").partition(":")
            code = int(number) if number.isdigit() else 0
            raise OSError(code, f"the sandbox could not start it ({step}: {os.strerror(code)})")
        pidfd = fds[0]
        pid = _pid_of(pidfd)
        self._send(b"go")
        return Started(pid, pidfd, open(out_r, "rb", buffering=0), open(err_r, "rb", buffering=0))

    def finish(self, started: Started) -> tuple[int, float]:
        """Wait for the server's word on ``started`` (killed already): its wait status and CPU
        seconds. Raises Broken (the sandbox is closed) when it does not come."""
        try:
            reply, _ = self._ask(None, [])
        finally:
            os.close(started.pidfd)
        words = reply.split()
        if len(words) != 4 or words[0] != "exit":
            self.close()
            raise Broken(f"the resident sandbox answered {reply!r}")
        status, utime, stime = (int(w) for w in words[1:])
        return status, (utime + stime) / 1e6

    def _send(self, data: bytes, fds: Sequence[int] = ()) -> None:
        assert self.sock is not None
        try:
            socket.send_fds(self.sock, [data], list(fds))
        except OSError as e:
            self.close()
            raise Broken(f"the resident sandbox stopped taking requests ({e.strerror or e})") from None

    def _ask(self, request: bytes | None, fds: Sequence[int]) -> tuple[str, list[int]]:
        """Send ``request`` (if any) and return the server's answer, with any fds it passed."""
        if request is not None:
            self._send(request, fds)
        assert self.sock is not None
        try:
            data, got, _, _ = socket.recv_fds(self.sock, 4096, 1)
        except OSError as e:
            data, got = b"", []
            why = e.strerror or "no answer"
        else:
            why = "it ended"
        if not data:
            said = self._said(": ")
            self.close()
            raise Broken(f"the resident sandbox did not answer: {why}{said}")
        return data.decode("ascii", "replace"), got

    def _said(self, prefix: str = "") -> str:
        """The last line the sandbox wrote on its stderr, if it has ended."""
        if self.proc is None or self.proc.stderr is None or self.proc.stderr.closed:
            return ""
        try:
            self.proc.wait(1.0)
        except subprocess.TimeoutExpired:
            return ""
        lines = self.proc.stderr.read().decode("utf-8", "replace").strip().splitlines()
        return f"{prefix}{lines[-1]}" if lines else ""

    def close(self) -> None:
        """End the sandbox and everything in it, and remove its work folder."""
        self.sock = None
        if self.proc is not None:
            self._end()
        self.cgroup.residents -= self.residents
        self.cgroup.kill()


def options(argv: Sequence[str], workdir: str, limits: list[tuple[int, tuple[int, int]]], sandbox: Sandbox,
            script_dir: str | None) -> list[str]:  # fmt: skip
    """The server's options for a run of ``argv`` in ``workdir`` under ``limits`` (resource
    limits) as ``sandbox``'s uid, ``script_dir`` being the script's folder: what a run under
    bwrap gets, read-only views included."""
    out = [*launch_options(limits, sandbox, None), "--drop-caps", "--uid", str(sandbox.uid), "--cwd", workdir]
    for name, value in script_env(workdir).items():
        out += ["--env", f"{name}={value}"]
    for path in visible_paths(argv, script_dir):
        out += ["--view", path]
    return out


_local = threading.local()


def for_this_thread(sandbox: Sandbox, space: int | None, cgroup: Cgroup) -> Resident:
    """The calling job slot's resident sandbox for ``sandbox``'s uid and a work folder of
    ``space`` bytes: the one it has, else a new one (the old one closed)."""
    current: Resident | None = getattr(_local, "resident", None)
    if current is not None and (current.uid, current.space) == (sandbox.uid, space) and current.settled():
        return current
    if current is not None:
        current.close()
        _local.resident = None
    assert sandbox.uid is not None
    try:
        _local.resident = Resident(sandbox.uid, space, cgroup)
    except GraderError as e:
        _failed.append(str(e))  # a launcher built from an older launch.c, say: a bwrap per run from now on
        raise
    return _local.resident


def close_this_thread() -> None:
    """End the calling thread's resident sandbox, if it has one."""
    current: Resident | None = getattr(_local, "resident", None)
    if current is not None:
        current.close()
        _local.resident = None


def _end(proc: subprocess.Popen, sock: socket.socket, workdir: str) -> None:
    """Close the socket (the server ends at its end-of-file, and bwrap after it), kill the
    server where it does not end, reap bwrap, and remove the work folder. Never bwrap first:
    the server would be left to the system's init, which in some containers never reaps it (a
    zombie charged to the slot's pids cgroup for good)."""
    sock.close()
    for server in (*_children(proc.pid), None):
        try:
            proc.wait(ENDING_SECONDS)
            break
        except subprocess.TimeoutExpired:
            kill(server if server is not None else proc.pid, signal.SIGKILL)
    proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()
    shutil.rmtree(workdir, ignore_errors=True)


def _children(pid: int) -> set[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return {int(p) for p in f.read().split()}
    except OSError:
        return set()


def _pid_of(pidfd: int) -> int:
    """The pid, in the grader's namespace, of the process ``pidfd`` refers to (-1: reaped)."""
    with open(f"/proc/self/fdinfo/{pidfd}") as f:
        for line in f:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    return -1


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError:
        pass
