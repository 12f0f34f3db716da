"""A job slot's resident sandbox (grader/engines/resident.py): one bwrap serves the slot's runs,
and nothing a run leaves reaches the next one; a script cannot reach the server, and a slot
whose sandbox died fails that run with a record and starts a new one."""

import json
import os
import shutil
import signal
import tempfile
import textwrap
from pathlib import Path

import pytest

from grader import Settings, load_plan
from grader.engines import cgroups, isolation, resident, runner, sandbox
from grader.execution.executor import LocalExecutor
from grader.grading.run import grade
from grader.limits import Limits

from test_security import python_for, works

ROOT = os.geteuid() == 0 and cgroups.Cgroup.find_base() is not None and sandbox.native_launcher() is not None
pytestmark = pytest.mark.skipif(
    not ROOT, reason="a resident sandbox needs root, writable pids cgroups and the C launcher"
)
NEGAMAX = Path(__file__).resolve().parents[1] / "submissions" / "negamax.py"
PLAN = load_plan(NEGAMAX.parents[1] / "fixtures" / "standard.txt")  # the 10 fixed boards
LIMITS = Limits(wall_seconds=20, processes=20, memory_mb=500, output_bytes=2**20)

# Leaves all it can for the next run: a daemon in a session of its own, files in /tmp, in
# /dev/shm (where it may write) and in its folder, a SysV shared memory segment and a POSIX
# message queue, an attribute and another mode on its folder, and its cwd, umask, environment,
# resource limits and signal dispositions changed (its daemon keeps them).
LEAVE = textwrap.dedent("""
    import ctypes, os, resource, signal, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    open("/tmp/left.txt", "w").write("left")
    try:
        open("/dev/shm/left", "w").write("left")
    except OSError:
        pass
    open("left.txt", "w").write("left")
    os.makedirs("deep/er")
    os.chmod("deep", 0)
    for change in (lambda: os.setxattr(".", "user.note", b"left"), lambda: os.chmod(".", 0o777)):
        try:
            change()
        except OSError:
            pass  # a sized work folder is root's
    segment = libc.shmget(0x4C454654, 4096, 0o1666)  # IPC_CREAT | 0666
    queue = libc.mq_open(b"/left", os.O_CREAT | os.O_RDWR, 0o666, None)
    os.chdir("/tmp")
    os.umask(0o077)
    os.environ["LEFT"] = "1"
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(60)
        os._exit(0)
    print(segment, queue, flush=True)
""")

# Says what it finds of the sandbox, as JSON.
LOOK = textwrap.dedent("""
    import ctypes, json, os, resource, sys
    status = dict(line.split(":\\t") for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
    print(json.dumps({
        "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
        "tmp": sorted(os.listdir("/tmp")),
        "shm": os.listdir("/dev/shm"),
        "sysv": open("/proc/sysvipc/shm").read().splitlines()[1:],
        "queue": ctypes.CDLL(None).mq_open(b"/left", os.O_RDONLY),
        "cwd": os.getcwd(),
        "files": os.listdir("."),
        "mode": oct(os.stat(".").st_mode & 0o7777),
        "attributes": os.listxattr("."),
        "umask": os.umask(0),
        "env": "LEFT" in os.environ,
        "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        "ignored": status["SigIgn"].strip(),
        "blocked": status["SigBlk"].strip(),
        "earlier": os.path.exists(sys.argv[1]),
    }))
""")

# Goes for the server: signals it, writes to its fds, reads its root, enters the host's root.
ATTACK = textwrap.dedent("""
    import json, os, signal
    tried = {}
    def attempt(name, action):
        try:
            action()
            tried[name] = "done"
        except OSError as e:
            tried[name] = e.errno
    attempt("kill", lambda: os.kill(1, signal.SIGKILL))
    attempt("term", lambda: os.kill(1, signal.SIGTERM))
    for fd in range(5):
        attempt(f"fd{fd}", lambda: os.open(f"/proc/1/fd/{fd}", os.O_WRONLY))
    attempt("root", lambda: os.listdir("/proc/1/root/"))
    attempt("host", lambda: os.listdir("/.grader/host"))
    attempt("mount", lambda: os.listdir("/.grader"))
    print(json.dumps(tried))
""")


