"""What a new user trips on: each mistake gets one clear line before any work is lost."""

import csv
import functools
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.tournaments.ratings import Standing
from grader.tournaments.tables import standings_table

import conftest
from conftest import HANDOUT_BOARD, ROOT

NEGAMAX = ROOT / "submissions" / "negamax.py"


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")

    def invoke(*args):
        return CliRunner().invoke(main, [str(a) for a in args])

    return invoke


one_line_error = functools.partial(conftest.one_line_error, exact=True)  # exit 1, exactly 'Error: MESSAGE'


def test_a_wrong_python_stops_before_any_test(run, tmp_path):
    (tmp_path / "config.yaml").write_text("python: /usr/bin/python9\n")
    one_line_error(
        run("grade", NEGAMAX, "--boards", "b.txt"),
        "the Python for .py scripts, '/usr/bin/python9', is not an executable program: "
        "fix 'python:' in config.yaml (or remove it to use the grader's own)",
    )
    (tmp_path / "class").mkdir()
    shutil.copy(NEGAMAX, tmp_path / "class" / "alice.py")
    result = run("grade", "class", "--boards", "b.txt", "--out", "r")
    assert result.exit_code == 1 and "is not an executable program" in result.output
    assert not (tmp_path / "r" / "grades.csv").exists()  # no class of zeros


def test_a_command_template_naming_a_missing_program(run, tmp_path):
    (tmp_path / "config.yaml").write_text("commands:\n  .java: 'javaXYZ -cp {dir} {stem} {board} {token}'\n")
    one_line_error(
        run("grade", NEGAMAX, "--boards", "b.txt"),
        "the command for '.java' files starts with 'javaXYZ', which is not an installed program: "
        "install it or fix 'commands: .java' in config.yaml",
    )


def test_output_paths_are_checked_before_the_run(run, tmp_path):
    one_line_error(run("grade", NEGAMAX, "--boards", "b.txt", "--json", "nodir/x.json"),
                   "cannot write 'nodir/x.json': the folder 'nodir' does not exist")  # fmt: skip
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    one_line_error(run("grade", NEGAMAX, "--boards", "b.txt", "--out", "busy"),
                   "'busy' is not empty: give --out a new folder (or an empty one) for the run")  # fmt: skip
    one_line_error(run("grade", NEGAMAX, "--boards", "b.txt", "--out", "."),
                   "'.' is not empty: give --out a new folder (or an empty one) for the run")  # fmt: skip
    as_file = run("grade", NEGAMAX, "--boards", "b.txt", "--json", "busy")
    assert as_file.exit_code == 2 and "Invalid value for '--json': File 'busy' is a directory." in as_file.output
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "content, message",
    [
        (("\ufeff" + HANDOUT_BOARD + " x\n").encode("utf-8"), None),  # a byte-order mark is fine
        ((HANDOUT_BOARD + " x\n").encode("utf-16"), "board file 'f.txt' is UTF-16 text: save it as UTF-8 (plain text)"),
        (b"\x89PNG\r\n\x1a\n\0\0\0", "board file 'f.txt' is not a text file (a NUL byte on line 3): give a plain text file"),
        ((HANDOUT_BOARD + " x\n# caf\xe9\n").encode("latin-1"),
         "board file 'f.txt': line 2 is not UTF-8 text (byte 0xe9): save the file as UTF-8"),
        (b"", "board file 'f.txt' holds no boards: one 'BOARD TOKEN' per line"),
    ],
)  # fmt: skip
def test_board_file_encodings(run, tmp_path, content, message):
    (tmp_path / "f.txt").write_bytes(content)
    result = run("solve", "--boards", "f.txt", "--json")
    if message is None:
        assert result.exit_code == 0 and json.loads(result.output)[0]["value"] == 18
    else:
        one_line_error(result, message)


def test_a_symlinked_student_file_is_named_as_such(run, tmp_path):
    (tmp_path / "class").mkdir()
    shutil.copy(NEGAMAX, tmp_path / "class" / "alice.py")
    (tmp_path / "class" / "evil.py").symlink_to("/etc/passwd")
    result = run("grade", "class", "--boards", "b.txt", "--out", "r")
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO((tmp_path / "r" / "grades.csv").read_text()))}
    assert rows["alice"]["total"] == "1" and rows["evil"]["total"] == "0"
    assert (
        rows["evil"]["note"]
        == "'class/evil.py' is a symbolic link to '/etc/passwd', not a script file: copy the file in"
    )


