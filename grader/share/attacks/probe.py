"""An attacking script, run by 'grader doctor' and the tests: it tries everything a student's
script must not be able to do and prints, as one JSON line, what got through.

It reads targets.json beside it: {"files": [paths], "port": n, "grader_pid": n, "secret": s}.
Run as: probe.py BOARD TOKEN.
"""

import glob
import json
import os
import socket
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "targets.json")) as f:
    targets = json.load(f)
got = {"files": [], "see": [], "processes": [], "tmp": [], "network": [], "root": []}

# Read or write the grader's files: the run folder, the config, plans, other students' scripts, keys.
for path in targets["files"]:
    try:
        if os.path.isdir(path):
            names = os.listdir(path)
            got["files"].append(f"listed {path}")
            for name in names:
                with open(os.path.join(path, name), "rb") as f:
                    f.read(64)
                got["files"].append(f"read {os.path.join(path, name)}")
                break
        else:
            with open(path, "rb") as f:
                f.read(64)
            got["files"].append(f"read {path}")
    except OSError:
        pass
    try:
        where = os.path.join(path, "forged.txt") if os.path.isdir(path) else path
        with open(where, "a") as f:
            f.write("")
        got["files"].append(f"wrote {where}")
    except OSError:
        pass

# See, read or signal the grader and other tests through /proc.
mine = {os.getpid()}
for name in os.listdir("/proc"):
    if not name.isdigit() or int(name) in mine:
        continue
    pid = int(name)
    if pid == targets.get("grader_pid"):
        got["see"].append(f"sees the grader (pid {pid}) and its command line")
    for what in ("environ", "cwd", "fd"):
        try:
            os.listdir(f"/proc/{pid}/fd") if what == "fd" else (
                os.readlink(f"/proc/{pid}/cwd") if what == "cwd" else open(f"/proc/{pid}/environ", "rb").read(1)
            )
            if os.stat(f"/proc/{pid}").st_uid != os.getuid() or pid == targets.get("grader_pid"):
                got["processes"].append(f"read /proc/{pid}/{what}")
        except OSError:
            pass
    try:
        os.kill(pid, 0)
        if os.stat(f"/proc/{pid}").st_uid != os.getuid() or pid == targets.get("grader_pid"):
            got["processes"].append(f"may signal pid {pid}")
    except OSError:
        pass

# Read another test's temporary directory (a victim test writes the secret there, in a file
# whose name holds the secret: the probe opens nothing of anybody else's).
for d in set(glob.glob("/tmp/grader-*") + glob.glob(os.path.join(os.path.dirname(os.getcwd()), "grader-*"))):
    if os.path.realpath(d) == os.path.realpath(os.getcwd()):
        continue
    for name in glob.glob(os.path.join(d, "**", f"answers-{targets['secret']}.txt"), recursive=True):
        try:
            with open(name, "rb") as f:
                if targets["secret"].encode() in f.read(4096):
                    got["tmp"].append(f"read {name}")
        except OSError:
            pass

# Reach the network (the grader listens on 127.0.0.1).
try:
    socket.create_connection(("127.0.0.1", targets["port"]), timeout=1).close()
    got["network"].append(f"connected to 127.0.0.1:{targets['port']}")
except OSError:
    pass

# Run as root.
if os.geteuid() == 0:
    got["root"].append("runs as uid 0")

# Keep running after the test: a daemon in a new session (the grader checks it is gone).
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(
            sys.executable,
            [sys.executable, "-c", "import time; time.sleep(60)", "grader-probe-linger", targets["secret"]],
        )
    os._exit(0)
time.sleep(0.05)
print(json.dumps(got))