def slot_runs(*steps):
    """Run ``steps`` (each a function of the slot's uid returning a RunResult) one after the
    other on one job slot's thread; their results, and the pid of the bwrap that served each."""
    uid = isolation.claim_uid()
    done: list = []

    def slot() -> None:
        runner.dedicate_this_thread()
        try:
            for step in steps:
                result = step(uid)
                box = resident._local.__dict__.get("resident")
                done.append((result, box.proc.pid if box is not None and box.alive() else None))
        finally:
            resident.close_this_thread()

    import threading

    thread = threading.Thread(target=slot)
    thread.start()
    thread.join()
    isolation.release_uid(uid)
    return done


def script(folder, name, text):
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return str(folder / name)


@pytest.fixture(autouse=True)
def _bwrap_works():
    if works("bwrap"):
        pytest.skip(f"bwrap cannot work here: {works('bwrap')}")


def test_the_next_run_of_a_slot_finds_nothing_the_last_one_left(tmp_path):
    leave = script(tmp_path / "first", "leave.py", LEAVE)
    look = script(tmp_path / "second", "look.py", LOOK)
    python = python_for("bwrap")

    def first(uid):
        return runner.run(
            [python, leave], LIMITS, sandbox=isolation.Sandbox("bwrap", uid), script_dir=str(tmp_path / "first")
        )

    def second(uid):
        return runner.run([python, look, str(tmp_path / "first")], LIMITS, sandbox=isolation.Sandbox("bwrap", uid),
                          script_dir=str(tmp_path / "second"))  # fmt: skip

    (left, box1), (seen, box2) = slot_runs(first, second)
    assert left.exit_code == 0, left
    assert int(left.stdout_tail.split()[0]) >= 0  # the segment was made
    assert seen.exit_code == 0, seen
    assert box1 == box2 is not None  # one sandbox served both
    got = json.loads(seen.stdout_tail)
    assert len(got["pids"]) == 2 and 1 in got["pids"], got  # the server and itself: no daemon
    # in /tmp the folders holding its own work folder, its own view, and what the sandbox shows of
    # the host from /tmp (the launcher and Python, when installed there): no file, no earlier view
    shown = [Path(p).resolve() for p in (python, sandbox.native_launcher() or "/")]
    allowed = {Path(got["cwd"]).parts[2], tmp_path.parts[2]} | {p.parts[2] for p in shown if p.parts[1:2] == ("tmp",)}
    assert "left.txt" not in got["tmp"] and set(got["tmp"]) <= allowed, got
    assert got["shm"] == [] and got["sysv"] == [] and got["queue"] == -1
    assert not got["earlier"]  # the first run's folder is not in view, not even its name
    assert got["files"] == [] and got["mode"] == "0o1777" and got["attributes"] == []  # a sized folder: root's
    assert got["umask"] == 0o022 and not got["env"]
    assert got["nofile"] > 64 and got["blocked"] == "0000000000000000"
    assert int(got["ignored"], 16) == (1 << signal.SIGPIPE - 1) | (1 << signal.SIGXFSZ - 1)  # Python's own, no SIGTERM


def test_a_run_the_sandbox_cannot_clean_up_after_leaves_the_next_run_a_new_sandbox(tmp_path):
    """Folders nested deeper than the server empties (it keeps its memory small) end that
    sandbox: the next run gets a new one, clean."""
    deep = script(tmp_path / "deep", "deep.py", "import os\nos.chdir('/tmp')\nfor _ in range(300):\n"
                  "    os.mkdir('d')\n    os.chdir('d')\nopen('bottom.txt', 'w').write('left')\n")  # fmt: skip
    python = python_for("bwrap")

    def first(uid):
        return runner.run(
            [python, deep], LIMITS, sandbox=isolation.Sandbox("bwrap", uid), script_dir=str(tmp_path / "deep")
        )

    def second(uid):
        return runner.run(["/bin/ls", "/tmp"], LIMITS, sandbox=isolation.Sandbox("bwrap", uid))

    (left, box1), (seen, box2) = slot_runs(first, second)
    assert left.exit_code == 0, left
    assert seen.exit_code == 0 and "d" not in seen.stdout_tail.split(), seen
    assert box1 is not None and box2 is not None and box1 != box2


