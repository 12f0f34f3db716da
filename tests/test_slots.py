"""A job slot's runs: each script is born in the slot's cgroups, which the slot's thread joined
once (no process moved per run), and runs in a work folder an earlier run of its grading run
gave back, emptied of everything that run left before the next one sees it."""

import json
import os
import secrets
import subprocess
import sys
import textwrap

import pytest

from grader.engines import cgroups, isolation, runner
from grader.limits import Limits

from test_security import in_a_job_slot, python_for, works

ROOT_CGROUPS = os.geteuid() == 0 and cgroups.Cgroup.find_base() is not None

# Leaves what a script can leave in its folder: a read-only file, odd names, a folder it took
# every permission from (with a file inside), a link to a folder outside (never to be followed),
# extended attributes on the folder itself, and the folder's mode opened to everyone.
LITTER = textwrap.dedent("""
    import os, sys
    here = os.getcwd()
    open("answers.txt", "w").write(sys.argv[1])
    os.chmod("answers.txt", 0o400)
    open(b"odd\\nname \\xff\\xfe".decode("utf-8", "surrogateescape"), "w").write(sys.argv[1])
    open(".hidden", "w").write(sys.argv[1])
    os.makedirs("deep/er/still")
    open("deep/er/still/secret.txt", "w").write(sys.argv[1])
    os.chmod("deep/er", 0)
    os.chmod("deep", 0)
    os.symlink(sys.argv[2], "outside")
    os.mkfifo("pipe")
    for name in ("user.note", "trusted.note"):
        try:
            os.setxattr(here, name, sys.argv[1].encode())
        except OSError:
            pass
    os.chmod(here, 0o777)
    print(here)
""")

# Says what its folder holds and how it is set.
LOOK = textwrap.dedent("""
    import json, os
    here = os.getcwd()
    st = os.stat(here)
    print(json.dumps({"folder": here, "files": os.listdir(here), "mode": oct(st.st_mode & 0o7777),
                      "attributes": [n for n in os.listxattr(here) if not n.startswith("security.")]}))
""")


def two_runs(tmp_path, mechanism: str, uid: int | None) -> tuple[runner.RunResult, runner.RunResult]:
    """LITTER then LOOK, one after the other on one job slot's thread, with one set of work folders."""
    token = secrets.token_hex(8)  # what only this test wrote
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text(token)
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "litter.py").write_text(LITTER)
    (scripts / "look.py").write_text(LOOK)
    sandbox = isolation.Sandbox(mechanism, uid)
    python = python_for(mechanism)
    limits = Limits(wall_seconds=20)
    folders = runner.WorkFolders()

    def both() -> tuple[runner.RunResult, runner.RunResult]:
        first = runner.run([python, str(scripts / "litter.py"), token, str(outside)], limits, sandbox=sandbox,
                           script_dir=str(scripts), folders=folders)  # fmt: skip
        second = runner.run([python, str(scripts / "look.py")], limits, sandbox=sandbox, script_dir=str(scripts),
                            folders=folders)  # fmt: skip
        return first, second

    done: list = []
    in_a_job_slot(lambda: done.append(both()) or runner.RunResult(0, False, 0.0, 0.0))
    first, second = done[0]
    assert (outside / "keep.txt").read_text() == token  # the link was removed, never followed
    folders.close()
    assert not os.path.exists(first.stdout_tail.strip())
    return first, second


@pytest.mark.parametrize("mechanism", ["none", "uid"])
def test_a_slots_next_run_finds_its_folder_empty_whatever_the_last_one_left(mechanism, tmp_path):
    if works(mechanism):
        pytest.skip(f"{mechanism} cannot work here: {works(mechanism)}")
    uid = isolation.claim_uid() if mechanism == "uid" else None
    try:
        first, second = two_runs(tmp_path, mechanism, uid)
    finally:
        if uid is not None:
            isolation.release_uid(uid)
    assert first.exit_code == 0, first
    assert second.exit_code == 0, second
    got = json.loads(second.stdout_tail)
    assert got["folder"] == first.stdout_tail.strip()  # the same folder, reused
    assert got["files"] == ([] if mechanism == "none" else ["submission"])  # 'uid' copies the script's folder in
    assert got["mode"] == "0o700" and got["attributes"] == []


