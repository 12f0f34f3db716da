"""The crash rule (the handout: a script error ends the test): a script that crashes fails
its test, whatever it printed; one the grader stopped at a limit is graded on what it printed.

Every script in tests/crash/ prints the handout board's perfect answer (checked by brute force
in test_judge) and then ends its own way; they are graded together as one class.
"""

from pathlib import Path

import pytest

from grader.games.othello import Position
from grader.grading.plans import Plan
from grader.grading.results import Settings
from grader.grading.run import grade_class
from grader.limits import Limits

from conftest import HANDOUT_BOARD

pytestmark = pytest.mark.xdist_group(__name__)  # one worker: the module's fixture runs once

CRASH = Path(__file__).parent / "crash"
LIMITS = Limits(wall_seconds=8.0, cpu_seconds=1, memory_mb=300)  # 1 CPU s within 8 s wall even on a loaded machine
CASES = [
    # script, symbol, credit, words in the diagnosis
    ("perfect", "+", 1, "line is optimal"),
    ("stopped_at_time_limit", "+", 1, "the script timed out after 8.0 s and was killed"),
    ("stopped_at_cpu_limit", "+", 1, "ran out of CPU time"),
    ("exception_after_answer", "-", 0, "the script crashed: it exited with code 1, so the test fails"),
    ("exit3_after_answer", "-", 0, "the script crashed: it exited with code 3, so the test fails"),
    ("segfault_after_answer", "-", 0, "the script crashed: it was killed by SIGSEGV, so the test fails"),
    (
        "memory_after_answer",
        "-",
        0,
        "crashed: it exited with code 1 (it ran out of memory: limits.memory_mb is 300 MB)",
    ),
    ("sigkill_after_answer", "-", 0, "the script crashed: it was killed by SIGKILL, so the test fails"),
    ("syntax_error", "t", 0, "the script crashed: it exited with code 1, so the test fails"),
]
STDERR = {"exception_after_answer": "ValueError: something went wrong after the answer",
          "syntax_error": "SyntaxError", "memory_after_answer": "MemoryError"}  # fmt: skip


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    plan = Plan((Position.from_string(HANDOUT_BOARD, "x"),), None, "handout board")
    run = grade_class([CRASH], plan, Settings(limits=LIMITS, jobs=len(CASES)), out=tmp_path_factory.mktemp("run") / "r")
    return {r.name: r for r in run.results}


def test_every_script_has_a_case():
    assert sorted(c[0] for c in CASES) == sorted(p.stem for p in CRASH.glob("*.py"))


@pytest.mark.parametrize("name, symbol, credit, words", CASES, ids=[c[0] for c in CASES])
def test_crash_rule(graded, name, symbol, credit, words):
    test = graded[name].tests[0]
    assert (test.symbol, test.verdict.credit) == (symbol, credit), test.diagnosis
    assert words in test.diagnosis
    assert test.run.crashed == (credit == 0)
    if name in STDERR:
        assert "stderr ends: " in test.diagnosis and STDERR[name] in test.diagnosis
    assert graded[name].crashes == (credit == 0)


def test_stop_on_error_stops_at_a_crash(tmp_path):
    plan = Plan((Position.from_string(HANDOUT_BOARD, "x"),) * 3, None, "handout board x3")
    settings = Settings(limits=LIMITS, jobs=2, stop_on_error=True)
    run = grade_class([CRASH / "exit3_after_answer.py", CRASH / "perfect.py"], plan, settings, out=tmp_path / "r")
    crashed, perfect = sorted(run.results, key=lambda r: r.name)
    assert len(crashed.tests) == 1 and crashed.stopped == "stopped at test 1: the script crashed: it exited with code 3"
    assert perfect.symbols == "+++" and perfect.stopped is None