def test_example_scripts_are_standalone(run, tmp_path):
    """Each example runs on its own in an empty folder (a student copies one file; deep_negamax.py brings negamax.py)."""
    for script in sorted((ROOT / "submissions").glob("*.py")):
        if script.stem == "slow":
            continue  # it never finishes, by design
        shutil.copy(script, tmp_path / script.name)
        if script.stem == "deep_negamax":  # it imports negamax.py beside it, as a student's helper module
            shutil.copy(script.with_name("negamax.py"), tmp_path / "negamax.py")
        done = subprocess.run([sys.executable, script.name, HANDOUT_BOARD, "x"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60)  # fmt: skip
        assert "ModuleNotFoundError" not in done.stderr and "ImportError" not in done.stderr, script.name
        (tmp_path / script.name).unlink()


def test_help_texts(run):
    top = run("--help").output
    assert "Examples:" in top and "grader grade submissions/negamax.py" in top
    assert "Grade scripts, or a class, on the lab's 100 tests (+ M Q T m s - t)." in " ".join(top.split())  # not cut
    grade = run("grade", "--help").output
    assert "M  move and score correct, line wrong (3/4)" in grade and "T  no score line" in grade
    assert "Seed for the random openings" in run("tournament", "--help").output
    assert run("--version").output.startswith("grader, version ")


def test_elo_is_never_minus_zero_and_a_finite_elo_has_an_interval():
    rows = [Standing("a", 4, 2, 1, 2, 1, 0.0, -0.3, 35.2, 0, 0), Standing("b", 2, 1.5, 1, 1, 0, 1.0, 190.8, float("inf"), 0, 0),
            Standing("c", 2, 2, 2, 0, 0, 5.0, None, None, 0, 0)]  # fmt: skip
    table = standings_table(rows).splitlines()
    assert table[2].split()[7:9] == ["+0", "35"]
    assert table[3].split()[7:9] == ["+191", "n/a"]  # the interval reaches a score of 1
    assert table[4].split()[7:9] == ["n/a", "n/a"]


def _tournament_near(empties: int, seed: int | None = None) -> str:
    """An opening leaving ``empties`` squares, from random play (reference rules)."""
    import random

    from grader.games.othello import OTHELLO

    import reference as ref

    rng = random.Random(empties if seed is None else f"{empties}:{seed}")
    while True:
        board, tok, moves = ref.START, "x", []
        while board.count(".") > empties:
            ms = ref.moves(board, tok)
            if not ms:
                if not ref.moves(board, ref.other(tok)):
                    break
                tok = ref.other(tok)
                continue
            moves.append(rng.choice(ms))
            board, tok = ref.play(board, tok, moves[-1]), ref.other(tok)
        if board.count(".") == empties and ref.moves(board, tok):
            return OTHELLO.transcript(moves)


@pytest.mark.slow  # a tournament stopped mid-solve, per signal
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_a_tournament_while_its_solver_is_busy(tmp_path, sig):
    """--adjudicate 20 is capped at what the pure-Python solver does in about a second (it
    says so); the games are then deep in negamax's moves and the solver's searches, and
    either signal ends the run within about a second, with the resume hint."""
    (tmp_path / "o.txt").write_text("".join(_tournament_near(16, seed) + "\n" for seed in range(12)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "tournament", str(NEGAMAX), "builtin:greedy", "--openings", "o.txt",
         "--adjudicate", "20", "--backend", "python", "--rounds", "12", "--jobs", "1", "--out", "t"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr.readline().startswith("Warning: adjudicating at ")
    assert proc.stdout.readline().startswith("Tournament: 2 engines, 24 games")
    time.sleep(2.0)  # deep in the solver by now (each game's adjudication takes it about a second)
    start = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    # the signal, not the rest of the run (20 games and more, a second's solve each), ended it; a
    # machine at load 8 takes seconds more to stop the games and exit than a quiet one's second
    assert time.monotonic() - start < 10.0, out + err
    assert proc.returncode == 128 + sig, err  # 130 for SIGINT, 143 for SIGTERM
    reason = "Interrupted (Ctrl-C)" if sig == signal.SIGINT else "Interrupted (SIGTERM)"
    assert f"{reason}: continue with  grader tournament --resume t" in out
    assert "Traceback" not in out + err


def test_an_interrupted_class_is_marked_incomplete(tmp_path):
    (tmp_path / "class").mkdir()
    shutil.copy(NEGAMAX, tmp_path / "class" / "fast.py")
    (tmp_path / "class" / "slow.py").write_text("import time\nprint('My move is 51', flush=True)\ntime.sleep(60)\n")
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n" * 3)
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "grade", "class", "--boards", "b.txt", "--jobs", "2", "--out", "r",
         "--time-limit", "60"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    while not proc.stdout.readline().startswith("fast "):  # fast.py is graded; slow.py sleeps
        pass
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO((tmp_path / "r" / "grades.csv").read_text()))}
    assert rows["fast"]["complete"] == "yes" and rows["fast"]["total"] == "3"
    assert rows["slow"]["complete"] == "no" and rows["slow"]["note"].startswith("incomplete: ")
    data = {s["name"]: s for s in json.loads((tmp_path / "r" / "results.json").read_text())["scripts"]}
    assert data["fast"]["complete"] and not data["slow"]["complete"]
    assert "Interrupted (Ctrl-C): continue with  grader grade --resume r" in out


GOMOKU_SOLVER = ROOT / "submissions" / "gomoku" / "solver.py"


@pytest.mark.parametrize(
    "args, message",
    [
        (["solve", "--game", "gomoku:size=\u00b2", "--boards", "b.txt"],
         "bad game 'gomoku:size=\u00b2': size must be a whole number, not '\u00b2'"),
        (["grade", NEGAMAX, "--boards", "b.txt", "--cluster", "local:\u00b2"],
         "bad cluster address 'local:\u00b2': local:N needs a number of workers from 1 to 512, like local:2"),
        (["regress", GOMOKU_SOLVER, "empty.gtp"],
         "empty.gtp: no test in it: a test is a numbered command, like '10 solve', then '#? [REGEX]'"),
        (["regress", GOMOKU_SOLVER, "super.gtp"], "super.gtp:3: '#?' must follow a numbered command, like '10 solve'"),
    ],
)  # fmt: skip
def test_digits_other_than_ascii_and_files_without_tests(run, tmp_path, args, message):
    """'\u00b2' passes str.isdigit() but not int(): never a traceback; a regression file with no
    test would give every student 0, so it is refused."""
    (tmp_path / "empty.gtp").write_text("boardsize 7\nclear_board\n")
    (tmp_path / "super.gtp").write_text("clear_board\n\u00b2 solve\n#? [b.*]\n")
    one_line_error(run(*args), message)


def test_setup_commands_with_digits_other_than_ascii_are_refused_on_their_line(run, tmp_path):
    for line in ("timelimit \u00b2", "boardsize \u00b2"):
        (tmp_path / "odd.gtp").write_text(f"{line}\nboardsize 7\nclear_board\n10 name\n#? [.*]\n")
        result = run("regress", GOMOKU_SOLVER, "odd.gtp")
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert result.output.startswith(f"Error: odd.gtp:1: '{line}': {line.split()[0]} takes a whole number")


def test_a_run_folder_whose_records_are_a_folder_is_one_line(run, tmp_path):
    assert run("grade", NEGAMAX, "--boards", "b.txt", "--out", "run").exit_code == 0
    (tmp_path / "run" / "tests.jsonl").unlink()
    (tmp_path / "run" / "tests.jsonl").mkdir()
    result = run("report", "run")
    assert result.exit_code == 1 and result.exception is not None and "Traceback" not in result.output, result.output
    assert result.output == "Error: cannot read run/tests.jsonl: Is a directory: is run a run folder?\n"


def test_prove_refuses_othello_from_the_start_in_one_line(run):
    """Proving an Othello script from the opening would solve the opening: refused before any
    script runs, with what works (an endgame given by --from) and how deep fits the budget."""
    import re

    for args in ((), ("--backend", "python")):
        started = time.monotonic()
        result = run("prove", NEGAMAX, *args)
        assert result.exit_code == 1, result.output
        assert time.monotonic() - started < 30  # an estimate, not a proof
        assert re.fullmatch(
            r"Error: the start has 60 empties: solving it would take (about \d+ years|more than 1000 years) with the "
            r"(native|python) solver at [\d.]+ M nodes/s, over --max-seconds 60; prove from an endgame instead "
            r"\(--from BOARD TOKEN\): boards of at most \d+ empties fit.*",
            result.output.strip(),
        ), result.output
    deep = "o.oooo..xoxxox..xoooxxx.xoooxx..xooxox..xoxxx...x.xx............"  # FFO #39, 26 empties
    result = run("prove", NEGAMAX, "--from", deep, "o", "--max-seconds", "0.5")
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: this position has 26 empties: solving it would take about ")
    assert ", over --max-seconds 0.5; prove from a later position: boards of at most" in result.output


# --- the tracebacks a new user found (issue 51) ----------------------------------------------


@pytest.mark.parametrize("content", [b"notes, not a database\n", bytes(range(256)) * 16], ids=["text", "binary"])
def test_a_database_file_that_is_no_database_is_one_line_and_left_as_it_was(run, tmp_path, content):
    pytest.importorskip("sqlalchemy")
    (tmp_path / "x.db").write_bytes(content)
    url = f"sqlite:///{tmp_path / 'x.db'}"
    said = f"cannot open the database {url}: file is not a database (give the portal's database file, or a new file's name to make one)"  # fmt: skip
    one_line_error(run("serve", "--database", url, "--port", "0"), said)  # makes ./grader-demo-course first
    one_line_error(run("worker", "grader-demo-course", "--database", url), said)
    one_line_error(run("portal", "sync", "grader-demo-course", "--database", url), said)
    assert (tmp_path / "x.db").read_bytes() == content
    assert [p.name for p in tmp_path.glob("x.db*")] == ["x.db"]  # no journal or WAL beside it


@pytest.mark.parametrize("python, said", [
    ("/nonexistent/python3", "is not an executable program"),
    ("/bin/false", "is not a Python interpreter (asked to run a line of Python, it gave no answer)"),
])  # fmt: skip
def test_a_configured_python_that_is_missing_or_no_python_is_one_line_everywhere(run, tmp_path, python, said):
    """doctor had a traceback for a missing one; /bin/false passed for a Python that no
    isolation could run ('install bubblewrap') and doctor showed coreutils' banner as its version."""
    (tmp_path / "config.yaml").write_text(f"python: {python}\n")
    (tmp_path / "f.gtp").write_text("boardsize 7\n10 solve\n#? [unknown]\n")
    fix = "fix 'python:' in config.yaml (or remove it to use the grader's own)"
    for args in (["doctor", "--no-attacks"], ["grade", NEGAMAX, "--boards", "b.txt"],
                 ["tournament", NEGAMAX, ROOT / "submissions" / "greedy.py", "--rounds", "1"],
                 ["regress", ROOT / "submissions" / "gomoku" / "solver.py", "f.gtp"]):  # fmt: skip
        one_line_error(run(*args), f"the Python for .py scripts, '{python}', {said}: {fix}")


@pytest.mark.parametrize("path, said", [
    ("b.txt/x.json", "'b.txt' is a file, not a folder"),
    ("/proc/x.json", "No such file or directory"),  # what root meets there: no permission check to fail
])  # fmt: skip
def test_a_results_file_that_cannot_be_written_is_refused_before_any_test(run, path, said):
    one_line_error(run("grade", NEGAMAX, "--boards", "b.txt", "--json", path), f"cannot write '{path}': {said}")


def test_a_results_file_in_a_folder_the_user_may_not_enter_is_one_line(tmp_path):
    """A PermissionError traceback for a user who may not look inside the folder. Root may look
    anywhere: it runs here without the two capabilities that let it (setpriv)."""
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("root needs setpriv to drop its right to look into any folder")
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0)
    as_user = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    try:
        done = subprocess.run([*as_user, sys.executable, "-m", "grader", "grade", str(NEGAMAX), "--boards", "b.txt",
                               "--json", "locked/x.json"], cwd=tmp_path, capture_output=True, text=True)  # fmt: skip
    finally:
        locked.chmod(0o700)
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        "Error: cannot write 'locked/x.json': Permission denied\n",
    )


