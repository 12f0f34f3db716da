"""Fair CPU: a program's processes in CPU cgroups of their own, engines frozen off move, a
CPU-time clock, protocol lines read with a bounded buffer; each shown with a real attacking
program (tests/attacks/cpu_hog.py: 60 busy children, each in a session of its own).

The assertions read what the cgroups say (where a process is, the freezer's state, the CPU
time counted) and the verdicts and games, never how fast anything ran: the time ratios are
bench/fair_cpu.py's to print.
"""

import json
import os
import random
import secrets
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.config import ConfigError, load_config
from grader.engines import fairness, isolation, runner
from grader.engines.programs import PYTHON, ProtocolEngine
from grader.engines.sandbox import Sandbox, claim_uid, release_uid
from grader.engines.sessions import LINE_BYTES, Session
from grader.errors import GraderError
from grader.limits import Limits
from grader.stop import Stop
from grader.tournaments.tournament import Engine, TournamentSettings, run_tournament

import reference as ref
from test_nboard import ENGINE, NEAR_END, nboard
from test_security import python_for, works

ATTACKS = Path(__file__).parent / "attacks"
SUPPORT = fairness.support()
needs_cgroups = pytest.mark.skipif(not SUPPORT.complete, reason=f"no fair-CPU cgroups here: {SUPPORT.missing() or ''}")


def hog_copy(folder: Path, name: str = "cpu_hog") -> Path:
    """The hog under a name only this test knows (its processes' command lines carry it)."""
    path = folder / f"{name}_{secrets.token_hex(6)}.py"
    path.write_text((ATTACKS / "cpu_hog.py").read_text())
    return path


