"""Grading a class: folder layouts, the run folder and resume (also after SIGKILL), exports,
grader report, and Gradescope."""

import csv
import io
import json
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_grading import ref_boards

from grader.cli import main
from grader.engines import isolation
from grader.errors import GraderError
from grader.games import get_game
from grader.runs.submissions import find_submissions

import reference as ref
from conftest import ROOT

CANNED = Path(__file__).parent / "scripts" / "canned.py"
ISOLATION = f"isolation {isolation.choose('auto', sys.executable)} (auto)"  # what the default resolves to here
BOARDS = ref_boards(6)  # small endgames, answers from brute force


def answers(board: str, tok: str) -> tuple[int, list[int]]:
    return ref.value(board, tok, "plain"), ref.optimal_line(board, tok)


def lab(score: int, line: list[int]) -> str:
    return f"Min score: {score}; move sequence: {list(reversed(line))}\n"


def make_student(folder: Path, name: str, kind: str, sleep: float = 0.0, log: Path | None = None) -> Path:
    """A student folder with a canned script answering every board: 'perfect', 'no-score' or 'hostile'."""
    d = folder / name
    d.mkdir(parents=True)
    shutil.copy(CANNED, d / f"{name}.py")
    spec = {}
    for board, tok in BOARDS:
        v, line = answers(board, tok)
        out = {"perfect": lab(v, line), "no-score": f"My move is {line[0]}\n",
               "hostile": "<script>alert('x')</script> & score 99 <b>\n"}[kind]  # fmt: skip
        spec[f"{board} {tok}"] = {"out": out, "sleep": sleep}
    if log:
        spec["log"] = str(log)
    (d / "canned.json").write_text(json.dumps(spec))
    return d


@pytest.fixture
def klass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.txt").write_text("".join(f"{b} {t}\n" for b, t in BOARDS))
    make_student(tmp_path / "class", "alice", "perfect")
    make_student(tmp_path / "class", "bob", "no-score")
    make_student(tmp_path / "class", "carol", "hostile")
    return tmp_path


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# --- finding submissions ----------------------------------------------------------


def test_folder_layouts(tmp_path):
    (tmp_path / "flat").mkdir()
    for name in ("ann.py", "ben.py", "README.md", ".hidden.py", "_helper.py"):
        (tmp_path / "flat" / name).write_text("")
    (tmp_path / "flat" / "cal").mkdir()
    (tmp_path / "flat" / "cal" / "main.py").write_text("")
    (tmp_path / "flat" / "dee").mkdir()
    (tmp_path / "flat" / "dee" / "notes.txt").write_text("")
    (tmp_path / "flat" / "eve").mkdir()
    for name in ("negamax.py", "helpers.py"):
        (tmp_path / "flat" / "eve" / name).write_text("")
    (tmp_path / "flat" / "__pycache__").mkdir()
    subs = {s.name: s for s in find_submissions([tmp_path / "flat"], set())}
    assert list(subs) == ["ann", "ben", "cal", "dee", "eve"]
    assert subs["cal"].path.name == "main.py"
    assert subs["dee"].path is None and subs["dee"].problem.startswith("no script found in")
    assert subs["eve"].path is None and "2 scripts in" in subs["eve"].problem and "set 'entry'" in subs["eve"].problem
    with_entry = {s.name: s for s in find_submissions([tmp_path / "flat"], set(), entry="negamax.py")}
    assert with_entry["eve"].path.name == "negamax.py"


def test_other_languages_and_executables(tmp_path):
    (tmp_path / "Foo.java").write_text("")
    exe = tmp_path / "engine"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    (tmp_path / "data.bin").write_text("")
    assert [s.name for s in find_submissions([tmp_path], {".java"})] == ["Foo", "engine"]


def test_submission_errors(tmp_path):
    with pytest.raises(GraderError, match="'nowhere' not found: give script files or folders"):
        find_submissions(["nowhere"], set())
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.py").write_text("")
    with pytest.raises(GraderError, match="two submissions are named 'x'"):
        find_submissions([tmp_path / "a", tmp_path / "b"], set())
    (tmp_path / "empty").mkdir()
    with pytest.raises(GraderError, match="no scripts found in"):
        find_submissions([tmp_path / "empty"], set())


# --- a class run and its exports -----------------------------------------------------


