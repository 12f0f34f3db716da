"""The runner against real processes (ordinary scripts; hostile ones are tested in test_hostile)."""

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from grader.engines import isolation, runner
from grader.engines.runner import run
from grader.limits import Limits

from conftest import ROOT

HOSTILE = Path(__file__).parent / "hostile"


def script(tmp_path, body: str, name="s.py") -> list[str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def collect(command, limit=5.0):
    chunks = []
    result = run(command, limit, chunks.append)
    return result, b"".join(chunks).decode()


def test_clean_exit_and_output(tmp_path):
    result, out = collect(script(tmp_path, "print('score 3 9')\nprint('done')"))
    assert out == "score 3 9\ndone\n"
    assert result.exit_code == 0 and not result.timed_out and not result.crashed
    assert result.describe() == "" and result.wall_seconds < 5 and result.cpu_seconds > 0


def test_nonzero_exit_keeps_output_and_stderr_tail(tmp_path):
    result, out = collect(script(tmp_path, "import sys\nprint('My move is 7')\nsys.exit('something broke')"))
    assert out == "My move is 7\n"
    assert result.exit_code == 1 and result.crashed
    assert result.describe() == "crashed: it exited with code 1"
    assert result.stderr_tail.strip() == "something broke"


def test_killed_by_a_signal(tmp_path):
    result, _ = collect(script(tmp_path, "import os, signal\nprint(5)\nos.kill(os.getpid(), signal.SIGSEGV)"))
    assert result.signal == signal.SIGSEGV and result.crashed
    assert result.describe() == "crashed: it was killed by SIGSEGV"


def test_timeout_kills_and_keeps_what_was_printed(tmp_path):
    body = "import time\nprint('My move is 7')\nprint('score 3 7')\ntime.sleep(60)"
    start = time.monotonic()
    result, out = collect(script(tmp_path, body), limit=0.5)
    assert time.monotonic() - start < 30  # killed at its limit, long before its 60 s sleep ends
    assert result.timed_out and not result.crashed and result.signal == signal.SIGKILL
    assert out == "My move is 7\nscore 3 7\n"
    assert re.match(r"timed out after \d+\.\d s", result.describe()), result.describe()


def test_cannot_start(tmp_path):
    result = run([str(tmp_path / "missing")], 1)
    missing = str(tmp_path / "missing")
    assert result.start_error.startswith(f"could not be started: {missing!r}") and result.crashed


def test_stdin_is_at_end_of_file(tmp_path):
    result, out = collect(script(tmp_path, "import sys\nprint(repr(sys.stdin.read()))"), limit=2)
    assert out == "''\n" and not result.timed_out


def test_fresh_working_directory_removed_afterwards(tmp_path):
    result, out = collect(script(tmp_path, "import os\nopen('junk.txt', 'w').write('x')\nprint(os.getcwd())"))
    workdir = out.strip()
    assert workdir != os.getcwd() and os.path.basename(workdir).startswith("grader-")
    assert not os.path.exists(workdir)


def test_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET_ANSWERS", "51")
    body = "import os, json\nprint(json.dumps(dict(os.environ)))"
    _, out = collect(script(tmp_path, body))
    import json

    env = json.loads(out)
    assert "GRADER_SECRET_ANSWERS" not in env
    assert env["PYTHONUNBUFFERED"] == "1" and "PATH" in env
    assert set(env) <= {"PATH", "LANG", "LC_ALL", "JAVA_HOME", "HOME", "TMPDIR", "PYTHONUNBUFFERED",
                        "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "LC_CTYPE", "GRADER_SCRIPT"}  # fmt: skip


def test_unflushed_python_output_is_not_lost_at_the_limit(tmp_path):
    """PYTHONUNBUFFERED: print() without flush reaches us even though the script is killed."""
    body = "import time\nprint('score 3 7', end='')\ntime.sleep(60)"
    result, out = collect(script(tmp_path, body), limit=0.5)
    assert result.timed_out and out == "score 3 7"


def test_child_left_holding_the_pipe_does_not_hold_the_test(tmp_path):
    body = """
        import subprocess, sys
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(p.pid, flush=True)
        print("score 1 2")
    """
    start = time.monotonic()
    result, out = collect(script(tmp_path, body), limit=5)
    assert time.monotonic() - start < 30  # not the child's 60 s
    assert not result.timed_out and result.exit_code == 0
    time.sleep(0.1)
    assert not alive(int(out.split()[0]))


def alive(pid: int) -> bool:
    """Running or sleeping; a zombie (killed, waiting to be reaped) counts as dead."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def test_nothing_printed_after_the_limit_counts(tmp_path):
    """An escaped child that prints just after the limit is killed before the last read."""
    body = """
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            time.sleep(1.1)
            print("score 18 15 -1 7 -1 14 -1 51", flush=True)
            os._exit(0)
        print("My move is 7", flush=True)
        time.sleep(60)
    """
    result, out = collect(script(tmp_path, body), limit=1.0)
    assert result.timed_out and out == "My move is 7\n"


def test_limits_above_our_own_hard_limits_are_lowered(tmp_path):
    """A grader started under a lower hard limit (ulimit -v) still runs scripts."""
    code = (
        "import resource, sys; from grader.engines.runner import run; from grader.limits import Limits; "
        "resource.setrlimit(resource.RLIMIT_AS, (1500 * 2**20, 1500 * 2**20)); "
        "r = run([sys.executable, '-c', 'print(51)'], Limits(wall_seconds=5, memory_mb=4096)); "
        "print(r.exit_code, r.start_error, r.stdout_tail.strip())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "0 None 51", done.stderr


def test_a_stop_kills_its_runs_and_no_script_starts_after_it(tmp_path):
    from grader.stop import Stop

    stop = Stop()
    threading.Timer(0.3, stop.set, ["interrupted (Ctrl-C)"]).start()
    start = time.monotonic()
    result = run(
        script(tmp_path, "import time\nprint(7, flush=True)\ntime.sleep(60)"), Limits(wall_seconds=30), stop=stop
    )
    assert time.monotonic() - start < 25  # the stop, not the 30 s limit, ended it
    assert result.interrupted and not result.crashed and not result.timed_out
    after = run(script(tmp_path, "print(1)"), 5, stop=stop)
    assert after.interrupted and after.exit_code is None and not after.crashed


def test_stops_are_per_run(tmp_path):
    """Stopping one run leaves another run in the same process alone, and a new run after a
    stopped one starts normally (no process-wide interrupt flag)."""
    from grader.stop import Stop

    stopped, other = Stop(), Stop()
    stopped.set()
    assert run(script(tmp_path, "print(1)"), 5, stop=stopped).interrupted
    result = run(script(tmp_path, "print(1)"), 5, stop=other)
    assert result.exit_code == 0 and not result.interrupted
    assert run(script(tmp_path, "print(2)"), 5).exit_code == 0


def test_a_script_killing_itself_is_a_crash_not_a_grader_stop(tmp_path):
    result, _ = collect(
        script(tmp_path, "import os, signal\nprint(51, flush=True)\nos.kill(os.getpid(), signal.SIGKILL)")
    )
    assert result.crashed and not result.stopped_by_grader and result.signal == signal.SIGKILL
    assert result.describe() == "crashed: it was killed by SIGKILL"


def test_out_of_memory_names_the_limit(tmp_path):
    body = "print(51, flush=True)\nx = bytearray(400 * 2**20)"
    result = run(script(tmp_path, body), Limits(wall_seconds=10, memory_mb=200))
    assert result.crashed and "MemoryError" in result.stderr_tail
    assert result.describe() == "crashed: it exited with code 1 (it ran out of memory: limits.memory_mb is 200 MB)"


def test_limits_beyond_what_the_system_takes_are_no_limits(tmp_path):
    """A library caller's Limits past setrlimit's range run the script (as no limit) instead
    of failing every start in the child."""
    huge = Limits(wall_seconds=10, memory_mb=2**50, output_bytes=10**20, processes=2**40)
    result = run(script(tmp_path, "print(51)"), huge)
    assert result.exit_code == 0 and result.stdout_tail.strip() == "51", result


def test_other_processes_of_the_grader_are_not_swept(tmp_path):
    """A child of the grader that no script started (a cluster worker, a caller's own
    process) survives the sweep of orphans."""
    mine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        collect(script(tmp_path, "print(1)"))
        assert mine.poll() is None
    finally:
        mine.kill()
        mine.wait()


@pytest.mark.parametrize("mechanism", [*isolation.MECHANISMS, "none"])
def test_cpu_seconds_of_a_script_killed_at_the_wall_limit(mechanism):
    """The CPU time of a busy loop killed at the wall limit is its own, under every sandbox
    (bwrap's and unshare's first process used to die before reaping it: 0.003 s recorded).
    It tells an overloaded machine (little CPU) from a slow script (CPU all along)."""
    from test_security import python_for, works

    if works(mechanism):
        pytest.skip(f"{mechanism} cannot work here: {works(mechanism)}")
    uid = isolation.claim_uid() if mechanism != "none" and os.geteuid() == 0 else None
    try:
        result = run([python_for(mechanism), str(HOSTILE / "loop.py")], Limits(wall_seconds=1.5), None,
                     isolation.Sandbox(mechanism, uid), None, str(HOSTILE))  # fmt: skip
    finally:
        if uid is not None:
            isolation.release_uid(uid)
    assert result.timed_out and not result.cpu_limited
    assert result.cpu_seconds > 0.2  # a loop given any fair share of a core for 1.5 s


def test_a_grader_killed_with_sigkill_leaves_folders_the_next_one_removes(tmp_path):
    """SIGKILL leaves a grader no time to remove its work folders (the script's copy, its
    run's files); the next grader removes them on its first run, and never a live grader's
    folder, one of another PID namespace or another user, a link, or one not named by a grader."""
    tmp, token = tmp_path / "tmp", f"t{os.getpid()}x{time.monotonic_ns()}"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    board = next(line.split("#")[0].strip() for line in (ROOT / "fixtures" / "standard.txt").read_text().splitlines()
                 if line.split("#")[0].strip())  # fmt: skip
    (tmp_path / "b.txt").write_text(board + "\n")
    (tmp_path / f"{token}.py").write_text("import time\ntime.sleep(5)\n")
    killed = subprocess.Popen([sys.executable, "-m", "grader", "grade", f"{token}.py", "--boards", "b.txt"],
                              cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 30
    while not list(tmp.glob(f"grader-scripts-*/*/{token}.py")) or len(list(tmp.glob("grader-*"))) < 2:
        assert time.monotonic() < deadline and killed.poll() is None, "the grader made no work folder"
        time.sleep(0.05)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    left = {p.name for p in tmp.glob("grader-*")}
    namespace, me = os.stat("/proc/self/ns/pid").st_ino, runner._process_id(os.getpid())
    kept = [tmp / f"grader-{namespace}-{me}-live_one", tmp / f"grader-{namespace + 1}-{os.getpid()}-1-other_ns",
            tmp / "grader-2024-11-backup00", tmp / f"grader-notes-{token}"]  # fmt: skip
    for folder in kept:
        folder.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep.txt").write_text(token)
    (tmp / f"grader-{namespace}-{os.getpid()}-1-a_link00").symlink_to(target)  # a dead grader's name
    if os.geteuid() == 0:
        kept.append(tmp / f"grader-{namespace}-{os.getpid()}-1-a_user00")  # a dead grader's name
        kept[-1].mkdir()
        os.chown(kept[-1], 12345, 12345)
    again = subprocess.run([sys.executable, "-m", "grader", "grade", str(ROOT / "submissions" / "negamax.py"),
                            "--boards", "b.txt"], cwd=tmp_path, env=env, capture_output=True, text=True)  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert left and not left & {p.name for p in tmp.glob("grader-*")}
    assert all(folder.is_dir() for folder in kept) and (target / "keep.txt").read_text() == token
