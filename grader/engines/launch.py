"""grader-launch in Python, for where the C one (grader/_native/launch.c) was not built: what an
untrusted program's process does to itself between the grader's spawn and the program's exec.

    python -I -S launch.py [--cgroup DIR]... [--rlimit RESOURCE:SOFT:HARD]... [--uid UID]
                           [--seccomp HEX] [--errfd FD] -- PROGRAM [ARG]...

The same steps in the same order as the C program: join each cgroup, set each resource limit,
become UID, install the seccomp program, exec PROGRAM (found on PATH); on a failure, write
"STEP:ERRNO" to FD and exit 127. Run as a script of its own (it imports nothing of the grader):
a process of its own, exec'd, never Python code in a forked child of the grader.
"""

import ctypes
import errno
import os
import resource
import struct
import sys
import warnings  # noqa: F401  (os.execvp imports it: here, while the uid may still read the stdlib)


def main(argv: list) -> None:
    errfd = -1
    if "--errfd" in argv[: argv.index("--") if "--" in argv else len(argv)]:
        errfd = int(argv[argv.index("--errfd") + 1])
        os.set_inheritable(errfd, False)
    step = "usage"
    try:
        end = argv.index("--")
        if end % 2 or end + 1 >= len(argv):
            raise OSError(22, "usage")
        options = list(zip(argv[0:end:2], argv[1:end:2]))
        uid = seccomp = None
        for opt, val in options:
            if opt == "--cgroup":
                step = "cgroup"
                fd = os.open(os.path.join(val, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
                try:
                    os.write(fd, str(os.getpid()).encode())
                finally:
                    os.close(fd)
            elif opt == "--rlimit":
                step = "setrlimit"
                kind, soft, hard = (int(v) for v in val.split(":"))
                resource.setrlimit(kind, (soft, hard))
            elif opt == "--uid":
                uid = int(val)
            elif opt == "--seccomp":
                seccomp = bytes.fromhex(val)
            elif opt != "--errfd":
                raise OSError(22, "usage")
        if uid is not None:
            step = "setgroups"
            os.setgroups([])
            step = "setgid"
            os.setresgid(uid, uid, uid)
            step = "setuid"
            os.setresuid(uid, uid, uid)
        if seccomp is not None:
            step = "seccomp"
            _install(seccomp)
        step = "exec"
        os.execvp(argv[end + 1], argv[end + 1 :])
    except (OSError, ValueError) as e:
        try:
            os.write(errfd, f"{step}:{getattr(e, 'errno', None) or 22}".encode())
        except OSError:
            pass  # no channel (or no reader): the exit status alone says it
        # as a shell: 127 for a program not found, 126 for one found but not executable
        os._exit(126 if step == "exec" and getattr(e, "errno", None) != errno.ENOENT else 127)


def _install(program: bytes) -> None:
    """no_new_privs, then the seccomp filter ``program`` (struct sock_filter, native order)."""
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(program) // 8, ctypes.addressof(buf)), 16)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(22, 2, fprog, 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


if __name__ == "__main__":
    main(sys.argv[1:])