def test_class_run_and_exports(klass):
    result = run_cli("grade", "class", "--boards", "b.txt", "--out", "run", "--jobs", "2", "--sort", "total")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert (
        lines[0]
        == "Grading 3 students: 6 tests (boards from b.txt), time limit 10 s, 2 jobs, scoring plain, "
        + ISOLATION
        + f", {get_game('othello').backend()} solver"
    )
    assert lines[1] == "Run folder: run"
    header = lines.index(next(ln for ln in lines if ln.startswith("student ")))
    student_lines = sorted(ln for ln in lines[2:header] if ln.strip())
    assert len(student_lines) == 3
    assert student_lines[0].split() == ["alice", "6/6", "++++++"]
    assert student_lines[1].split()[1] == "3/6" and set(student_lines[1].split()[2]) == {"T"}
    assert student_lines[2].split()[:2] == ["carol", "0/6"]
    table = lines[header:]
    assert [row.split()[0] for row in table[2:5]] == ["alice", "bob", "carol"]  # --sort total
    run = klass / "run"
    assert sorted(p.name for p in run.iterdir()) == [
        "answers.jsonl", "grades.csv", "junit.xml", "plan.plan", "report.html", "results.json", "run.json", "tests.jsonl"
    ]  # fmt: skip

    rows = list(csv.DictReader(io.StringIO((run / "grades.csv").read_text())))
    assert [r["name"] for r in rows] == ["alice", "bob", "carol"]
    assert rows[0] | {} == {"name": "alice", "total": "6", "max": "6", "+": "6", "M": "0", "Q": "0", "T": "0",
                           "m": "0", "s": "0", "-": "0", "t": "0", "timeouts": "0", "crashes": "0",
                           "complete": "yes", "note": ""}  # fmt: skip
    assert (rows[1]["total"], rows[1]["T"]) == ("3", "6")

    data = json.loads((run / "results.json").read_text())
    assert [s["name"] for s in data["scripts"]] == ["alice", "bob", "carol"]
    assert all(len(s["tests"]) == 6 for s in data["scripts"])
    assert set(data["scripts"][0]["tests"][0]) >= {"index", "board", "token", "symbol", "credit", "diagnosis"}

    suites = ET.fromstring((run / "junit.xml").read_text())
    assert [(s.get("name"), s.get("tests"), s.get("failures")) for s in suites] == [
        ("alice", "6", "0"), ("bob", "6", "6"), ("carol", "6", "6")
    ]  # fmt: skip
    failure = suites[1][0].find("failure")
    assert failure.get("message").startswith("T (1/2): move ") and "no score line" in failure.get("message")

    meta = json.loads((run / "run.json").read_text())
    assert set(meta) == {
        "grader_version",
        "created",
        "run_id",
        "seed",
        "plan",
        "settings",
        "scripts",
        "isolation_used",
        "backend_used",
        "seal",
    }
    assert meta["backend_used"] == get_game("othello").backend() and meta["settings"]["backend"] == "auto"
    assert len(meta["plan"]["boards"]) == 6 and meta["settings"]["limits"]["wall_seconds"] == 10
    assert set(meta["scripts"]) == {"alice", "bob", "carol"} and len(meta["scripts"]["alice"]["sha256"]) == 64
    assert len((run / "tests.jsonl").read_text().splitlines()) == 18


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_report_structure_and_escaping(klass):
    run_cli("grade", "class", "--boards", "b.txt", "--out", "run")
    html = (klass / "run" / "report.html").read_text()
    page = _Page()
    page.feed(html)
    tags = [t for t, _ in page.tags]
    assert "script" not in tags and "b" not in tags  # the hostile output is text, not markup
    assert "<script>alert('x')</script>" in "".join(page.text)
    boards = [a for t, a in page.tags if t == "svg" and a.get("class") == "board"]
    assert len(boards) == 12  # bob's 6 and carol's 6 tests below full credit; alice has none
    assert [a["id"] for t, a in page.tags if t == "section"] == ["s1", "s2", "s3"]
    assert sum(1 for t, a in page.tags if t == "svg" and a.get("aria-label") == "distribution of totals") == 1
    assert "http" not in html.replace('xmlns="http', "")  # nothing to fetch


