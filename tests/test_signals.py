"""Ctrl-C and SIGTERM in the middle of a long solve: ``grader prove``, ``grader solve`` and the
judge of ``grader grade`` stop at once, keep what finished, and exit 130 (SIGINT) or 143
(SIGTERM) with one line saying why. (A class, a tournament and scripts under test are
interrupted likewise in test_interrupt.py, test_bad_input.py and test_hostile.py.)

Each slow run below is given a position of 26 empties (FFO #39) that takes the exact solver
about 16 s alone, far longer on a loaded machine; the signal comes while it solves. The bound
on the time to stop is generous (a loaded machine meets it); bench/signals.py prints the real
figures.

No signal is lost at a command's edges either: the grader sends itself the signal at each
point of its start, its run's start, its solver's start and end, and its run's end in turn
($GRADER_TEST_SIGNAL_AT), with SIGINT inherited ignored (a background job of a script) or not.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import FFO_FILE, HANDOUT_BOARD, ROOT

SLOW = pytest.mark.slow  # each waits on a real solve to be stopped mid-way: seconds apiece

GREEDY = ROOT / "submissions" / "greedy.py"  # answers any position at once: the solver is what takes time
DEEP = next(line for line in FFO_FILE.read_text().splitlines() if line.startswith("39|")).split("|")
DEEP_BOARD = DEEP[1].lower().replace("-", ".")
DEEP_TOKEN = DEEP[2].lower()
SIGNALS = [signal.SIGINT, signal.SIGTERM]
REASON = {signal.SIGINT: "Interrupted (Ctrl-C)", signal.SIGTERM: "Interrupted (SIGTERM)"}
STOPPED = {signal.SIGINT: "interrupted (Ctrl-C)", signal.SIGTERM: "interrupted (SIGTERM)"}
STOPS_WITHIN = 5.0  # seconds: 1 s on a quiet machine (bench/signals.py), with room for a loaded one


def start(where, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "grader", *args], cwd=where, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def interrupt(proc: subprocess.Popen, sig: int, after: float) -> tuple[str, str, float]:
    """Send ``sig`` ``after`` seconds from now; the output, and the seconds the process took to end."""
    time.sleep(after)
    assert proc.poll() is None, proc.communicate()
    sent = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return out, err, time.monotonic() - sent


@SLOW
@pytest.mark.parametrize("sig", SIGNALS)
def test_prove_stops_in_the_middle_of_a_solve(tmp_path, sig):
    proc = start(tmp_path, "prove", str(GREEDY), "--from", DEEP_BOARD, DEEP_TOKEN, "--as", DEEP_TOKEN,
                 "--max-seconds", "86400", "--json", "proof.json", "--jobs", "1")  # fmt: skip
    first = proc.stdout.readline()
    assert first.startswith("Proving "), first + proc.communicate()[1]
    out, err, took = interrupt(proc, sig, 2.5)
    assert proc.returncode == 128 + sig, out + err
    assert took < STOPS_WITHIN, out + err
    assert out.splitlines()[-1] == REASON[sig] + "."
    assert "Traceback" not in out + err
    proof = json.loads((tmp_path / "proof.json").read_text())
    assert proof["interrupted"] == STOPPED[sig] and proof["sides"][0]["complete"] is False


@SLOW
@pytest.mark.parametrize("sig", SIGNALS)
def test_solve_stops_and_shows_what_it_solved(tmp_path, sig):
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n{DEEP_BOARD} {DEEP_TOKEN}\n")
    proc = start(tmp_path, "solve", "--boards", "b.txt", "--json")
    err_first = proc.stderr.readline()  # 'Solving line 2 (26 empties) will take about ...'
    assert err_first.startswith("Solving ") and "26 empties" in err_first, err_first
    out, err, took = interrupt(proc, sig, 1.0)
    assert proc.returncode == 128 + sig, out + err
    assert took < STOPS_WITHIN, out + err
    assert err.splitlines()[-1] == f"{REASON[sig]}: 1 of 2 positions solved."
    solved = json.loads(out)  # the positions solved, as JSON
    assert [s["board"] for s in solved] == [HANDOUT_BOARD]
    assert "Traceback" not in out + err


@SLOW
@pytest.mark.parametrize("sig", SIGNALS)
def test_the_judge_stops_in_the_middle_of_a_solve_and_keeps_the_tests_judged(tmp_path, sig):
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n{DEEP_BOARD} {DEEP_TOKEN}\n")
    (tmp_path / "config.yaml").write_text("max_solve_seconds: 86400  # however loaded the machine\n")
    proc = start(tmp_path, "grade", str(GREEDY), "--boards", "b.txt", "--jobs", "1", "--json", "out.json")
    first = proc.stdout.readline()
    assert first.startswith("Grading "), first + proc.communicate()[1]
    out, err, took = interrupt(proc, sig, 3.0)
    assert proc.returncode == 128 + sig, out + err
    assert took < STOPS_WITHIN, out + err
    assert out.splitlines()[-1] == REASON[sig] + "."
    assert f"{STOPPED[sig]}: 1 of 2 tests finished, so the total is not a grade" in out
    (script,) = json.loads((tmp_path / "out.json").read_text())["scripts"]
    assert [t["index"] for t in script["tests"]] == [1] and script["complete"] is False
    assert "Traceback" not in out + err


@SLOW
def test_the_folders_of_a_grader_killed_with_sigkill_go_at_the_next_command(tmp_path):
    """SIGKILL leaves a grader no time to remove its work folders; the next grader command of
    any kind (here 'solve', which runs no script) removes them as it starts, doctor's too."""
    import os

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    (tmp_path / "sleepy.py").write_text("import time\ntime.sleep(30)\n")
    killed = subprocess.Popen([sys.executable, "-m", "grader", "grade", "sleepy.py", "--boards", "b.txt"],
                              cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 30
    while len(list(tmp.glob("grader-*"))) < 2:  # the script's copy and its run's folder
        assert time.monotonic() < deadline and killed.poll() is None, "the grader made no work folder"
        time.sleep(0.05)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    namespace = os.stat("/proc/self/ns/pid").st_ino
    (tmp / f"grader-doctor-{namespace}-{os.getpid()}-1-abcd_123").mkdir()  # a dead grader's doctor folder
    left = {p.name for p in tmp.glob("grader-*")}
    assert len(left) >= 3
    solved = subprocess.run([sys.executable, "-m", "grader", "solve", HANDOUT_BOARD, "x"], cwd=tmp_path, env=env,
                            capture_output=True, text=True)  # fmt: skip
    assert solved.returncode == 0, solved.stderr
    assert not left & {p.name for p in tmp.glob("grader-*")}


@SLOW
def test_ctrl_c_while_the_grader_loads_is_one_line(tmp_path):
    """Ctrl-C while Python is still importing the grader's modules (seen by -X importtime,
    which writes a line as each module is loaded): one line and status 130, no traceback."""
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "grader", "grade", str(GREEDY), "--boards",
                             "b.txt"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    seen = []
    for line in proc.stderr:  # the grader's own modules are loading
        seen.append(line)
        if line.rstrip().endswith(" grader.errors"):
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=60)
    said = [ln for ln in [*seen, *err.splitlines(keepends=True)] if not ln.startswith("import time:")]
    assert "Traceback" not in "".join(said) + out, "".join(said)
    assert proc.returncode == 130, "".join(said) + out
    assert [ln.rstrip() for ln in said] == ["Interrupted (Ctrl-C) while the grader was starting: nothing was run."]
    assert out == ""