def test_a_folder_that_cannot_be_emptied_is_not_reused(tmp_path):
    """A folder the run replaced by a file, or by a link, is removed (never followed), not
    handed to the next run."""
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep.txt").write_text("kept")
    folders = runner.WorkFolders()
    first, second = folders.take(), folders.take()
    os.rmdir(first)
    with open(first, "w") as f:
        f.write("not a folder")
    os.rmdir(second)
    os.symlink(target, second)
    folders.give_back(first)
    folders.give_back(second)
    assert not os.path.lexists(first) and not os.path.lexists(second)
    assert (target / "keep.txt").read_text() == "kept"
    again = folders.take()
    try:
        assert again not in (first, second) and os.listdir(again) == []
    finally:
        folders.give_back(again)
        folders.close()
    assert not os.path.exists(again)


@pytest.mark.skipif(not ROOT_CGROUPS, reason="needs root and writable pids and memory cgroups (v1)")
def test_a_slots_thread_joins_its_cgroups_once_and_its_scripts_are_born_there(tmp_path, monkeypatch):
    """The launcher is asked to move into no cgroup (a move costs a grace period of the kernel's
    RCU per script); the script is in the slot's cgroups all the same, and the grader's process
    (its main thread) in none of them."""
    calls: list = []
    real = subprocess.Popen.__init__

    def record(self, args, *rest, **kwargs):
        calls.append(list(args))
        real(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", record)
    script = tmp_path / "where.py"
    script.write_text("print(open('/proc/self/cgroup').read())\n")
    result = in_a_job_slot(lambda: runner.run([sys.executable, str(script)], Limits(wall_seconds=10, memory_mb=500)))
    assert result.exit_code == 0, result
    assert calls and all("--cgroup" not in args for args in calls), calls
    theirs = {line.split(":")[1]: line.split(":")[2] for line in result.stdout_tail.splitlines() if line}
    mine = {line.split(":")[1]: line.split(":")[2] for line in open("/proc/self/cgroup").read().splitlines()}
    for controller in cgroups.Cgroup.find_bases():
        assert theirs[controller].startswith("/grader-ns") and not mine[controller].startswith("/grader-")


@pytest.mark.skipif(not ROOT_CGROUPS, reason="needs root and writable pids and memory cgroups (v1)")
@pytest.mark.parametrize("processes", [3, 12])
def test_a_slots_script_starts_exactly_limits_processes_beside_the_slots_thread(processes, tmp_path):
    """The slot's thread in the pids cgroup counts there: the cap leaves the script its
    ``limits.processes``, itself included, no more and no fewer."""
    script = tmp_path / "spawner.py"
    script.write_text(
        textwrap.dedent("""
        import os, time
        started = 0
        while started < 100:
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            started += 1
        print("started", started)
    """)
    )
    result = in_a_job_slot(
        lambda: runner.run([sys.executable, str(script)], Limits(wall_seconds=20, processes=processes))
    )
    assert f"started {processes - 1}" in result.stdout_tail, result


@pytest.mark.skipif(not ROOT_CGROUPS, reason="needs root and writable pids and memory cgroups (v1)")
def test_a_sandbox_killed_at_its_limit_leaves_nothing_charged_to_its_slot(tmp_path, monkeypatch):
    """A bwrap of its own killed at the wall limit reaps its namespace itself: no zombie of it
    is left to the system's init (which in some containers reaps late), charged to the slot's
    pids cgroup, for which the next script's cap would be raised (a fork bomb got 31 and 32
    processes at a cap of 30 that way in tests/test_hostile.py)."""
    if works("bwrap"):
        pytest.skip(f"bwrap cannot work here: {works('bwrap')}")
    from grader.engines import resident

    monkeypatch.setattr(resident, "_failed", ["a bwrap per run in this test"])
    (tmp_path / "waits").mkdir(mode=0o755)
    script = tmp_path / "waits" / "waits.py"
    script.write_text(
        "import os, time\nfor _ in range(5):\n    os.fork()\nprint('forked', flush=True)\ntime.sleep(60)\n"
    )
    uid = isolation.claim_uid()
    charged: list[int] = []

    def run_then_count() -> runner.RunResult:
        result = runner.run([python_for("bwrap"), str(script)], Limits(wall_seconds=0.5, processes=40),
                            sandbox=isolation.Sandbox("bwrap", uid), script_dir=str(script.parent))  # fmt: skip
        charged.append(cgroups.Cgroup._local.cgroup._settle())  # what the next run's cap would make room for
        return result

    try:
        result = in_a_job_slot(run_then_count)
    finally:
        isolation.release_uid(uid)
    assert result.timed_out, result
    assert charged == [0]