def test_report_command_recreates_the_exports(klass):
    run_cli("grade", "class", "--boards", "b.txt", "--out", "run")
    before = {n: (klass / "run" / n).read_text() for n in ("grades.csv", "results.json", "junit.xml")}
    for n in before:
        (klass / "run" / n).unlink()
    (klass / "run" / "report.html").unlink()
    result = run_cli("report", "run")
    assert result.exit_code == 0 and result.output.endswith(
        "Results in run: grades.csv, results.json, junit.xml, report.html\n"
    )
    assert {n: (klass / "run" / n).read_text() for n in before} == before
    assert (klass / "run" / "report.html").exists()
    assert run_cli("report", "nowhere").output.strip() == (
        "Error: 'nowhere' is not a run folder (no run.json): give the folder a grading run wrote"
    )


def test_resume_rejects_new_settings(klass):
    run_cli("grade", "class", "--boards", "b.txt", "--out", "run")
    result = run_cli("grade", "--resume", "run", "--seed", "3")
    assert result.exit_code == 2 and "--resume continues a run with its own plan and settings" in result.output
    again = run_cli("grade", "class", "--boards", "b.txt", "--out", "run")
    assert again.exit_code == 1 and "'run' already holds a run: continue it with --resume run" in again.output


def _comparable(path: Path) -> list:
    """results.json without timings."""
    data = json.loads(path.read_text())
    return [
        (
            s["name"],
            s["total"],
            s["symbols"],
            [{k: v for k, v in t.items() if k not in ("seconds", "cpu_seconds")} for t in s["tests"]],
        )
        for s in data["scripts"]
    ]


@pytest.mark.slow
def test_resume_after_sigkill_gives_the_same_results(tmp_path):
    log = tmp_path / "runs.log"
    (tmp_path / "config.yaml").write_text("isolation: none  # the scripts log each run to a file outside a sandbox\n")
    for name, kind in (("ann", "perfect"), ("ben", "no-score"), ("cy", "perfect")):
        make_student(tmp_path / "class", name, kind, sleep=0.25, log=log)
    (tmp_path / "b.txt").write_text("".join(f"{b} {t}\n" for b, t in BOARDS))
    cmd = [sys.executable, "-m", "grader", "grade", "class", "--boards", "b.txt", "--jobs", "2"]
    proc = subprocess.Popen([*cmd, "--out", "run"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    recorded = tmp_path / "run" / "tests.jsonl"
    while time.monotonic() < deadline and (not recorded.exists() or len(recorded.read_text().splitlines()) < 5):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    records = [json.loads(line) for line in recorded.read_text().splitlines()]
    done_before = len(records)
    assert 5 <= done_before < 18
    time.sleep(0.5)  # the killed grader's last scripts finish on their own
    ran_before = len(log.read_text().splitlines())  # each run logs as it starts

    resumed = subprocess.run([sys.executable, "-m", "grader", "grade", "--resume", "run"], cwd=tmp_path,
                             capture_output=True, text=True)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert f"({done_before} tests already recorded)" in resumed.stdout
    done = {(r["student"], r["index"]) for r in records}
    missing = sorted(f"{name}.py {' '.join(BOARDS[i - 1])}" for name in ("ann", "ben", "cy") for i in range(1, 7)
                     if (name, i) not in done)  # fmt: skip
    assert sorted(log.read_text().splitlines()[ran_before:]) == missing  # the tests not recorded, each once

    subprocess.run([*cmd, "--out", "fresh"], cwd=tmp_path, check=True, capture_output=True)
    assert _comparable(tmp_path / "run" / "results.json") == _comparable(tmp_path / "fresh" / "results.json")


def test_resume_grades_a_changed_script_again(klass):
    log = klass / "runs.log"
    (klass / "config.yaml").write_text("isolation: none  # the scripts log each run to a file outside a sandbox\n")
    shutil.rmtree(klass / "class")
    make_student(klass / "class", "alice", "perfect", log=log)
    make_student(klass / "class", "bob", "no-score", log=log)
    run_cli("grade", "class", "--boards", "b.txt", "--out", "run")
    assert len(log.read_text().splitlines()) == 12
    script = klass / "class" / "bob" / "bob.py"
    script.write_text(script.read_text() + "\n# fixed\n")
    (klass / "class" / "bob" / "canned.json").write_text((klass / "class" / "alice" / "canned.json").read_text())
    result = run_cli("grade", "class", "--resume", "run")
    assert result.exit_code == 0, result.output
    assert len(log.read_text().splitlines()) == 18  # only bob's 6 tests ran again
    data = json.loads((klass / "run" / "results.json").read_text())
    assert [s["symbols"] for s in data["scripts"]] == ["++++++", "++++++"]


# --- Gradescope ----------------------------------------------------------------------------


def gradescope(tmp_path, files: dict[str, str | Path], *extra):
    sub = tmp_path / "submission"
    sub.mkdir()
    for name, content in files.items():
        if isinstance(content, Path):
            shutil.copy(content, sub / name)
        else:
            (sub / name).write_text(content)
    (tmp_path / "b.txt").write_text("".join(f"{b} {t}\n" for b, t in BOARDS[:3]))
    result = CliRunner().invoke(main, ["gradescope", "--submission", str(sub), "--results",
                                       str(tmp_path / "results" / "results.json"), "--boards", str(tmp_path / "b.txt"), *extra])  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / "results" / "results.json").read_text())


