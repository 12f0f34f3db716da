"""Gradescope's results.json for a GTP program on regression files."""

from __future__ import annotations

from typing import Any

from ..runs.text import fmt_credit
from .results import StudentRegress
from .runs import private_counts, student_view, test_line


def regress_results_json(student: StudentRegress, public: list[frozenset[int] | None], seconds: float,
                         visibility: str = "visible") -> dict[str, Any]:  # fmt: skip
    """Gradescope's results.json for one student's GTP program on regression files (a result
    per file; ``public[i]``: the tests of file i students may see, None where the file does
    not say: then none). Private tests say only their verdict until published; nothing a
    student sees at once names a private test's position, answer or why the program ended
    in one. A student with no program gets 0 and the reason."""
    hidden = "hidden" if visibility == "hidden" else "after_published"
    tests, lines = [], []
    for result, shown in zip(student.results, public):
        shown = shown or frozenset()
        why, viewed = student_view(result, {t.number for t in result.tests} - shown)
        stopped = f", stopped {why}" if why else ""
        lines.append(f"{result.file}: {result.total:.1f}/100{stopped}")
        private = ""
        for t in viewed:
            counts = result.counts(t)  # not one expected to fail, nor (count: solve-genmove) a 'timelimit'
            credit = f"{t.symbol} ({fmt_credit(t.credit)})" + (
                "" if counts else ", expected to fail" if t.expect_failure else ", not counted"
            )
            entry = {"number": str(t.number), "score": t.credit if counts else 0, "max_score": 1 if counts else 0}
            if t.number not in shown:
                private += t.symbol
                tests.append({**entry, "name": f"{result.file}: private test {t.number}", "output": credit,
                              "visibility": hidden})  # fmt: skip
                continue
            lines.append(test_line(t))
            output = "\n".join([f"{credit}: {t.note}", f"position {t.board}", f"answer {t.answer or '(none)'}"])
            tests.append({**entry, "name": f"{result.file}: test {t.number} ({t.command})", "output": output,
                          "visibility": visibility})  # fmt: skip
        if private:
            lines.append(private_counts(private))
    output = student.problem or "\n".join([f"Total {student.total:.1f}/100", *lines])
    return {"score": round(student.total, 2), "max_score": 100, "execution_time": round(seconds, 2),
            "output": output, "visibility": visibility, "stdout_visibility": "hidden", "tests": tests}  # fmt: skip
