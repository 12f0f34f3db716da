"""grader rejudge: verdicts computed again from the recorded claims, no script run.

tests/data/run-0.1 was graded by grader 0.1, before the crash rule: bob printed a perfect
answer and raised an exception, carol printed one and died of SIGSEGV; both got full credit.
"""

import csv
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_grading import ref_boards

from grader.cli import main
from grader.grading.plans import load_plan
from grader.grading.rejudge import rejudge
from grader.grading.results import Settings
from grader.grading.run import grade
from grader.grading.runfolder import RunFolder
from grader.limits import Limits

import reference as ref
from conftest import HANDOUT_BOARD, ROOT

OLD_RUN = Path(__file__).parent / "data" / "run-0.1"
CANNED = Path(__file__).parent / "scripts" / "canned.py"


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def old_run(tmp_path):
    shutil.copytree(OLD_RUN, tmp_path / "run")
    return tmp_path / "run"


def grades(folder: Path) -> dict[str, str]:
    with open(folder / "grades.csv", newline="") as f:
        return {row["name"]: row["total"] for row in csv.DictReader(f)}


def test_old_run_gets_the_crash_rule(old_run):
    done = run_cli("rejudge", old_run)
    assert done.exit_code == 0, done.output
    assert "its records are sealed now" in done.output
    assert "Re-judged 6 tests of 3 students: 4 verdicts changed, 2 grades changed." in done.output
    assert "bob: 2 -> 0 of 2" in done.output and "exited with code 1" in done.output
    assert "carol: 2 -> 0 of 2" in done.output and "killed by SIGSEGV" in done.output
    assert "alice" not in done.output.split("grades changed.")[1]
    assert grades(old_run) == {"alice": "2", "bob": "0", "carol": "0"}


@pytest.mark.slow
def test_rejudged_grades_match_grading_the_same_scripts_today(old_run, tmp_path):
    """A second route: today's grader running scripts that do what bob's and carol's did."""
    done = rejudge(old_run)
    by_name = {r.name: r.symbols for r in done.results}
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n" * 2)
    plan = load_plan(tmp_path / "b.txt")
    settings = Settings(limits=Limits(wall_seconds=5), isolation="none")
    for name, script in (("bob", "exception_after_answer.py"), ("carol", "segfault_after_answer.py")):
        assert grade(ROOT / "tests" / "crash" / script, plan, settings).symbols == by_name[name] == "--"
    assert by_name["alice"] == "++"


def test_an_adopted_run_is_sealed_and_reads_like_any_other(old_run):
    assert "rejudge" in run_cli("report", old_run).output  # refused before: no seals
    rejudge(old_run)
    meta = json.loads((old_run / "run.json").read_text())
    assert meta["run_id"] and meta["seal"] and meta["plan"]["game"] == "othello"
    assert all("seal" in json.loads(line) for line in (old_run / "tests.jsonl").read_text().splitlines())
    assert run_cli("report", old_run).exit_code == 0
    again = rejudge(old_run)
    assert not again.adopted and again.changes == [] and again.tests_changed == 0 and again.tests == 6
    olds = sorted(old_run.glob("tests.jsonl.*.old"))  # each rejudge keeps the lines it replaced
    assert len(olds) == 2 and olds[0].read_text() == (OLD_RUN / "tests.jsonl").read_text()
    # a record changed after the rejudge fails its seal and is left out
    lines = (old_run / "tests.jsonl").read_text().splitlines()
    lines[2] = lines[2].replace('"credit":0.0', '"credit":1.0')
    (old_run / "tests.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning, match="fail their seal"):
        results = RunFolder.open(old_run).results()
    assert {r.name: len(r.tests) for r in results} == {"alice": 2, "bob": 1, "carol": 2}


def test_rejudge_runs_no_script_and_keeps_long_claims(tmp_path, monkeypatch):
    """The score line is far before the end of the output (not in the stored tail): the record
    keeps the claim itself, so the rejudged verdict is the same; the scripts are gone."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.txt").write_text(f"{HANDOUT_BOARD} x\n")
    d = tmp_path / "class" / "dan"
    d.mkdir(parents=True)
    shutil.copy(CANNED, d / "dan.py")
    chatter = "".join(f"still thinking, step {i}\n" for i in range(200))
    out = "Min score: 18; move sequence: [15, -1, 7, -1, 14, -1, 51]\n" + chatter + "so my move is 51\n"
    (d / "canned.json").write_text(json.dumps({"*": {"out": out}}))
    graded = run_cli("grade", "class", "--boards", "b.txt", "--out", "run")
    assert graded.exit_code == 0, graded.output
    record = json.loads((tmp_path / "run" / "tests.jsonl").read_text().splitlines()[0])
    assert "Min score" not in record["run"]["stdout_tail"] and record["symbol"] == "+"
    shutil.rmtree(tmp_path / "class")
    done = rejudge(tmp_path / "run")
    assert done.tests == 1 and done.tests_changed == 0 and done.results[0].symbols == "+"


def test_rejudge_bad_folder(tmp_path):
    done = run_cli("rejudge", tmp_path / "nothing")
    assert done.exit_code != 0 and "not a run folder" in done.output and "Traceback" not in done.output


@pytest.mark.slow
def test_rejudge_of_a_killed_stop_on_error_run_leaves_a_gap_incomplete(tmp_path, monkeypatch):
    """Killed (SIGKILL) with tests 1, 2 and 4 recorded, 3 still running, 4 an error: a
    rejudge must not stop the student at test 4, since test 3 was never judged."""
    monkeypatch.chdir(tmp_path)
    boards = ref_boards(5)
    (tmp_path / "b.txt").write_text("".join(f"{b} {t}\n" for b, t in boards))
    d = tmp_path / "class" / "gap"
    d.mkdir(parents=True)
    shutil.copy(CANNED, d / "gap.py")
    spec = {f"{b} {t}": {"out": f"Min score: {ref.value(b, t, 'plain')}; move sequence: {list(reversed(ref.optimal_line(b, t)))}\n"}
            for b, t in boards}  # fmt: skip
    spec[" ".join(boards[2])] = {"out": "", "sleep": 60}
    spec[" ".join(boards[3])] = {"out": "my move: 99\n"}
    (d / "canned.json").write_text(json.dumps(spec))
    grader = subprocess.Popen([sys.executable, "-m", "grader", "grade", "class", "--boards", "b.txt", "--out", "run",
                               "--stop-on-error", "--jobs", "3", "--time-limit", "4"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            lines = (
                (tmp_path / "run" / "tests.jsonl").read_text().splitlines()
                if (tmp_path / "run" / "tests.jsonl").exists()
                else []
            )
            if {json.loads(ln)["index"] for ln in lines} >= {1, 2, 4}:
                break
            time.sleep(0.05)
    finally:
        grader.kill()
        grader.wait()
    recorded = {json.loads(ln)["index"] for ln in (tmp_path / "run" / "tests.jsonl").read_text().splitlines()}
    assert {1, 2, 4} <= recorded and 3 not in recorded
    done = rejudge(tmp_path / "run")
    (result,) = done.results
    assert not result.complete and "stopped at test" not in (result.stopped or ""), result.stopped
    assert grades(tmp_path / "run") == {"gap": str(len(recorded & {1, 2, 5}))}
    resumed = run_cli("grade", "--resume", "run")  # the gap is run now, and the stop found where it is
    assert resumed.exit_code == 0, resumed.output
    assert "stopped at test 3: no integer in the output" in resumed.output