SLOW_GTP = """import sys, time
for line in sys.stdin:
    w = line.split()
    n = w.pop(0) if w and w[0].isdigit() else ''
    if w[:1] == ['solve'] and n == '20':
        time.sleep(60)
    print(f'={n} unknown' if w[:1] == ['solve'] else f'={n}', end='\\n\\n', flush=True)
"""


@SLOW
@pytest.mark.parametrize("sig", SIGNALS)
def test_regress_stops_while_its_program_thinks_and_keeps_the_tests_answered(tmp_path, sig):
    (tmp_path / "p.py").write_text(SLOW_GTP)
    (tmp_path / "f.gtp").write_text("timelimit 60\nboardsize 7\n10 solve\n#? [unknown]\n20 solve\n#? [unknown]\n")
    (tmp_path / "config.yaml").write_text("regress:\n  solve_seconds: 0.5\n")
    proc = start(tmp_path, "regress", "p.py", "f.gtp", "--json", "out.json")
    for line in proc.stdout:  # test 10 answered: the program now sits on test 20
        if line[2:].lstrip("+u ").startswith("10 solve"):  # '+' where the file expects unknown
            break
    out, err, took = interrupt(proc, sig, 0.5)
    assert proc.returncode == 128 + sig, out + err
    assert took < STOPS_WITHIN, out + err
    assert "Traceback" not in out + err
    assert out.splitlines()[-1] == REASON[sig] + "."
    (result,) = json.loads((tmp_path / "out.json").read_text())
    assert [t["number"] for t in result["tests"]] == [10]  # test 20 was not finished: not recorded


# --- no signal lost at a command's edges ------------------------------------------------------

POINTS = ["start", "command", "run", "solver", "solved", "run-returned", "run-end"]  # in the order reached