def test_gradescope_results_fields(tmp_path):
    data = gradescope(tmp_path, {"negamax.py": ROOT / "submissions" / "negamax.py"})
    assert {"score", "execution_time", "output", "tests"} <= set(data)
    assert data["score"] == 3 and data["max_score"] == 3
    assert [set(t) >= {"name", "score", "max_score", "output", "visibility"} for t in data["tests"]] == [True] * 3
    assert data["tests"][0]["name"].startswith("Test 1: ") and data["tests"][0]["max_score"] == 1
    assert data["tests"][0]["visibility"] == "visible"
    assert "All tests perfect." in data["output"]


def test_gradescope_crashing_submission_still_gets_results(tmp_path):
    data = gradescope(tmp_path, {"mine.py": "raise SystemExit('boom')\n"}, "--visibility", "after_due_date")
    assert data["score"] == 0 and len(data["tests"]) == 3
    assert all("exited with code 1" in t["output"] and "boom" in t["output"] for t in data["tests"])
    assert data["tests"][0]["visibility"] == "after_due_date"


@pytest.mark.slow
def test_gradescope_hostile_submission_still_gets_results(tmp_path):
    (tmp_path / "config.yaml").write_text("limits:\n  wall_seconds: 1\n  processes: 20\n")
    data = gradescope(tmp_path, {"bomb.py": Path(__file__).parent / "hostile" / "fork_bomb.py"},
                      "--config", str(tmp_path / "config.yaml"))  # fmt: skip
    assert len(data["tests"]) == 3, data
    assert all(
        re.search(r"^t \(0\):.* the script timed out after \d+\.\d s and was killed", t["output"])
        for t in data["tests"]
    )


def test_gradescope_without_a_script(tmp_path):
    data = gradescope(tmp_path, {"notes.txt": "I forgot"})
    assert data["score"] == 0 and data["tests"] == []
    assert "no script found in" in data["output"]


# --- found in review ---------------------------------------------------------------------


@pytest.mark.slow
def test_a_line_cut_short_does_not_swallow_the_next(klass):
    run_cli("grade", "class", "--boards", "b.txt", "--out", "run")
    lines = (klass / "run" / "tests.jsonl").read_text().splitlines()
    (klass / "run" / "tests.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:200])  # killed mid-line
    assert run_cli("grade", "--resume", "run").exit_code == 0
    assert len([ln for ln in (klass / "run" / "tests.jsonl").read_text().splitlines() if ln.endswith("}")]) == 18
    assert run_cli("grade", "--resume", "run").output.count("(18 tests already recorded)") == 1


def test_stop_on_error_is_recorded_as_on_screen(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    d = make_student(tmp_path / "class", "dan", "perfect")
    spec = json.loads((d / "canned.json").read_text())
    first = f"{BOARDS[0][0]} {BOARDS[0][1]}"
    spec[first] = {"out": "99\n", "sleep": 0.5}  # fails test 1, slowly: later tests finish first
    (d / "canned.json").write_text(json.dumps(spec))
    make_student(tmp_path / "class", "eve", "perfect")
    (tmp_path / "b.txt").write_text("".join(f"{b} {t}\n" for b, t in BOARDS))
    result = run_cli("grade", "class", "--boards", "b.txt", "--out", "run", "--stop-on-error", "--jobs", "3")
    assert result.exit_code == 0
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO((tmp_path / "run" / "grades.csv").read_text()))}
    assert (rows["dan"]["total"], rows["eve"]["total"]) == ("0", "6")
    data = {s["name"]: s for s in json.loads((tmp_path / "run" / "results.json").read_text())["scripts"]}
    assert data["dan"]["symbols"] == "t" and data["dan"]["stopped"].startswith("stopped at test 1: move 99")


