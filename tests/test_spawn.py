"""Starting untrusted programs without Python in a forked child: subprocess is never handed a
preexec_fn, a user or a group (so it can vfork), and what the child needs before the script
runs is done by the exec'd launcher, the C one (built by setup.py) or its Python twin, alike."""

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.engines import cgroups, isolation, runner, sandbox, spawn
from grader.limits import Limits

from test_security import SYSTEM_PYTHON, in_a_job_slot, python_for, works

NATIVE = sandbox.native_launcher() is not None
ROOT_CGROUPS = os.geteuid() == 0 and cgroups.Cgroup.find_base() is not None

# What a script reports of the process it runs in: limits, uid and groups, seccomp, cgroups.
REPORT = textwrap.dedent("""
    import json, os, resource, socket
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        network = "allowed"
    except OSError as e:
        network = e.strerror
    print(json.dumps({
        "limits": {name: resource.getrlimit(getattr(resource, name)) for name in
                   ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_NPROC")},
        "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
        "seccomp": status["Seccomp"].strip(), "no_new_privs": status["NoNewPrivs"].strip(),
        "capabilities": {k: int(status[k], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
        "cgroups": {line.split(":")[1]: line.split(":")[2] for line in open("/proc/self/cgroup").read().splitlines()},
        "session": os.getsid(0) == os.getpid(), "network": network,
    }))
""")


@pytest.fixture(params=["native", "python"])
def launcher(request, monkeypatch):
    """Each launcher in turn: the C one (skipped where it was not built), and the Python one with
    a shell and setpriv inside bwrap, as where the C one was not built."""
    if request.param == "native" and not NATIVE:
        pytest.skip("the C launcher is not built here (no C compiler at install)")
    if request.param == "python":
        for module in (sandbox, spawn):
            monkeypatch.setattr(module, "native_launcher", lambda: None)
        assert spawn.launcher()[-1].endswith("launch.py")
    return request.param