def processes_of(path: Path) -> list[int]:
    """Live processes whose command line names ``path``'s file."""
    found = []
    for pid in (p for p in Path("/proc").iterdir() if p.name.isdigit()):
        try:
            if f"/{path.name}".encode() in (pid / "cmdline").read_bytes():
                if (pid / "stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    found.append(int(pid.name))
        except OSError:
            continue
    return found


def cgroup_of(pid: int, controller: str) -> str | None:
    """The cgroup of ``pid`` in the v1 hierarchy of ``controller``, as /proc says."""
    try:
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if controller in names.split(","):
                return path
    except OSError:
        pass
    return None


def in_a_slot(call, slot: int, jobs: int):
    """``call()`` on a thread that is job slot ``slot`` of ``jobs``, as the executor's are."""
    done = []

    def slot_thread() -> None:
        fairness.assign_slot(slot, jobs)
        done.append(call())

    thread = threading.Thread(target=slot_thread)
    thread.start()
    thread.join()
    return done[0]


def wait_for(check, seconds: float = 20.0) -> bool:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        if check():
            return True
        time.sleep(0.05)
    return check()


# --- one engine's cgroups, under every mechanism ------------------------------------------


@needs_cgroups
@pytest.mark.parametrize("mechanism", isolation.MECHANISMS)
def test_the_hogs_children_stay_in_its_cgroups_and_freeze_with_it(mechanism, slot_folder):
    """Every process the hog starts, setsid() or not, is in its engine's cgroups (cpu,
    cpuset, freezer, cpuacct) and nowhere else, with the slot's quota and cores; pause()
    freezes them all (the CPU counted stops), resume() lets them run; close() leaves nothing."""
    why = works(mechanism)
    if why:
        pytest.skip(f"{mechanism} cannot work here: {why}")
    hog = hog_copy(slot_folder)
    os.chmod(hog, 0o644)
    uid = claim_uid() if os.geteuid() == 0 else None
    session = Session([python_for(mechanism), str(hog), "nboard"], Limits(wall_seconds=10), Sandbox(mechanism, uid),
                      Stop(), str(slot_folder), str(slot_folder))  # fmt: skip
    try:
        assert in_a_slot(session.start, 0, 1) is None
        fair = session.fair
        assert fair is not None
        # the hog and its 60 children, each in a session of its own, all in the engine's cgroups
        assert wait_for(lambda: len(processes_of(hog)) >= 61), processes_of(hog)
        for pid in processes_of(hog):
            for controller, folder in fair.v1.items():
                assert cgroup_of(pid, controller) == "/" + folder.name, (pid, controller)
        assert (fair.v1["cpu"] / "cpu.cfs_quota_us").read_text().strip() == str(len(SUPPORT.cores) * 100_000)
        cores = fairness.slot_cores(SUPPORT.cores, 0, 1)[0]
        assert fairness._cpu_list((fair.v1["cpuset"] / "cpuset.cpus").read_text().strip()) == cores
        session.pause()
        assert (fair.v1["freezer"] / "freezer.state").read_text().strip() == "FROZEN"
        counted = fair.cpu_seconds()
        time.sleep(0.3)
        assert fair.cpu_seconds() == counted  # frozen: not a nanosecond of CPU
        session.resume()
        assert (fair.v1["freezer"] / "freezer.state").read_text().strip() == "THAWED"
        assert wait_for(lambda: (fair.cpu_seconds() or 0) > (counted or 0), 5)
    finally:
        session.pause()  # closing a frozen engine kills it all the same
        session.close()
        if uid is not None:
            release_uid(uid)
    assert wait_for(lambda: processes_of(hog) == [], 5), processes_of(hog)


@needs_cgroups
def test_job_slots_get_their_own_cores_and_equal_quotas():
    cores = (0, 1, 2, 3)
    assert fairness.slot_cores(cores, 0, 2) == ((0, 1), 2.0)
    assert fairness.slot_cores(cores, 1, 2) == ((2, 3), 2.0)
    assert fairness.slot_cores(cores, 3, 4) == ((3,), 1.0)
    assert fairness.slot_cores(cores, 0, 8) == ((), 0.5)  # more slots than cores: no pinning, an equal quota
    assert fairness.slot_cores(cores, None, None) == ((), 4.0)  # not a job slot


@needs_cgroups
def test_a_tree_started_by_a_portal_grading_thread_weighs_what_the_thread_does():
    from grader.portal.jobs.workers import GRADING_NICE, grade_below_pages

    seen: dict[str, object] = {}

    def grading() -> None:
        grade_below_pages()
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        made = fairness.take()
        assert made is not None
        seen["shares"] = (made.v1["cpu"] / "cpu.shares").read_text().strip()
        made.release()

    worker = threading.Thread(target=grading)
    worker.start()
    worker.join()
    assert seen == {"nice": GRADING_NICE, "shares": str(round(1024 / 1.25**GRADING_NICE))}  # the kernel's 110
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == 0  # the pages' threads keep theirs
    made = fairness.take()
    assert made is not None and (made.v1["cpu"] / "cpu.shares").read_text().strip() == "1024"
    made.release()


def test_a_v2_cgroup_freezes_a_process_tree(tmp_path):
    """cgroup v2's freezer (cgroup.freeze), where a cgroup2 hierarchy is writable: a real
    busy process in a v2 cgroup of this test's stops using CPU once frozen."""
    base = next((b for b in fairness.V2_MOUNTS if (b / "cgroup.controllers").exists()), None)
    if base is None or not os.access(base, os.W_OK):
        pytest.skip("no writable cgroup2 hierarchy here")
    folder = base / f"grader-test-{secrets.token_hex(6)}"
    folder.mkdir()
    tree = fairness.FairCgroup({}, folder, set(), "0")
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    for folder in tree.folders:  # one process: joined once it runs
        (folder / "cgroup.procs").write_text(str(proc.pid))
    try:
        assert tree.pids() == [proc.pid]
        assert tree.freeze() and tree.frozen()
        counted = tree.cpu_seconds()
        time.sleep(0.3)
        assert tree.cpu_seconds() == counted
        assert tree.thaw() and not tree.frozen()
    finally:
        tree.kill()
        proc.wait()
        tree.remove()
    assert not folder.exists()


# --- the hog as an opponent, as a bystander, as a classmate -------------------------------


def settings(**kw) -> TournamentSettings:
    return TournamentSettings(**{"limits": Limits(wall_seconds=5), "jobs": 1, "tc": (10.0, 0.1), **kw})


def moves_and_results(result, between: set[str]) -> list[tuple]:
    return sorted((g.black, g.white, g.moves, g.result, g.forfeit) for g in result.games
                  if {g.black, g.white} == between)  # fmt: skip


def endgames(n: int, empties: int) -> list[tuple[str, str]]:
    """``n`` random endgames with ``empties`` empty squares (negamax.py takes a fraction of a second on each)."""
    rng, out = random.Random(40), []
    while len(out) < n:
        found = ref.random_endgame(rng, empties)
        if found and ref.moves(*found):
            out.append(found)
    return out


# Endgames of 10 empties on which negamax.py thinks about 0.4 s of CPU (alone, 1-2 s on a busy
# machine; starved of CPU, far beyond the time limit).
HEAVY = [
    "ooooooo.xoxo..o.x.oxxoox.xxooxooooxoxxo.ox.ooxoooxxxxxo.ooooxxo.",
    "xo.oo.o..oooooooooxooo.oooxxxxooxoooxoxoxooxxo.oxo.xxo.oxooooo..",
    "..ox..xoxx.ooooo.xxoooooxoxxoo.oooxxxxxxxxooxx.xxxxxxxxx.oxo.oox",
]


def engine_copy(folder: Path) -> Path:
    path = folder / f"nboard_{secrets.token_hex(6)}.py"
    path.write_text(ENGINE.read_text())
    return path


def hog_engine(path: Path) -> Engine:
    return Engine("hog", protocol=ProtocolEngine.from_command(f"{PYTHON} {path} nboard"))


@pytest.mark.slow
@needs_cgroups
def test_the_hog_as_an_opponent_changes_no_game_of_its_victim(tmp_path):
    """The hog's children spin from its start to its end, yet its opponent's games are those
    it plays against an honest engine making the same moves (the issue's victim lost both on
    time at 10+0.1)."""
    victim = nboard(engine_copy(tmp_path), "thinker", name="victim")
    honest = nboard(engine_copy(tmp_path), "good", name="hog")  # the hog's moves, without the hog
    alone = run_tournament([victim, honest], settings=settings(), openings=[NEAR_END], out=tmp_path / "alone")
    hog = hog_copy(tmp_path)
    attacked = run_tournament([victim, hog_engine(hog)], settings=settings(), openings=[NEAR_END],
                              out=tmp_path / "attacked")  # fmt: skip
    assert all(not g.events for g in alone.games), [g.events for g in alone.games]
    assert moves_and_results(attacked, {"victim", "hog"}) == moves_and_results(alone, {"victim", "hog"})
    assert processes_of(hog) == []


@pytest.mark.slow
@needs_cgroups
def test_the_hog_as_a_bystander_decides_no_game_between_others(tmp_path):
    """In a round-robin with the hog (--jobs 1), the games between the two others are those
    they play without it: the hog is frozen between its games."""
    a = nboard(engine_copy(tmp_path), "thinker", name="a")
    b = Engine("b", protocol=ProtocolEngine.from_command(f"{PYTHON} {ENGINE} thinker"))  # another copy of the same
    alone = run_tournament([a, b], settings=settings(), openings=[NEAR_END], out=tmp_path / "alone")
    hog = hog_copy(tmp_path)
    attacked = run_tournament([hog_engine(hog), a, b], settings=settings(), openings=[NEAR_END],
                              out=tmp_path / "attacked")  # fmt: skip
    assert all(not g.events for g in alone.games)
    assert moves_and_results(attacked, {"a", "b"}) == moves_and_results(alone, {"a", "b"})
    assert not [g.events for g in attacked.games if "hog" not in (g.black, g.white) and g.events]
    assert processes_of(hog) == []


@pytest.mark.slow  # end to end, tens of seconds: python -m pytest -m slow
@needs_cgroups
def test_the_hog_beside_a_classmate_changes_none_of_its_verdicts(tmp_path, monkeypatch):
    """A class run with --jobs 2: the hog's script (its children spinning through each of its
    tests) runs beside a real solving script, whose verdicts are those it gets alone."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.txt").write_text("".join(f"{b} x\n" for b in HEAVY))
    for name in ("alone", "class"):
        (tmp_path / name / "victim").mkdir(parents=True)
        shutil.copy(Path(__file__).parents[1] / "submissions" / "negamax.py", tmp_path / name / "victim" / "victim.py")
    (tmp_path / "class" / "hog").mkdir()
    hog = hog_copy(tmp_path / "class" / "hog", "hog")

    def verdicts(folder: str) -> list[tuple]:
        result = CliRunner().invoke(main, ["grade", folder, "--boards", "b.txt", "--out", f"run-{folder}",
                                           "--jobs", "2", "--time-limit", "6"])  # fmt: skip
        assert result.exit_code == 0, result.output
        records = [json.loads(line) for line in (tmp_path / f"run-{folder}" / "tests.jsonl").read_text().splitlines()]
        return sorted((r["index"], r["symbol"], r["credit"]) for r in records if r["student"] == "victim")

    alone = verdicts("alone")
    assert len(alone) == 3 and all(symbol == "+" for _, symbol, _ in alone), alone
    assert verdicts("class") == alone
    assert processes_of(hog) == []


# --- the CPU clock ------------------------------------------------------------------------


@pytest.mark.slow
def test_a_cpu_clock_charges_the_cpu_time_of_all_the_engines_processes(tmp_path):
    """On a CPU clock of 1 s an engine that sleeps 0.15 s a move plays its games to the end
    (on a wall clock it loses on time), and one whose child burns 0.4 s of CPU a move is
    charged the child's time and loses on time by its third move."""
    sleepy = nboard(engine_copy(tmp_path), "sleepy", name="sleepy")
    burner = nboard(engine_copy(tmp_path), "burner", name="burner")
    good = nboard(engine_copy(tmp_path), "good", name="good")
    cpu = settings(tc=(1.0, 0.0), clock="cpu", time_margin=0.05)
    result = run_tournament([sleepy, burner], opponents=[good], format="gauntlet", settings=cpu, openings=[NEAR_END],
                            out=tmp_path / "cpu")  # fmt: skip
    charged = []
    for g in result.games:
        if "burner" in (g.black, g.white):
            assert g.forfeit == "burner" and "lost on time" in g.events[0]["problem"], g.events
            charged += [cpu for _, cpu in g.move_times[0 if g.black == "burner" else 1 :: 2] if cpu is not None]
            assert len(g.move_times[0 if g.black == "burner" else 1 :: 2]) <= 3
        else:
            assert not g.events and g.reason == "normal", g.events
    assert charged and all(cpu >= 0.35 for cpu in charged), charged  # a timed-out move is not charged
    assert json.loads((tmp_path / "cpu" / "tournament.json").read_text())["settings"]["clock"] == "cpu"
    wall = run_tournament([sleepy, good], settings=settings(tc=(1.0, 0.0), time_margin=0.05), openings=[NEAR_END],
                          out=tmp_path / "wall")  # fmt: skip
    for g in wall.games:
        assert (
            g.forfeit == "sleepy"
            and "lost on time: it had " in g.events[0]["problem"]
            and " on its clock (and a margin of 50 ms)" in g.events[0]["problem"]
        )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tc", "gpu:10"], "--tc must be [cpu:]SECONDS[+INCREMENT]"),
        (["--tc", "cpu:abc"], "--tc must be [cpu:]SECONDS[+INCREMENT]"),
    ],
)
def test_bad_clocks_are_one_line_errors(tmp_path, args, message):
    result = CliRunner().invoke(main, ["tournament", "builtin:nboard:greedy", "builtin:greedy", *args])
    assert result.exit_code == 2 and message in result.output, result.output