def test_a_script_cannot_reach_the_server_and_the_slot_goes_on(tmp_path):
    attack = script(tmp_path / "attack", "attack.py", ATTACK)
    look = script(tmp_path / "look", "look.py", LOOK)
    python = python_for("bwrap")

    def first(uid):
        return runner.run(
            [python, attack], LIMITS, sandbox=isolation.Sandbox("bwrap", uid), script_dir=str(tmp_path / "attack")
        )

    def second(uid):
        return runner.run([python, look, "/nowhere"], LIMITS, sandbox=isolation.Sandbox("bwrap", uid),
                          script_dir=str(tmp_path / "look"))  # fmt: skip

    (attacked, box1), (after, box2) = slot_runs(first, second)
    assert attacked.exit_code == 0, attacked
    tried = json.loads(attacked.stdout_tail)
    assert tried["kill"] == tried["term"] == 1  # EPERM: the server runs as root, the script as the slot's uid
    assert all(tried[f"fd{fd}"] == 13 for fd in range(5)), tried  # EACCES
    assert tried["root"] == tried["host"] == tried["mount"] == 13, tried
    assert after.exit_code == 0 and box1 == box2 is not None, after


def test_a_run_whose_sandbox_dies_fails_with_a_record_and_the_slot_starts_a_new_one(tmp_path):
    waits = script(tmp_path / "waits", "waits.py", "import time\nprint('started', flush=True)\ntime.sleep(30)\n")
    python = python_for("bwrap")

    def killed(uid):
        def kill_the_server(_data: bytes) -> None:
            box = resident._local.resident
            for pid in box.residents - {box.proc.pid}:
                os.kill(pid, signal.SIGKILL)

        return runner.run([python, waits], LIMITS, on_stdout=kill_the_server, sandbox=isolation.Sandbox("bwrap", uid),
                          script_dir=str(tmp_path / "waits"))  # fmt: skip

    def again(uid):
        return runner.run(["/bin/echo", "again"], LIMITS, sandbox=isolation.Sandbox("bwrap", uid))

    (failed, _), (ok, box) = slot_runs(killed, again)
    assert failed.crashed and failed.sandbox_error and not failed.timed_out, failed
    assert failed.wall_seconds < 10  # not left to its wall-clock limit
    assert failed.describe().startswith("could not be run to its end: the resident sandbox did not answer")
    assert "started" in failed.stdout_tail
    assert ok.exit_code == 0 and ok.stdout_tail == "again\n" and box is not None, ok


def test_a_launcher_that_cannot_serve_leaves_the_runs_to_a_bwrap_each(tmp_path, monkeypatch):
    """A grader-launch built from an older launch.c (no --serve: it prints its usage and exits)
    fails no run: the slot's runs take a bwrap each, and the resident is not asked again."""
    old = tmp_path / "old-launch"
    old.write_text("#!/bin/sh\necho 'grader-launch: usage' >&2\nexit 2\n")
    old.chmod(0o755)
    monkeypatch.setattr(resident, "native_launcher", lambda: str(old))
    monkeypatch.setattr(resident, "_failed", [])

    def echo(uid):
        return runner.run(["/bin/echo", "served"], LIMITS, sandbox=isolation.Sandbox("bwrap", uid))

    (first, box1), (second, box2) = slot_runs(echo, echo)
    assert first.exit_code == 0 and first.stdout_tail == "served\n", first
    assert second.exit_code == 0 and box1 is None and box2 is None
    assert len(resident._failed) == 1 and "usage" in resident._failed[0]


# Says where it runs and what it can reach by absolute path, as JSON.
WHERE = textwrap.dedent("""
    import json, os, sys
    print(json.dumps({"python": sys.executable, "cwd": os.getcwd(), "files": os.listdir(os.getcwd()),
                      "script": "import json" in open(__file__).read()}))
""")