@pytest.fixture
def no_forked_python(monkeypatch):
    """Every Popen of the runs records its arguments: none may need a fork (preexec_fn, user, group)."""
    calls: list[dict] = []
    real = subprocess.Popen.__init__

    def record(self, args, *rest, **kwargs):
        calls.append(kwargs)
        real(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", record)
    yield calls
    assert calls, "no program was started"
    for kwargs in calls:
        assert all(kwargs.get(k) is None for k in ("preexec_fn", "user", "group", "extra_groups")), kwargs


def report(tmp_path, limits, mechanism="none", uid=None):
    script = tmp_path / "report.py"
    script.write_text(REPORT)
    os.chmod(tmp_path, 0o755)
    sandbox = isolation.Sandbox(mechanism, uid)
    result = in_a_job_slot(lambda: runner.run([python_for(mechanism), str(script)], limits, sandbox=sandbox,
                                              script_dir=str(tmp_path)))  # fmt: skip
    assert result.exit_code == 0, result
    return json.loads(result.stdout_tail)


def test_the_launcher_sets_the_limits_and_the_session(launcher, no_forked_python, tmp_path):
    limits = Limits(wall_seconds=10, cpu_seconds=7.5, memory_mb=900, output_bytes=3 * 2**20, processes=20)
    got = report(tmp_path, limits)
    assert got["limits"]["RLIMIT_AS"] == [900 * 2**20] * 2
    assert got["limits"]["RLIMIT_CPU"] == [8, 9]
    assert got["limits"]["RLIMIT_FSIZE"] == [3 * 2**20] * 2 and got["limits"]["RLIMIT_CORE"] == [0, 0]
    assert got["session"]


@pytest.mark.skipif(not ROOT_CGROUPS, reason="needs root and writable pids and memory cgroups (v1)")
def test_the_launcher_joins_every_cgroup_of_its_slot(launcher, no_forked_python, tmp_path):
    """The script is born in each of its slot's cgroups (pids, memory, and whatever CONTROLLERS
    adds), and the grader's main thread is in none of them (a job slot's thread may be: the
    memory cap's kill picks only processes whose main thread is inside)."""
    got = report(tmp_path, Limits(wall_seconds=10, memory_mb=500, processes=20))
    names = {got["cgroups"][c] for c in cgroups.Cgroup.find_bases()}
    assert len(names) == 1 and names.pop().startswith(f"/grader-ns{os.stat('/proc/self/ns/pid').st_ino}-")
    mine = {line.split(":")[1]: line.split(":")[2] for line in Path("/proc/self/cgroup").read_text().splitlines()}
    assert all(not mine[c].startswith("/grader-") for c in cgroups.Cgroup.find_bases())


@pytest.mark.skipif(works("uid") is not None, reason=f"'uid' cannot work here: {works('uid')}")
def test_under_uid_the_launcher_drops_to_the_slot_and_cuts_the_network(launcher, no_forked_python, tmp_path):
    uid = isolation.claim_uid()
    try:
        got = report(tmp_path, Limits(wall_seconds=10, processes=25), "uid", uid)
    finally:
        isolation.release_uid(uid)
    assert (got["uid"], got["gid"], got["groups"]) == (uid, uid, [])
    assert got["seccomp"] == "2" and got["no_new_privs"] == "1" and got["network"] == "Permission denied"
    assert got["limits"]["RLIMIT_NPROC"] == [25, 25]


@pytest.mark.skipif(works("bwrap") is not None or os.geteuid() != 0, reason="needs root and a working bwrap")
def test_under_bwrap_as_root_the_script_runs_filtered_as_the_slot(launcher, no_forked_python, tmp_path):
    uid = isolation.claim_uid()
    try:
        got = report(tmp_path, Limits(wall_seconds=10, processes=25), "bwrap", uid)
    finally:
        isolation.release_uid(uid)
    assert (got["uid"], got["groups"]) == (uid, []) and got["seccomp"] == "2" and got["no_new_privs"] == "1"
    assert got["capabilities"] == dict.fromkeys(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"), 0)
    assert got["limits"]["RLIMIT_AS"] == [2048 * 2**20] * 2


@pytest.mark.skipif(works("bwrap") is not None, reason="needs a working bwrap")
def test_under_bwrap_a_death_by_signal_and_the_cpu_time_come_through(launcher, tmp_path):
    """The namespace's first process (the C launcher's --init, or the shell) waits for the
    script: its CPU time reaches the grader, and a signal it sends itself kills it."""
    script = tmp_path / "burn.py"
    script.write_text("import os, signal, time\nend = time.process_time() + 0.4\nwhile time.process_time() < end:\n"
                      "    pass\nprint(51, flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)\n")  # fmt: skip
    os.chmod(tmp_path, 0o755)
    uid = isolation.claim_uid() if os.geteuid() == 0 else None
    try:
        result = in_a_job_slot(lambda: runner.run([sys.executable, str(script)], 10, sandbox=isolation.Sandbox("bwrap", uid),
                                                  script_dir=str(tmp_path)))  # fmt: skip
    finally:
        if uid is not None:
            isolation.release_uid(uid)
    assert result.signal == signal.SIGSEGV and result.crashed and result.stdout_tail == "51\n", result
    assert result.cpu_seconds >= 0.35, result


def test_a_program_that_cannot_be_started_is_a_start_error(launcher, tmp_path):
    """The launcher reports a failed exec on its channel, and the run says so as Popen's own
    error would: not a crash of a program that never ran."""
    missing = str(tmp_path / "missing")
    result = runner.run([missing], 1)
    assert result.start_error == f"could not be started: {missing!r}: No such file or directory" and result.crashed
    (tmp_path / "plain.txt").write_text("not a program")
    result = runner.run([str(tmp_path / "plain.txt")], 1)
    assert result.start_error.endswith(": Permission denied"), result


def test_a_limit_the_kernel_refuses_is_a_start_error(launcher):
    """A limit the launcher cannot set (above the hard limit it was started under: set here
    in the launcher by hand) stops the start, naming the step."""
    options = ["--rlimit", f"{resource.RLIMIT_NOFILE}:{2**40}:{2**40}"]
    report_, channel = os.pipe()
    done = subprocess.run([*spawn.launcher(), "--errfd", str(channel), *options, "--", "/bin/true"],
                          pass_fds=(channel,), capture_output=True)  # fmt: skip
    os.close(channel)
    told = os.read(report_, 100).decode()
    os.close(report_)
    assert done.returncode == 127 and told.startswith("setrlimit:"), (done, told)


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(SYSTEM_PYTHON), reason="needs root")
def test_the_network_filter_holds_in_the_scripts_children(launcher, tmp_path):
    """The seccomp filter the launcher installs is inherited by all the script starts."""
    script = tmp_path / "child.py"
    script.write_text(
        "import subprocess, sys\n"
        "print(subprocess.run([sys.executable, '-c', 'import socket; socket.socket()'], capture_output=True,"
        " text=True).stderr.strip().splitlines()[-1])\n"
    )
    os.chmod(tmp_path, 0o755)
    uid = isolation.claim_uid()
    try:
        result = in_a_job_slot(lambda: runner.run([SYSTEM_PYTHON, str(script)], 10, sandbox=isolation.Sandbox("uid", uid),
                                                  script_dir=str(tmp_path)))  # fmt: skip
    finally:
        isolation.release_uid(uid)
    assert result.stdout_tail.strip() == "PermissionError: [Errno 13] Permission denied", result
    assert socket.socket  # the grader's own network is untouched
