"""Gradescope: grade the one submission in an autograder container and write its results.json
(a script on a plan, or a GTP program on regression files).

Gradescope runs ``run_autograder`` with the student's files in /autograder/submission and
reads /autograder/results/results.json: a top-level ``score``, ``execution_time`` and
``output``, and ``tests`` each with ``name``, ``score``, ``max_score``, ``output`` and
``visibility``. A submission that crashes, hangs or is missing still gets its results.
"""

from __future__ import annotations

from typing import Any

from ..runs.text import fmt_credit, plural
from . import report
from .results import ScriptResult

SUBMISSION = "/autograder/submission"
RESULTS = "/autograder/results/results.json"
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


def results_json(
    result: ScriptResult, seconds: float, visibility: str = "visible", full: bool = False
) -> dict[str, Any]:
    """Gradescope's results.json for one student's run. A plan's private tests are
    ``after_published`` and, unless ``full``, say only their verdict: no board, no answer."""
    tests = []
    for t in result.tests:
        pos = t.position
        if not full and not result.plan.is_public(t.index):
            tests.append({"name": f"Private test {t.index}", "number": str(t.index), "score": t.verdict.credit,
                          "max_score": 1, "output": f"{t.symbol} ({fmt_credit(t.verdict.credit)})",
                          "visibility": "hidden" if visibility == "hidden" else "after_published"})  # fmt: skip
            continue
        name = f"Test {t.index}: {pos.token} to move, {plural(pos.empties, 'empty', 'empties')}"
        line = " ".join(str(m) for m in t.claim.line) if t.claim.has_score_line else "none"
        output = "\n".join([
            f"{t.symbol} ({fmt_credit(t.verdict.credit)}): {t.diagnosis}",
            f"board {pos.board_string()} {pos.token}",
            f"claimed score {t.claim.score if t.claim.has_score_line else 'none'}, line (forward) {line}, "
            f"move {t.claim.move if t.claim.move is not None else 'none'}",
            f"exact value {t.value:+d}, optimal moves {', '.join(map(str, t.optimal_moves))}",
        ])  # fmt: skip
        if t.run.timed_out and t.run.stdout_tail.strip():
            output += "\nprinted before the time limit:\n" + "\n".join(t.run.stdout_tail.strip().splitlines()[-5:])
        tests.append({"name": name, "number": str(t.index), "score": t.verdict.credit, "max_score": 1,
                      "output": output, "visibility": visibility})  # fmt: skip
    return {
        "score": result.total,
        "max_score": result.max_total,
        "execution_time": round(seconds, 2),
        "output": report.student_report(result, full),
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
    }
