"""Whole grading runs with real scripts, on boards whose answers come from brute force."""

import json
import shutil
import stat
from pathlib import Path

import pytest
from test_judge import BEST, BOARD, LINE, OCCUPIED, TOKEN, VALUE, WORSE, bad_line, lab

from grader.engines.scripts import RunSettings, Script
from grader.errors import GraderError
from grader.games.othello import Position, square_name
from grader.grading.plans import Plan
from grader.grading.results import Settings
from grader.grading.run import grade
from grader.limits import Limits

import reference as ref
from conftest import ROOT

CANNED = Path(__file__).parent / "scripts" / "canned.py"
POS = Position.from_string(BOARD, TOKEN)


def canned(tmp_path, spec: dict) -> Path:
    """A copy of the canned script answering as ``spec`` says ({"*": {...}} for any board)."""
    dest = tmp_path / "canned.py"
    shutil.copy(CANNED, dest)
    (tmp_path / "canned.json").write_text(json.dumps(spec))
    return dest


def one(tmp_path, entry: dict, limit=5.0, **kw):
    script = canned(tmp_path, {"*": entry})
    result = grade(script, Plan((POS,), None, "test"), Settings(limits=Limits(wall_seconds=limit), jobs=1, **kw))
    return result.tests[0]


@pytest.mark.parametrize(
    "out, symbol",
    [
        (lab(VALUE, LINE), "+"),
        (lab(VALUE, bad_line()), "M"),
        (lab(VALUE + 2, LINE), "Q"),
        (lab(VALUE - 2, bad_line()), "m"),
        (lab(VALUE, [WORSE]), "s"),
        (lab(VALUE + 2, [WORSE]), "-"),
        (f"My move is {BEST}\n", "T"),
        (f"My move is {WORSE}\n", "t"),
    ],
)
def test_every_symbol_with_a_real_script(tmp_path, out, symbol):
    test = one(tmp_path, {"out": out})
    assert test.symbol == symbol, test.diagnosis
    assert test.value == VALUE


def test_timeout_after_printing_the_move_is_T(tmp_path):
    test = one(tmp_path, {"out": f"My move is {BEST}\n", "sleep": 30}, limit=2)  # time to print, loaded or not
    assert test.symbol == "T" and test.run.timed_out
    assert "the script timed out after 2.0 s and was killed" in test.diagnosis


def test_score_line_printed_before_the_limit_counts(tmp_path):
    test = one(tmp_path, {"out": lab(VALUE, LINE), "sleep": 30}, limit=0.5)
    assert test.symbol == "+" and test.run.timed_out


def test_timeout_with_nothing_printed_is_t(tmp_path):
    test = one(tmp_path, {"out": "", "sleep": 30}, limit=0.5)
    assert test.symbol == "t" and test.verdict.failure == "no integer in the output, so no move"


def test_a_crash_fails_the_test_whatever_was_printed(tmp_path):
    test = one(tmp_path, {"out": lab(VALUE, LINE), "err": "Traceback...\nValueError: oops\n", "exit": 1})
    assert test.symbol == "-" and test.verdict.credit == 0 and test.run.crashed
    assert test.error == "the script crashed: it exited with code 1"
    assert test.diagnosis.startswith("the script crashed: it exited with code 1, so the test fails; ")
    assert test.diagnosis.endswith("stderr ends: Traceback... | ValueError: oops")
    assert "score" in test.diagnosis and "is correct" in test.diagnosis  # what it printed is still judged, for feedback
    no_score_line = one(tmp_path, {"out": f"My move is {BEST}\n", "exit": 2})
    assert no_score_line.symbol == "t" and no_score_line.verdict.credit == 0


def test_illegal_move_fails_the_test_and_names_the_cause(tmp_path):
    test = one(tmp_path, {"out": lab(VALUE, LINE) + f"{OCCUPIED}\n"})
    assert test.symbol == "-" and test.verdict.credit == 0
    assert test.error.startswith(f"move {OCCUPIED} ({square_name(OCCUPIED)}) is not a legal move for {TOKEN}")


def test_results_come_in_test_order_with_parallel_jobs(tmp_path):
    """Later tests finish first (earlier ones sleep); symbols still arrive in test order."""
    positions = [Position.from_string(b, t) for b, t in ref_boards(6)]
    spec = {}
    for i, p in enumerate(positions):
        v = ref.value(p.board_string(), p.token, "plain")
        line = ref.optimal_line(p.board_string(), p.token)
        spec[f"{p.board_string()} {p.token}"] = {
            "out": lab(v, line),
            "sleep": 0.3 * (len(positions) - i) / len(positions),
        }
    seen = []
    result = grade(
        canned(tmp_path, spec),
        Plan(tuple(positions), None, "t"),
        Settings(jobs=3),
        on_test=lambda t: seen.append(t.index),
    )
    assert seen == [1, 2, 3, 4, 5, 6]
    assert result.symbols == "++++++" and result.total == 6 and result.max_total == 6


