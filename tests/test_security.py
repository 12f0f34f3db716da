"""Grades the graded scripts cannot read or forge, with the default settings.

Each defence is shown by a real attacking script: grader/share/attacks/probe.py (the one
'grader doctor' runs) under every mechanism this machine offers, tests/attacks/
copycat.py and forger.py in a real class run, as root and as a normal user,
fill_folders.py under bwrap and unshare, memory_in_children.py, keyring.py and hoarder.py.
"""

import csv
import io
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner
from test_hostile import MARGIN, hostile_copy, processes_of

from grader import doctor
from grader.cli import main
from grader.engines import isolation, runner, sandbox, spawn
from grader.errors import GraderError
from grader.games.othello import OTHELLO, Position
from grader.grading.plans import Plan
from grader.grading.results import Settings
from grader.grading.run import grade
from grader.grading.runfolder import RunFolder
from grader.limits import Limits
from grader.runs import seals

from conftest import HANDOUT_BOARD, ROOT

ATTACKS = Path(__file__).parent / "attacks"
NO_PIDS_CGROUP = not os.access("/sys/fs/cgroup/pids", os.W_OK)
SYSTEM_PYTHON = "/usr/bin/python3"  # the 'uid' mechanism needs a Python every user can run
PLAN = Plan((Position.from_string(HANDOUT_BOARD, "x"),), None, "handout board")


def python_for(mechanism: str) -> str:
    return SYSTEM_PYTHON if mechanism == "uid" else sys.executable


def works(mechanism: str) -> str | None:
    """Why ``mechanism`` cannot be tested here, or None."""
    if mechanism == "uid" and not os.path.exists(SYSTEM_PYTHON):
        return f"'uid' needs a Python every user can run, and {SYSTEM_PYTHON} is missing"
    return isolation.problem(mechanism, python_for(mechanism))


def in_a_job_slot(run: Callable[[], runner.RunResult]) -> runner.RunResult:
    """``run()`` on a thread dedicated to scripts, as the executor's are (its scripts get the slot's cgroups)."""
    done: list[runner.RunResult] = []

    def slot() -> None:
        runner.dedicate_this_thread()
        done.append(run())

    thread = threading.Thread(target=slot)
    thread.start()
    thread.join()
    return done[0]


@pytest.fixture(params=isolation.MECHANISMS)
def mechanism(request):
    reason = works(request.param)
    if reason:
        pytest.skip(f"{request.param} cannot work here: {reason}")
    return request.param


# --- every attack, under every mechanism --------------------------------------------------


def test_every_attack_is_blocked(mechanism):
    found = doctor.diagnose(mechanism, python_for(mechanism))
    assert found.isolation == mechanism
    got = {a.category: a.got_through for a in found.attacks}
    if mechanism == "uid":  # no namespaces: the grader's command line shows in /proc, nothing more
        assert [g.endswith("and its command line") for g in got.pop("see")] == [True]
    else:
        assert found.safe
    assert got == {c: [] for c in doctor.ATTACKS if c in got}


def test_without_isolation_the_attacks_get_through():
    """The probe is a real attacker: with 'none' (as root) it reads the run folder, sees the
    grader, reads another test's directory, reaches the network and runs as root."""
    found = doctor.diagnose("none")
    got = {a.category: a.got_through for a in found.attacks}
    assert got["files"] and got["see"] and got["processes"] and got["tmp"] and got["network"]
    assert bool(got["root"]) == (os.geteuid() == 0)
    assert not found.safe


def test_doctor_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["doctor"])
    chosen = isolation.choose("auto", sys.executable)
    assert result.exit_code == (0 if chosen != "none" else 1), result.output
    assert f"  {chosen:<8} works  <- used" in result.output
    assert result.output.count("blocked") == len(doctor.ATTACKS)