@pytest.mark.parametrize("name", ["=cmd|calc", "bad\udcff"])
def test_hostile_names_and_outputs_in_the_exports(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "class"
    folder.mkdir()
    script = folder / (name + ".py")
    script.write_bytes(b"import sys\nsys.stderr.write('\\x1b[31m\\x01\\x00 boom')\nprint(0)\nsys.exit(3)\n")
    (tmp_path / "b.txt").write_text(f"{BOARDS[0][0]} {BOARDS[0][1]}\n")
    result = run_cli("grade", "class", "--boards", "b.txt", "--out", "run")
    assert result.exit_code == 0, result.output
    ET.parse(tmp_path / "run" / "junit.xml")  # still well-formed
    (row,) = csv.DictReader(io.StringIO((tmp_path / "run" / "grades.csv").read_text()))
    assert not row["name"].startswith("=") and "\udcff" not in row["name"]


def test_run_folder_mistakes_are_one_line(klass):
    run_cli("grade", "class", "--boards", "b.txt", "--out", "run")
    meta = json.loads((klass / "run" / "run.json").read_text())
    shutil.move(klass / "class" / "bob", klass / "gone")
    result = run_cli("grade", "--resume", "run")
    assert result.exit_code == 1 and "the script of 'bob'" in result.output and "is gone" in result.output
    meta["settings"] = {}
    (klass / "run" / "run.json").write_text(json.dumps(meta))
    result = run_cli("report", "run")
    assert result.exit_code == 1 and result.output.startswith(
        "Error: 'run/run.json' was changed after the grader wrote it"
    )
    (klass / "t").mkdir()
    (klass / "t" / "tournament.json").write_text("{}")
    result = run_cli("grade", "class", "--boards", "b.txt", "--out", "t")
    assert result.exit_code == 1 and "holds a tournament, not a run" in result.output


def test_a_student_whose_script_is_for_another_game_carries_the_note(tmp_path, monkeypatch):
    """The class goes on (exit 0); the student's row says the script seems written for another
    game, in the table, grades.csv (not complete is not the point: the grade is final),
    results.json and report.html, and again from 'grader report'."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "class").mkdir()
    shutil.copy(ROOT / "submissions" / "negamax.py", tmp_path / "class" / "ann.py")
    shutil.copy(ROOT / "submissions" / "tictactoe" / "minimax.py", tmp_path / "class" / "bob.py")
    fixed = [ln.split("#")[0].strip() for ln in (ROOT / "fixtures" / "standard.txt").read_text().splitlines()]
    Path("b.txt").write_text("\n".join([ln for ln in fixed if ln][:6]) + "\n")
    done = CliRunner().invoke(main, ["grade", "class", "--boards", "b.txt", "--out", "run", "--jobs", "2"])
    assert done.exit_code == 0, done.output
    hint = "is it written for Tic-tac-toe? Grade it with --game tictactoe"
    bob_row = [ln for ln in done.output.splitlines() if ln.startswith("bob ")][
        -1
    ]  # the table's, after the progress line
    assert bob_row.endswith(hint), done.output
    assert not any(hint in ln for ln in done.output.splitlines() if ln.startswith("ann "))
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(Path("run/grades.csv").read_text()))}
    assert rows["ann"]["note"] == "" and rows["bob"]["note"].endswith(hint)
    assert rows["bob"]["complete"] == "yes"
    data = {s["name"]: s for s in json.loads(Path("run/results.json").read_text())["scripts"]}
    assert data["ann"]["game_hint"] is None and data["bob"]["game_hint"].endswith(hint)
    assert hint in Path("run/report.html").read_text()
    again = CliRunner().invoke(main, ["report", "run"])
    assert [ln for ln in again.output.splitlines() if ln.startswith("bob ")] == [bob_row], again.output