def ref_boards(n):
    import random

    rng = random.Random(99)
    out = []
    while len(out) < n:
        found = ref.random_endgame(rng, rng.randint(2, 5))
        if found and ref.moves(*found):
            out.append(found)
    return out


def test_stop_on_error_stops_at_the_first_failure(tmp_path):
    positions = [Position.from_string(b, t) for b, t in ref_boards(5)]
    spec = {f"{p.board_string()} {p.token}": {"out": f"{p.moves()[0]}\n"} for p in positions}
    bad = positions[2]
    spec[f"{bad.board_string()} {bad.token}"] = {"out": "99\n"}
    plan = Plan(tuple(positions), None, "t")
    script = canned(tmp_path, spec)
    stopped = grade(script, plan, Settings(jobs=2, stop_on_error=True))
    assert len(stopped.tests) == 3 and stopped.stopped.startswith("stopped at test 3: move 99 is not a legal move")
    assert stopped.max_total == 5
    goes_on = grade(script, plan, Settings(jobs=2))
    assert len(goes_on.tests) == 5 and goes_on.stopped is None and goes_on.symbols[2] == "t"


def test_json_record_schema(tmp_path):
    test = one(tmp_path, {"out": lab(VALUE, LINE)})
    data = test.to_json()
    assert list(data) == [
        "index", "board", "token", "empties", "symbol", "credit", "claimed_score", "claimed_line", "move",
        "value", "optimal_moves", "timed_out", "crashed", "exit_code", "seconds", "cpu_seconds", "host", "diagnosis",
    ]  # fmt: skip
    assert data["host"] is None  # run on this machine
    assert data["claimed_line"] == LINE and data["claimed_score"] == VALUE and data["move"] == LINE[0]
    assert data["optimal_moves"] == sorted(s for s, v in ref.move_values(BOARD, TOKEN, "plain").items() if v == VALUE)
    no_claim = one(tmp_path, {"out": "7\n"}).to_json()
    assert no_claim["claimed_score"] is None and no_claim["claimed_line"] is None


def test_how_scripts_are_started(tmp_path):
    py = tmp_path / "a.py"
    py.write_text("")
    assert Script.from_path(py).command(RunSettings(python="/usr/bin/python3")) == [
        "/usr/bin/python3", "{dir}/a.py", "{board}", "{token}",
    ]  # fmt: skip
    exe = tmp_path / "engine"
    exe.write_text("#!/bin/sh\necho 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    assert Script.from_path(exe).command(RunSettings()) == ["{dir}/engine", "{board}", "{token}"]
    java = tmp_path / "Foo.java"
    java.write_text("")
    settings = RunSettings(commands={".java": "java -cp {dir} {stem} {board} {token}"})
    assert Script.from_path(java).command(settings) == ["java", "-cp", "{dir}", "Foo", "{board}", "{token}"]
    with pytest.raises(GraderError, match="make it executable .* or add a command template for '.java'"):
        Script.from_path(java).command(RunSettings())
    with pytest.raises(GraderError, match="script 'nope.py' not found"):
        Script.from_path("nope.py")


def test_a_script_link_is_judged_by_its_own_name(tmp_path):
    target = tmp_path / "engine_without_suffix"
    target.write_text(f"print('My move is {BEST}')\n")
    link = tmp_path / "evil.py"
    link.symlink_to(target)
    assert grade(link, Plan((POS,), None, "t"), Settings(jobs=1)).symbols == "T"


def test_a_script_reads_helper_files_next_to_it_and_nothing_else(tmp_path):
    (tmp_path / "book.txt").write_text(f"{BEST}\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.txt").write_text("deep\n")
    script = tmp_path / "reader.py"
    script.write_text(
        "import os\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "print(sorted(os.listdir(here)))\n"
        "print('My move is', open(os.path.join(here, 'book.txt')).read().strip())\n"
    )
    test = grade(script, Plan((POS,), None, "t"), Settings(jobs=1)).tests[0]
    assert test.symbol == "T", test.diagnosis
    assert "['book.txt', 'reader.py', 'sub']" in test.run.stdout_tail


def test_shell_script_through_a_template(tmp_path):
    sh = tmp_path / "mover.sh"
    sh.write_text(f"echo My move is {BEST}\n")
    result = grade(sh, Plan((POS,), None, "t"), Settings(commands={".sh": "sh {script} {board} {token}"}))
    assert result.symbols == "T"


def test_bundled_negamax_is_perfect_on_the_fixed_boards():
    from grader.grading.plans import load_plan

    result = grade(ROOT / "submissions" / "negamax.py", load_plan(ROOT / "fixtures" / "standard.txt"), Settings(jobs=2))
    assert result.symbols == "+" * 10 and result.total == 10