def grader_signalled_at(where, point: str, sig: int, args: list[str], ignored: bool) -> subprocess.CompletedProcess:
    """``grader ARGS`` sending itself ``sig`` at ``point``; SIGINT ignored from its start when
    ``ignored``, as a script's background job inherits it (the shell's ``trap '' INT``)."""
    env = {**os.environ, "GRADER_TEST_SIGNAL_AT": f"{point}:{signal.Signals(sig).name}"}
    command = " ".join(["exec", sys.executable, "-m", "grader", *args])
    return subprocess.run(["sh", "-c", f"trap '' INT; {command}" if ignored else command], cwd=where, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def assert_interrupted(done: subprocess.CompletedProcess, sig: int) -> None:
    said = done.stdout + done.stderr
    assert done.returncode == 128 + sig, said
    assert "Traceback" not in said and "Aborted!" not in said, said
    assert any(line.startswith(REASON[sig]) for line in said.splitlines()), said


@pytest.mark.parametrize("point", POINTS)
def test_a_solve_signalled_at_any_point_of_its_start_run_or_end_is_interrupted(tmp_path, point):
    """SIGINT inherited ignored: it was lost while the grader loaded (the solve went on, a
    second Ctrl-C stopped it) and after a run had ended; click's 'Aborted!' answered one at a
    command's start or end."""
    done = grader_signalled_at(tmp_path, point, signal.SIGINT, ["solve", HANDOUT_BOARD, "x"], ignored=True)
    assert_interrupted(done, signal.SIGINT)


@SLOW
@pytest.mark.parametrize("sig", SIGNALS)
@pytest.mark.parametrize("point", POINTS)
def test_a_solve_signalled_at_any_point_is_interrupted_when_the_signal_was_not_ignored(tmp_path, point, sig):
    done = grader_signalled_at(tmp_path, point, sig, ["solve", HANDOUT_BOARD, "x"], ignored=False)
    assert_interrupted(done, sig)
    if point == "start":
        assert done.stderr == f"{REASON[sig]} while the grader was starting: nothing was run.\n"


TTT_MINIMAX = ROOT / "submissions" / "tictactoe" / "minimax.py"
QUICK_GTP = "boardsize 7\n10 solve\n#? [unknown]\n"
COMMANDS = {  # every long command, on work of a second or so
    "prove": ["prove", str(TTT_MINIMAX), "--game", "tictactoe", "--from", "xoxo.....", "x", "--as", "x", "--jobs", "1"],
    "grade": ["grade", str(GREEDY), "--boards", "b.txt", "--jobs", "1"],
    "class": ["grade", "class", "--boards", "b.txt", "--jobs", "1", "--out", "run"],
    "tournament": ["tournament", str(GREEDY), str(ROOT / "submissions" / "random_mover.py"), "--rounds", "1",
                   "--openings", "b.txt", "--jobs", "1", "--out", "t"],
    "regress": ["regress", str(ROOT / "submissions" / "gomoku" / "solver.py"), "f.gtp"],
}  # fmt: skip


@SLOW
@pytest.mark.parametrize("point", ["command", "run", "run-returned", "run-end"])
@pytest.mark.parametrize("command", COMMANDS)
def test_every_long_command_signalled_at_its_edges_is_interrupted(tmp_path, command, point):
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "ann.py").write_bytes(GREEDY.read_bytes())
    (tmp_path / "f.gtp").write_text(QUICK_GTP)
    done = grader_signalled_at(tmp_path, point, signal.SIGINT, COMMANDS[command], ignored=True)
    assert_interrupted(done, signal.SIGINT)


class SwallowsCtrlC:
    """An object whose finalizer meets a Ctrl-C: Python prints the KeyboardInterrupt raised in
    it and drops it, as in a garbage collector's callback (hypothesis installs one: so a test
    run lost the Ctrl-C of test_native's long solve, which passed alone)."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler raises here, inside the finalizer
            pass


def test_a_ctrl_c_python_swallowed_before_a_run_stops_the_run():
    from grader.stop import Stop, answering_signals, on_signals

    with answering_signals():
        SwallowsCtrlC()  # finalized at once: its KeyboardInterrupt is dropped
        with pytest.raises(KeyboardInterrupt):  # the run returned: it hears of the signal all the same
            with on_signals(Stop()) as stop:
                assert stop.is_set() and stop.reason == "interrupted (Ctrl-C)"


def test_a_ctrl_c_python_swallowed_ends_the_command_as_interrupted(tmp_path, monkeypatch):
    """Outside a run (doctor is none): the command ends with the line and status of Ctrl-C,
    instead of going on as if the signal had never come."""
    from click.testing import CliRunner

    import grader.cli.doctor as doctor
    from grader.cli import main

    load = doctor.load_config

    def load_and_swallow(path):  # a finalizer meets the Ctrl-C as the command starts
        SwallowsCtrlC()
        return load(path)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(doctor, "load_config", load_and_swallow)
    got = CliRunner().invoke(main, ["doctor", "--no-attacks"])
    assert got.exit_code == 130, got.output
    assert got.output.splitlines()[-1] == "Interrupted (Ctrl-C)."
    inside = CliRunner().invoke(main, ["solve", HANDOUT_BOARD, "x"])  # nothing left over for the next command
    assert inside.exit_code == 0, inside.output