@pytest.mark.parametrize(
    ("served", "tmp_inside"),
    [(True, True), (True, False), (False, True)],
    ids=["resident-work-folder-under-it", "resident-work-folder-elsewhere", "bwrap-per-run-work-folder-under-it"],
)
def test_an_install_under_a_folder_only_root_may_enter_runs_scripts(tmp_path, monkeypatch, served, tmp_inside):
    """A grader installed in a virtual environment under a folder only root may enter (pytest's
    /tmp/pytest-of-root, root's home: 0700), its launcher and Python in there, runs a script of
    a folder there too, in a work folder there too (TMPDIR): every folder above them that the
    sandbox makes lets the slot's uid through (the CI of a fresh clone had every exec refused)."""
    import venv

    assert tmp_path.parts[1] == "tmp"  # the sandbox's own /tmp hides the host's
    private = tmp_path / "private"
    env = private / "venv"
    venv.EnvBuilder(symlinks=True).create(env)
    launcher = env / "lib" / "grader" / "grader-launch"  # where a wheel installs it, below the venv
    launcher.parent.mkdir(parents=True)
    launcher.write_bytes(Path(sandbox.native_launcher() or "").read_bytes())
    launcher.chmod(0o755)
    private.chmod(0o700)
    monkeypatch.setattr(resident, "native_launcher", lambda: str(launcher))
    monkeypatch.setattr(sandbox, "native_launcher", lambda: str(launcher))
    monkeypatch.setattr(resident, "_failed", [] if served else ["not asked in this test"])
    if tmp_inside:
        (private / "tmp").mkdir()
        (private / "tmp").chmod(0o1777)
        monkeypatch.setattr(tempfile, "tempdir", str(private / "tmp"))
    where = script(private / "submission", "where.py", WHERE)

    def first(uid):
        return runner.run([str(env / "bin" / "python"), where], LIMITS, sandbox=isolation.Sandbox("bwrap", uid),
                          script_dir=str(private / "submission"))  # fmt: skip

    ((ran, box),) = slot_runs(first)
    assert (box is not None) == served  # the resident sandbox ran it, or a bwrap of its own
    assert ran.exit_code == 0, ran
    got = json.loads(ran.stdout_tail)
    assert got["script"] and got["files"] == [], got
    assert got["cwd"].startswith(str(private / "tmp")) == tmp_inside, got


def test_a_view_stays_mounted_for_the_runs_that_ask_for_it_and_no_other(tmp_path):
    """The server keeps a run's views mounted for the next run that asks for the same: a folder
    removed and made again under its name is shown anew, and a run of another folder sees
    neither the views it did not ask for nor their names."""
    shows = "import os, sys\nprint(open(sys.argv[1]).read(), os.path.exists(sys.argv[2]), flush=True)\n"
    a, b = tmp_path / "a", tmp_path / "b"
    script(a, "shows.py", shows)
    script(b, "shows.py", shows)
    (a / "note.txt").write_text("first")
    (b / "note.txt").write_text("other")
    python = python_for("bwrap")

    def of(folder, elsewhere):
        def step(uid):
            if folder == a and (a / "note.txt").read_text() == "first" and step.replace:
                shutil.rmtree(a)  # made again under its name: another folder for the kernel
                script(a, "shows.py", shows)
                (a / "note.txt").write_text("again")
            return runner.run([python, str(folder / "shows.py"), str(folder / "note.txt"), str(elsewhere)], LIMITS,
                              sandbox=isolation.Sandbox("bwrap", uid), script_dir=str(folder))  # fmt: skip

        step.replace = False
        return step

    again = of(a, b)
    again.replace = True
    runs = slot_runs(of(a, b), of(a, b), again, of(b, a))
    assert [r.stdout_tail for r, _ in runs] == ["first False\n", "first False\n", "again False\n", "other False\n"], (
        runs
    )
    assert len({box for _, box in runs}) == 1  # one sandbox served them all


def bwraps_of_this_process() -> set[int]:
    """The pids of the bwrap processes this process started that still run (the residents)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            name, rest = (entry / "stat").read_text().rsplit(")", 1)
        except (OSError, ValueError):
            continue
        if name.endswith("(bwrap") and int(rest.split()[1]) == os.getpid():
            found.add(int(entry.name))
    return found


@pytest.mark.parametrize("keep", [True, False])
def test_an_executor_kept_open_keeps_its_slots_sandboxes_from_one_run_to_the_next(keep):
    """A portal worker grades upload after upload on lanes of one executor (keep_sandboxes):
    each slot's resident sandbox serves every run and ends when the executor closes. A run's
    own executor gives a slot's back once nothing is queued for it."""
    settings = Settings(jobs=2, isolation="bwrap")
    before = bwraps_of_this_process()  # another test's in this process, if one left any: not this one's
    with LocalExecutor(2, keep_sandboxes=keep) as executor:
        with executor.lane() as lane:
            first = grade(NEGAMAX, PLAN, settings, executor=lane)
        after_first = bwraps_of_this_process() - before
        with executor.lane() as lane:
            second = grade(NEGAMAX, PLAN, settings, executor=lane)
        after_second = bwraps_of_this_process() - before
    assert first.total == second.total == 10 and second.symbols == first.symbols
    if keep:
        assert len(after_first) == 2 and after_second == after_first, (after_first, after_second)
    else:
        assert after_first == after_second == set()
    assert bwraps_of_this_process() - before == set()  # closed with the executor