@pytest.mark.parametrize("host", ["999.1.1.1", "nosuchhost.invalid"])
def test_serve_on_an_address_that_is_not_this_machines_names_the_host(run, host):
    """The advice was 'give another --port'."""
    pytest.importorskip("starlette")
    result = run("serve", "--host", host, "--port", "0", "--workers", "0")
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"Error: cannot listen on {host}:0: "), result.output
    assert result.output.endswith(": give another --host (an address of this machine: 127.0.0.1, 0.0.0.0)\n")


def test_a_plan_of_a_newer_format_says_so(run, tmp_path):
    assert run("plan", "new", "--out", "p.plan").exit_code == 0
    (tmp_path / "p.plan").write_text((tmp_path / "p.plan").read_text().replace("grader-plan 1", "grader-plan 99"))
    from grader.version import __version__

    one_line_error(run("grade", NEGAMAX, "--plan", "p.plan"),
                   f"p.plan: a plan file of format 'grader-plan 99', newer than the 'grader-plan 1' this grader "
                   f"({__version__}) reads: a newer grader wrote it and reads it (pip install -U grader), or make the "
                   "plan again with this one ('grader plan new')")  # fmt: skip


@pytest.mark.parametrize("given", ["option", "config"])
def test_jobs_beyond_what_the_machine_can_run_are_capped_saying_so(run, tmp_path, given):
    """--jobs 99999999 had been accepted, and shown as the jobs of the run."""
    most = 4 * (os.cpu_count() or 1)
    if given == "config":
        (tmp_path / "config.yaml").write_text("jobs: 99999999\n")
    result = run("grade", NEGAMAX, "--boards", "b.txt", *(["--jobs", "99999999"] if given == "option" else []))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    named = "--jobs" if given == "option" else "config.yaml's jobs:"
    assert lines[0] == (f"Warning: {named} 99,999,999 is more than this machine can run at once "
                        f"({os.cpu_count()} cores, 4 programs each): {most} jobs run at once")  # fmt: skip
    assert f", {most} jobs, " in lines[1]