@pytest.mark.parametrize("stem", ["double_fork", "fork_bomb", "child_holds_pipe"])
def test_isolated_hostile_scripts_leave_nothing(mechanism, stem, tmp_path):
    limits = Limits(wall_seconds=1.5, processes=30)
    script = hostile_copy(stem, tmp_path)
    result = grade(script, PLAN, Settings(limits=limits, isolation=mechanism, python=python_for(mechanism)))
    assert result.tests[0].run.wall_seconds < limits.wall_seconds + MARGIN
    assert processes_of(script.stem) == []
    # and no zombie of a slot's uid left to us (the subreaper): zombies count against the uid's
    # process limit, so the next test on that uid (another student's) could not start
    assert [p for p in _children() if _uid_of(p) in isolation.SLOT_UIDS] == []


def _children() -> list[str]:
    return [p for t in os.listdir("/proc/self/task") for p in open(f"/proc/self/task/{t}/children").read().split()]


def _uid_of(pid: str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def test_isolated_scripts_read_helpers_and_write_scratch_files(mechanism, tmp_path):
    """Real students' scripts keep working: a helper module and a data file next to them,
    scratch files in their working directory."""
    (tmp_path / "helper.py").write_text("ANSWER = 'Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]'\n")
    (tmp_path / "book.txt").write_text("opening book\n")
    (tmp_path / "main.py").write_text(
        "import os, helper\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "assert open(os.path.join(here, 'book.txt')).read() == 'opening book\\n'\n"
        "open('scratch.txt', 'w').write('x' * 1000)\n"
        "import tempfile; tempfile.NamedTemporaryFile().write(b'y')\n"
        "print(helper.ANSWER)\n"
    )
    result = grade(tmp_path / "main.py", PLAN, Settings(isolation=mechanism, python=python_for(mechanism)))
    assert result.symbols == "+", result.tests[0].diagnosis


@pytest.mark.parametrize("mechanism", ["bwrap", "unshare"])  # the mechanisms that mount the script's folders
def test_in_a_namespace_a_script_writes_at_most_output_bytes_in_each_folder(mechanism, tmp_path):
    """A script reserving space file by file (each under RLIMIT_FSIZE) gets at most
    limits.output_bytes in its working folder and in /tmp: it can fill neither the disk
    (the class's records) nor the memory (the sandbox's /tmp), and still gets its grade."""
    if works(mechanism):
        pytest.skip(f"{mechanism} cannot work here: {works(mechanism)}")
    if mechanism == "bwrap" and not sandbox._bwrap_sizes(sandbox.tool_path("bwrap") or "bwrap"):
        pytest.skip("this bwrap cannot size a tmpfs (--size): docs/guides/administrator.md says so")
    script = tmp_path / "fill_folders.py"
    shutil.copy(ATTACKS / "fill_folders.py", script)
    limits = Limits(wall_seconds=10, output_bytes=4 * 2**20)
    result = grade(script, PLAN, Settings(limits=limits, isolation=mechanism, python=python_for(mechanism)))
    test = result.tests[0]
    assert test.symbol == "+", test.diagnosis
    got = dict(line.split(": ") for line in test.run.stdout_tail.splitlines() if line.endswith(" MiB"))
    assert set(got) == {".", "/tmp"} and all(1 <= int(v.split()[0]) <= 4 for v in got.values()), got


@pytest.mark.skipif(os.geteuid() != 0 or not os.access("/sys/fs/cgroup/memory", os.W_OK) or NO_PIDS_CGROUP,
                    reason="needs root and writable pids and memory cgroups (v1)")  # fmt: skip
@pytest.mark.slow
def test_a_scripts_processes_together_get_at_most_memory_mb(tmp_path):
    """Four children of 150 MiB each stay under RLIMIT_AS (per process) but not under the
    memory cgroup's 300 MiB for them all: the kernel kills one, never the grader, and the
    run names the limit. Run from a job slot's thread, as the executor's are."""
    script = tmp_path / "memory_in_children.py"
    shutil.copy(ATTACKS / "memory_in_children.py", script)
    limits = Limits(wall_seconds=20, memory_mb=300, processes=30)
    result = in_a_job_slot(lambda: runner.run([sys.executable, str(script)], limits))
    codes = [int(c) for c in result.stdout_tail.split("children:")[1].split("\n")[0].split()]
    assert len(codes) == 4 and -9 in codes, result.stdout_tail
    assert result.exit_code == 1 and not result.timed_out, result
    assert result.describe() == "crashed: it exited with code 1 (it ran out of memory: limits.memory_mb is 300 MB)"


def test_scripts_share_nothing_through_the_kernels_keyrings(mechanism, monkeypatch, slot_folder):
    """One script adds a key to its user keyring, the next (the same job slot: the same uid as
    root) looks for it: as root the keyring calls fail in every mechanism (a normal user's
    bwrap and unshare make a user namespace, whose keyrings are its own)."""
    name = f"grader-test-{secrets.token_hex(8)}"  # a key only this test knows
    script = slot_folder / "keyring.py"
    shutil.copy(ATTACKS / "keyring.py", script)
    uid = isolation.claim_uid() if os.geteuid() == 0 else None  # one slot's uid for every run

    def run(action: str) -> str:
        command = [python_for(mechanism), str(script), action, name]
        sandbox = isolation.Sandbox(mechanism, uid)
        done = in_a_job_slot(lambda: runner.run(command, Limits(wall_seconds=10), sandbox=sandbox,
                                                script_dir=str(slot_folder)))  # fmt: skip
        return done.stdout_tail or repr(done)

    outputs = [run("put"), run("get")]
    monkeypatch.setattr(spawn, "seccomp_for", lambda sandbox: None)  # the control: without the grader's filter
    outputs.append(run("try"))
    if uid is not None:
        isolation.release_uid(uid)
    if os.geteuid() == 0 and not outputs[2].startswith("put: added"):
        pytest.skip(f"keyrings are shut off here already (a container's own filter?): {outputs[2]}")
    assert outputs[1].startswith("get: not found"), outputs
    if os.geteuid() == 0:
        assert outputs[0].startswith("put: refused (Operation not permitted)"), outputs


@pytest.mark.skipif(works("uid") is not None, reason=f"'uid' cannot work here: {works('uid')}")
def test_public_tests_run_before_private_ones_so_none_can_show_a_private_board(slot_folder):
    """Under 'uid' (Gradescope's) scripts share /tmp: a hoarder keeps each board it is given
    there and prints those kept before. The plan lists its private tests first, yet every
    public test runs before any private one, so no public test's output names a private board."""
    token = secrets.token_hex(8)
    script = slot_folder / "hoarder.py"
    script.write_text((ATTACKS / "hoarder.py").read_text().replace("TOKEN", token))
    positions = tuple(OTHELLO.random_positions(7, range(6, 7), 6))
    plan = Plan(positions, None, "hoard", public=frozenset({5, 6}))
    try:
        result = grade(script, plan, Settings(isolation="uid", python=SYSTEM_PYTHON, jobs=2))
    finally:
        shutil.rmtree(f"/tmp/grader-hoard-{token}", ignore_errors=True)
    private = {p.board_string() for i, p in enumerate(positions, 1) if not plan.is_public(i)}
    seen = {
        t.index: {ln.split()[1] for ln in t.run.stdout_tail.splitlines() if ln.startswith("seen ")}
        for t in result.tests
    }
    assert len(result.tests) == 6 and len(private) == 4
    assert all(not seen[i] & private for i in plan.public), seen
    assert all(seen[i] - private for i in range(1, 5)), seen  # the hoard works: the private tests saw the public boards


# --- a class with a copycat and a forger ----------------------------------------------------


def make_class(where: Path) -> tuple[str, str]:
    """alice (negamax), copycat and forger in a class folder; returns the names of the class
    and run folders, which carry a token only this test knows: the attackers aim at it alone."""
    token = secrets.token_hex(8)
    klass = where / f"class-{token}"
    klass.mkdir()
    shutil.copy(ROOT / "submissions" / "negamax.py", klass / "alice.py")
    for name in ("copycat", "forger"):
        text = (ATTACKS / f"{name}.py").read_text()
        (klass / f"{name}.py").write_text(text.replace('"GRADER-TEST-TARGET"', f'"{token}"'))
    fixed = [line.split("#")[0].strip() for line in (ROOT / "fixtures" / "standard.txt").read_text().splitlines()]
    (where / "b.txt").write_text("\n".join([line for line in fixed if line][:4]) + "\n")
    return klass.name, f"run-{token}"


def grades_everywhere(run: Path, screen: str) -> dict[str, dict[str, str]]:
    """Each student's total in the screen table, grades.csv, results.json and report.html."""
    table = {
        ln.split()[0]: ln.split()[1]
        for ln in screen.splitlines()
        if ln.split()[:1] in (["alice"], ["copycat"], ["forger"]) and "/" in ln.split()[1]
    }
    rows = {r["name"]: r["total"] for r in csv.DictReader(io.StringIO((run / "grades.csv").read_text()))}
    data = {s["name"]: f"{s['total']:g}" for s in json.loads((run / "results.json").read_text())["scripts"]}
    html = (run / "report.html").read_text()
    return {"screen": table, "csv": rows, "json": data, "html": html}


def check_true_grades(run: Path, screen: str) -> None:
    found = grades_everywhere(run, screen)
    assert found["screen"] == {"alice": "4/4", "copycat": "0/4", "forger": "0/4"}, screen
    assert found["csv"] == found["json"] == {"alice": "4", "copycat": "0", "forger": "0"}
    assert ">alice</a></td><td>4/4</td>" in found["html"] and ">forger</a></td><td>0/4</td>" in found["html"]


def test_class_with_attackers_as_root(tmp_path):
    klass, run = make_class(tmp_path)
    (tmp_path / "config.yaml").write_text("jobs: 2\n")  # the bundled defaults otherwise
    done = subprocess.run([sys.executable, "-m", "grader", "grade", klass, "--boards", "b.txt", "--out", run],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "isolation " in done.stdout.splitlines()[0] and "isolation none" not in done.stdout.splitlines()[0]
    check_true_grades(tmp_path / run, done.stdout)
    assert oct((tmp_path / run).stat().st_mode & 0o777) == "0o700"
    meta = json.loads((tmp_path / run / "run.json").read_text())
    assert (
        meta["isolation_used"] == isolation.choose("auto", sys.executable) and meta["settings"]["isolation"] == "auto"
    )


@pytest.mark.slow
def test_class_with_attackers_as_a_normal_user(tmp_path):
    """The grader run by an unprivileged user (uid 1000 in a user namespace of its own)."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "--user", "--map-user=1000", "true"]).returncode:
        pytest.skip("no user namespaces here to run the grader as a normal user")
    as_user = ["unshare", "--user", "--map-user=1000", "--map-group=1000", sys.executable]
    probe = ("import sys; from grader.engines import isolation\n"
             "why = [isolation.problem(m, sys.executable) for m in ('bwrap', 'unshare')]\n"
             "print('' if None in why else '; '.join(why))")  # fmt: skip
    why = subprocess.run([*as_user, "-c", probe], capture_output=True, text=True, timeout=60)
    assert why.returncode == 0, why.stderr  # the probe itself must run: only its answer may skip
    if why.stdout.strip():  # inside a user namespace already, say (setgroups denied)
        pytest.skip(f"no sandbox works for a normal user here: {why.stdout.strip()}")
    klass, run = make_class(tmp_path)
    (tmp_path / "config.yaml").write_text("jobs: 2\n")
    env = dict(os.environ, GRADER_KEYS=str(tmp_path / "keys"))
    done = subprocess.run(
        [*as_user, "-m", "grader", "grade", klass, "--boards", "b.txt", "--out", run],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "isolation bwrap" in done.stdout or "isolation unshare" in done.stdout, done.stdout
    check_true_grades(tmp_path / run, done.stdout)


@pytest.mark.slow
def test_without_isolation_the_seals_expose_the_forger(tmp_path):
    """With 'isolation: none' the forger does rewrite the records, but no forged grade is
    ever exported: the changed records fail their seal, are named, and are run again.

    The forger reaches only this test's run: a decoy that looks like a grader at work on a
    run folder of its own (what the forger used to rewrite) is left byte for byte as it was."""
    klass, run = make_class(tmp_path)
    decoy = tmp_path / "decoy"
    (decoy / "runs" / "old").mkdir(parents=True)
    decoy_records = decoy / "runs" / "old" / "tests.jsonl"
    decoy_records.write_text(json.dumps({"student": "bob", "credit": 1.0, "symbol": "+", "verdict": {}}) + "\n")
    before = decoy_records.read_bytes()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "grader", "grade", "class",
                                "--out", "runs/old"], cwd=decoy)  # fmt: skip
    (tmp_path / "config.yaml").write_text("jobs: 1\nisolation: none\n")
    try:
        done = subprocess.run([sys.executable, "-m", "grader", "grade", klass, "--boards", "b.txt", "--out", run],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    finally:
        sleeper.kill()
        sleeper.wait()
    assert decoy_records.read_bytes() == before
    assert done.returncode == 0, done.stderr
    assert "fail their seal" in done.stderr and "they are left out of every result" in done.stderr
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO((tmp_path / run / "grades.csv").read_text()))}
    assert rows["alice"]["complete"] == "no" and "failed their seal" in rows["alice"]["note"]
    assert float(rows["alice"]["total"]) < 4 and rows["forger"]["total"] == "0"  # never the forged 0 or 4
    assert "forged" not in json.dumps([r for r in rows.values()])


# --- seals ------------------------------------------------------------------------------


@pytest.fixture
def graded_run(tmp_path):
    shutil.copy(ROOT / "submissions" / "negamax.py", tmp_path / "alice.py")
    shutil.copy(ROOT / "submissions" / "illegal.py", tmp_path / "bob.py")
    plan = Plan(tuple(Position.from_string(HANDOUT_BOARD, "x") for _ in range(3)), None, "three")
    from grader import grade_class

    grade_class([tmp_path / "alice.py", tmp_path / "bob.py"], plan, Settings(jobs=2), out=tmp_path / "run")
    return tmp_path / "run"


def test_a_changed_record_is_named_and_run_again(graded_run):
    lines = (graded_run / "tests.jsonl").read_text().splitlines()
    number = next(i for i, ln in enumerate(lines) if json.loads(ln)["student"] == "bob")
    record = json.loads(lines[number])
    record["credit"] = record["verdict"]["credit"] = 1.0
    lines[number] = json.dumps(record)
    lines.append(json.dumps({**record, "index": 3, "seal": "0" * 64}))  # a forged record with a made-up seal
    (graded_run / "tests.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.warns(
        Warning, match=rf"2 record\(s\) of .*tests.jsonl fail their seal \(line {number + 1}, {len(lines)}\)"
    ):
        results = {r.name: r for r in RunFolder.open(graded_run).results()}
    assert results["bob"].total == 0 and not results["bob"].complete
    assert results["bob"].stopped == "incomplete: 2 of 3 tests recorded (2 record(s) failed their seal)"
    shown = CliRunner().invoke(main, ["report", str(graded_run)])
    assert shown.exit_code == 1, shown.output
    bob = next(ln for ln in shown.stdout.splitlines() if ln.startswith("bob "))
    assert bob.split()[1] == "0/3" and bob.endswith("incomplete: 2 failed their seal")
    assert (
        shown.stdout.splitlines()[-1].startswith("2 record(s) of ")
        and "fail their seal" in shown.stdout.splitlines()[-1]
    )
    out = CliRunner().invoke(main, ["grade", "--resume", str(graded_run)])
    assert out.exit_code == 0, out.output
    assert "Warning: 2 record(s) of" in out.output  # still named: they stay in the file, never used
    with pytest.warns(Warning, match="fail their seal"):
        results = {r.name: r for r in RunFolder.open(graded_run).results()}
    assert results["bob"].complete and results["bob"].total == 0 and results["alice"].total == 3


def test_a_changed_run_json_or_a_missing_key_is_an_error(graded_run, monkeypatch):
    meta = json.loads((graded_run / "run.json").read_text())
    meta["settings"]["limits"]["wall_seconds"] = 99
    (graded_run / "run.json").write_text(json.dumps(meta))
    with pytest.raises(GraderError, match="run.json' was changed after the grader wrote it"):
        RunFolder.open(graded_run)
    monkeypatch.setenv("GRADER_KEYS", str(graded_run.parent / "elsewhere"))
    with pytest.raises(GraderError, match="no key to check the seals of .* copy it there"):
        RunFolder.open(graded_run)


def test_a_forged_run_id_or_stripped_seals_are_refused(graded_run, tmp_path):
    """Two ways around the seals: a run id pointing at a key of one's own, and a sealed run
    made to look like one of grader 0.1 (no run id, no seals), which rejudge would adopt."""
    meta = json.loads((graded_run / "run.json").read_text())
    own = tmp_path / "evil"
    own.mkdir()
    (own / "x.key").write_text("00" * 32)
    forged = {**meta, "run_id": os.path.relpath(own / "x", seals.keys_dir())}
    (graded_run / "run.json").write_text(json.dumps(forged))
    with pytest.raises(GraderError, match="names no run the grader made"):
        RunFolder.open(graded_run)
    stripped = {k: v for k, v in meta.items() if k not in ("run_id", "seal")}
    (graded_run / "run.json").write_text(json.dumps(stripped))
    for args in (["report", str(graded_run)], ["rejudge", str(graded_run)]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 1 and "which seals its records, but its seals are gone" in out.output, out.output
    lines = [json.loads(ln) for ln in (graded_run / "tests.jsonl").read_text().splitlines()]
    (graded_run / "tests.jsonl").write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k != "seal"}) + "\n" for r in lines)
    )
    stripped["grader_version"] = "0.1.0"  # and passed off as grader 0.1's, but its answers are sealed
    (graded_run / "run.json").write_text(json.dumps(stripped))
    out = CliRunner().invoke(main, ["rejudge", str(graded_run)])
    assert out.exit_code == 1 and "its seals are gone" in out.output, out.output


# --- choosing the isolation -----------------------------------------------------------------


def test_named_isolation_that_cannot_work_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(isolation, "tool_path", lambda name: None)
    monkeypatch.setattr(isolation, "_works", {})
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    (tmp_path / "config.yaml").write_text("isolation: bwrap\n")
    result = CliRunner().invoke(main, ["grade", str(ROOT / "submissions" / "negamax.py"), "--boards", "b.txt"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: isolation 'bwrap' does not work here: isolation 'bwrap' needs the 'bwrap' command, which is not "
        "installed: install it (Debian: apt-get install bubblewrap), or set 'isolation: auto'; set 'isolation: auto' "
        "to use what works"
    )
    (tmp_path / "config.yaml").write_text("isolation: docker\n")
    assert "'isolation' must be one of auto, none, bwrap, unshare, uid; got 'docker'" in CliRunner().invoke(
        main, ["grade", str(ROOT / "submissions" / "negamax.py"), "--boards", "b.txt"]).output  # fmt: skip


def test_when_nothing_isolates_a_class_stops_and_a_self_test_warns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(isolation, "_works", {(m, sys.executable): "not here" for m in isolation.MECHANISMS})
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    (tmp_path / "class").mkdir()
    shutil.copy(ROOT / "submissions" / "negamax.py", tmp_path / "class" / "alice.py")
    refused = CliRunner().invoke(main, ["grade", "class", "--boards", "b.txt", "--out", "run"])
    assert refused.exit_code == 1 and refused.output.startswith("Error: no isolation works on this machine")
    assert "apt-get install bubblewrap" in refused.output and "'isolation: none'" in refused.output
    assert not (tmp_path / "run").exists()
    single = CliRunner().invoke(main, ["grade", "class/alice.py", "--boards", "b.txt"])
    assert single.exit_code == 0 and single.output.startswith("Warning: no isolation works on this machine")
    assert "isolation none (auto)" in single.output and "1/1" in single.output


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(SYSTEM_PYTHON), reason="'uid' is for a grader run as root")
def test_uid_refuses_files_other_users_could_read(monkeypatch):
    tmp_path = Path(tempfile.mkdtemp(dir="/tmp"))  # its parents let anyone through, unlike pytest's
    monkeypatch.chdir(tmp_path)
    (tmp_path / "class").mkdir()
    shutil.copy(ROOT / "submissions" / "negamax.py", tmp_path / "class" / "alice.py")
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    (tmp_path / "config.yaml").write_text(f"isolation: uid\npython: {SYSTEM_PYTHON}\n")
    os.chmod(tmp_path, 0o755)
    result = CliRunner().invoke(main, ["grade", "class", "--boards", "b.txt", "--out", "run"])
    assert result.exit_code == 1
    assert "can be read by other users, so a script could read it: chmod -R go-rwx" in result.output
    os.chmod(tmp_path, 0o700)
    result = CliRunner().invoke(main, ["grade", "class", "--boards", "b.txt", "--out", "run"])
    shutil.rmtree(tmp_path)
    assert result.exit_code == 0, result.output
    assert "isolation uid" in result.output and "alice" in result.output


@pytest.mark.skipif(NO_PIDS_CGROUP, reason="no writable pids cgroup (v1) here")
def test_stale_cgroups_of_a_killed_grader_are_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = Path("/sys/fs/cgroup/pids") / f"grader-ns{os.stat('/proc/self/ns/pid').st_ino}-{dead.stdout.strip()}-1-0"
    stale.mkdir()
    subprocess.run([sys.executable, "-m", "grader", "grade", str(ROOT / "submissions" / "negamax.py"), "--boards",
                    str(ROOT / "fixtures" / "examples.txt")], cwd=tmp_path, capture_output=True, check=True)  # fmt: skip
    assert not stale.exists()


@pytest.mark.skipif(NO_PIDS_CGROUP or os.geteuid() != 0, reason="needs root and a writable pids cgroup (v1)")
def test_a_grader_leaves_alone_a_grader_of_another_pid_namespace(tmp_path):
    """Grader A runs in a PID namespace of its own (as in a container), its script waiting;
    grader B starts on the host meanwhile: B's sweep of dead graders' cgroups cannot tell A's
    pids, so it must leave A's cgroup, and A, alone. A then ends with its grade."""
    waiting = tmp_path / "waiting.py"
    waiting.write_text(
        f"import pathlib, time\nhere = pathlib.Path({str(tmp_path)!r})\n(here / 'started').touch()\n"
        "for _ in range(600):\n    if (here / 'go').exists():\n        break\n    time.sleep(0.05)\n"
        + (ROOT / "submissions" / "negamax.py").read_text()
    )
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    # the script sees the test's folder, and waits however long grader B takes
    (tmp_path / "config.yaml").write_text("isolation: none\nlimits:\n  wall_seconds: 300\n")
    grade = [sys.executable, "-m", "grader", "grade"]
    a = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", *grade, "waiting.py", "--boards", "b.txt",
                          "--out", "run_a"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        for _ in range(600):
            if (tmp_path / "started").exists() or a.poll() is not None:
                break
            time.sleep(0.05)
        assert (tmp_path / "started").exists(), a.communicate()[0]
        b = subprocess.run([*grade, str(ROOT / "submissions" / "negamax.py"), "--boards", "b.txt", "--out", "run_b"],
                           cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
        assert b.returncode == 0, b.stderr
        (tmp_path / "go").touch()
        out = a.communicate(timeout=60)[0]
    finally:
        a.kill()
    assert a.returncode == 0, out
    assert "waiting.py: 1/1" in out