def test_the_cpu_clock_is_said_and_kept(tmp_path):
    result = CliRunner().invoke(main, ["tournament", "builtin:nboard:greedy", "builtin:greedy", "--tc", "cpu:5+0.5",
                                       "--out", str(tmp_path / "t"), "--random-openings", "40"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "CPU clock 5+0.5 s" in result.output
    assert json.loads((tmp_path / "t" / "tournament.json").read_text())["settings"]["clock"] == "cpu"
    with pytest.raises(GraderError, match="unknown clock 'gpu': use one of wall, cpu"):
        TournamentSettings(clock="gpu")


# --- where the machine offers no fair CPU ---------------------------------------------------


@pytest.fixture
def no_cgroups(monkeypatch):
    """What a grader finds on a machine without the controllers (run as a normal user: none to use)."""
    monkeypatch.setattr(fairness, "_probed", fairness._Hierarchies())
    return fairness.support()


@pytest.mark.slow
def test_without_cgroups_doctor_and_a_class_say_what_is_not_enforced(no_cgroups, tmp_path, monkeypatch):
    assert not no_cgroups.complete
    monkeypatch.chdir(tmp_path)
    said = CliRunner().invoke(main, ["doctor", "--no-attacks"])
    assert "an equal, bounded CPU share per program (cpu): no" in said.output
    assert "engines frozen off move and between games (freezer): no" in said.output
    assert "fair CPU is not enforced here (no writable cpu share or freezer cgroup" in said.output
    (tmp_path / "class" / "ann").mkdir(parents=True)
    shutil.copy(Path(__file__).parents[1] / "submissions" / "greedy.py", tmp_path / "class" / "ann" / "ann.py")
    (tmp_path / "b.txt").write_text("".join(f"{b} {t}\n" for b, t in endgames(2, 4)))
    graded = CliRunner().invoke(main, ["grade", "class", "--boards", "b.txt", "--out", "run", "--jobs", "1"])
    assert graded.exit_code == 0, graded.output
    assert graded.output.count("fair CPU is not enforced here") == 1


def test_fair_cpu_required_refuses_a_class_and_a_tournament_without_it(no_cgroups, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("config.yaml").write_text("fair_cpu: required\n")
    (tmp_path / "class" / "ann").mkdir(parents=True)
    shutil.copy(Path(__file__).parents[1] / "submissions" / "greedy.py", tmp_path / "class" / "ann" / "ann.py")
    for args in (["grade", "class", "--out", "run"], ["tournament", "builtin:greedy", "builtin:random_mover"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, result.output
        assert result.output.startswith("Error: fair CPU is not enforced here"), result.output
        assert "'fair_cpu: required' in config.yaml refuses to run without it" in result.output
        assert len(result.output.strip().splitlines()) == 1
    assert not Path("run").exists()


def test_fair_cpu_in_config_is_checked(tmp_path):
    (tmp_path / "c.yaml").write_text("fair_cpu: always\n")
    with pytest.raises(ConfigError, match="'fair_cpu' must be one of auto, required"):
        load_config(tmp_path / "c.yaml")


# --- bounded protocol lines ---------------------------------------------------------------


def test_a_protocol_line_is_cut_at_line_bytes_and_the_next_is_read_whole(tmp_path):
    """A 20 MB line without an end until its last byte: the grader keeps LINE_BYTES of it
    (its buffer never holds more than that and one read), and the next line is intact."""
    script = tmp_path / "long.py"
    script.write_text("import sys\nsys.stdout.write('y' * (20 * 2**20) + '\\nafter\\n')\nsys.stdout.flush()\n"
                      "sys.stdin.read()\n")  # fmt: skip
    session = Session([sys.executable, str(script)], Limits(wall_seconds=20), Sandbox(), Stop(), str(tmp_path))
    try:
        assert session.start() is None
        biggest = 0
        until = time.monotonic() + 20
        line = None
        while line is None and time.monotonic() < until:
            line = session.read_line(time.monotonic() + 0.01)
            biggest = max(biggest, len(session._buf))
        assert line == "y" * LINE_BYTES
        assert session.read_line(until) == "after"
        assert biggest <= LINE_BYTES + runner.READ_BYTES
    finally:
        session.close()


# --- a grader killed with SIGKILL -------------------------------------------------------------

LEAVER = """
import subprocess, sys
from grader.engines import fairness
fair = fairness.take()
child = subprocess.Popen([sys.executable, "-c", "while True: pass", sys.argv[1]])
for folder in fair.folders:
    (folder / "cgroup.procs").write_text(str(child.pid))
fair.freeze()
print(*fair.folders, flush=True)
sys.stdin.read()
"""


@needs_cgroups
def test_the_cgroups_of_a_grader_killed_with_sigkill_are_removed_by_the_next(monkeypatch):
    """A grader SIGKILLed with a frozen program in its CPU cgroups: the next grader to look
    for them thaws and kills the program and removes the cgroups."""
    token = secrets.token_hex(8)
    grader = subprocess.Popen([sys.executable, "-c", LEAVER, "/" + token], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)  # fmt: skip
    folders = [Path(f) for f in grader.stdout.readline().split()]  # type: ignore[union-attr]
    left = [p for p in processes_of(Path(token)) if p != grader.pid]
    assert folders and len(left) == 1
    assert (folders[0].parent.parent / "freezer" / folders[0].name / "freezer.state").read_text().strip() == "FROZEN"
    grader.kill()
    grader.wait()
    monkeypatch.setattr(fairness, "_probed", None)  # as a new grader: probe, sweeping the dead's
    fairness.support()
    assert wait_for(lambda: not any(f.exists() for f in folders), 5), folders
    assert wait_for(lambda: not processes_of(Path(token)), 5)
