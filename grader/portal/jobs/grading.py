"""Grading one submission, as the grader's commands grade it: a script on its assignment's plan
with the call ``grader grade`` makes (``grade_submission``), a GTP lab's program on its
regression file with the call ``grader gradescope`` makes (``regress_submission``); what the
portal keeps of either (``Feedback``): the student's view (public tests only) and the staff's.
For a GTP lab, the tests the file names as public (``# grader: public tests``) are shown in
full; the others only by their symbol, with what the program said after the first of them cut
as Gradescope's results cut it (``student_view``)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...engines.programs import ProtocolEngine
from ...execution.executor import Executor
from ...grading import report
from ...grading.results import ScriptResult
from ...grading.run import OnTest, grade_submission
from ...regression.results import RegressResult, RegressSettings, StudentRegress
from ...regression.runs import failed_board, regress_submission, student_text, student_view, test_line
from ...runs.submissions import Submission
from ...runs.text import fmt_total, plural
from ..course.course import Assignment, Course
from ..course.gtplab import RegressionFile, regress_settings
from ..uploads import command_program, unpack


@dataclass(frozen=True)
class Feedback:
    """What a graded submission keeps: the student's view (public tests only) and the full one."""

    total: float
    max_total: int
    symbols: str
    public_symbols: str
    public_total: float
    student_text: str
    full_text: str
    records: str
    stopped: str | None = None  # why the run stopped before its last test, as grade records it


def feedback(result: ScriptResult, filename: str) -> Feedback:
    """The texts of ``grader grade`` for a result: in full for staff; for the student their
    public tests only (each below full credit shown as ``grade`` shows it), the private ones
    as a count until the instructor releases them."""
    result.script = filename  # the summary's first line names the upload, not the grader's temporary file
    plan = result.plan
    public = [t for t in result.tests if plan.is_public(t.index)]
    n_public = sum(plan.is_public(i) for i in range(1, len(plan.positions) + 1))
    n_private = len(plan.positions) - n_public
    public_total = sum(t.verdict.credit for t in public)
    lines = [f"{filename}: public tests {fmt_total(public_total)}/{n_public}  {''.join(t.symbol for t in public)}"]
    if n_private:
        lines.append(
            f"{plural(n_private, 'private test', 'private tests')}: results shown when the instructor releases them"
        )
    if result.stopped and result.not_graded:
        lines.append(result.stopped)
    student = "\n".join(lines) + "\n\n" + report.offending_report(result, public_only=True)
    full = report.summary(result) + "\n\n" + report.offending_report(result)
    return Feedback(result.total, result.max_total, result.symbols, "".join(t.symbol for t in public), public_total,
                    student, full, json.dumps([t.record() for t in result.tests]), result.stopped)  # fmt: skip


def grade_upload(course: Course, assignment: Assignment, filename: str, content: bytes,
                 executor: Executor | None = None, on_test: OnTest | None = None) -> Feedback:  # fmt: skip
    """Grade an upload as ``grader grade`` grades a student's script (``grader gradescope`` a GTP
    program): unpacked alone in a fresh folder (``uploads.unpack``: a single file as
    submission.py, never under its own name), the course's files kept out of its reach; a
    script's tests on ``executor`` (a Dask cluster's, as ``grade --cluster``), else here,
    ``on_test`` told of each in test order as it is judged."""
    with tempfile.TemporaryDirectory(prefix="grader-portal-") as folder:
        os.chmod(folder, 0o755)
        sub = unpack(filename, content, Path(folder), course.config.commands, course.config.entry)
        if isinstance(assignment.plan, RegressionFile):
            settings = regress_settings(course.config, assignment.limits)
            program = command_program(sub.folder) if sub.folder is not None else None
            student = grade_program(sub, assignment.plan, settings, course.private_files(), program)
            return gtp_feedback(student, assignment.plan, filename)
        result = grade_submission(sub, assignment.plan, course.settings(assignment), executor, on_test=on_test,
                                  private=course.private_files())  # fmt: skip
    return feedback(result, filename)


def grade_program(sub: Submission, tests: RegressionFile, settings: RegressSettings, private: list[Path],
                  program: ProtocolEngine | None = None) -> StudentRegress:  # fmt: skip
    """The student's program (``program``: started by the command the student named) on the
    file, as ``grader gradescope`` runs it; the result names the file by its name (never the
    course folder's path)."""
    student = regress_submission(sub, [tests.path], tests.game, settings, private, program)
    for result in student.results:
        result.file = tests.name
    return student


def gtp_feedback(student: StudentRegress, tests: RegressionFile, filename: str) -> Feedback:
    """What the student sees (``public_text``) and the staff's report (``grader report --full``);
    totals out of 100 as ``grader regress`` gives them."""
    student.name = filename
    result = student.results[0] if student.results else RegressResult(filename, tests.name)  # none: no program
    shown = [t for t in result.tests if tests.is_public(t.number)]
    public_total = sum(t.credit for t in shown if result.counts(t))
    public_symbols = "".join(t.symbol for t in shown)
    records: list[dict[str, Any]] = []  # each test as the portal shows a private one once released
    for t in result.tests:
        board, _, token = t.board.partition(" ")
        records.append({"index": t.number, "symbol": t.symbol, "credit": t.credit, "board": board, "token": token,
                        "diagnosis": t.note})  # fmt: skip
    head = f"{filename}: public tests {fmt_total(public_total)}/{len(tests.public)}  {public_symbols}"
    kept = {"tests": records, "student": student.to_json()}  # the whole result: for the downloads
    return Feedback(
        total=round(student.total, 2),
        max_total=100,
        symbols=result.symbols,
        public_symbols=public_symbols,
        public_total=public_total,
        student_text=public_text(student, tests, head),
        full_text=student_text(student, tests.game),
        records=json.dumps(kept),
        stopped=result.stopped or student.problem,
    )


def public_text(student: StudentRegress, tests: RegressionFile, head: str) -> str:
    """The student's feedback before release: ``head`` (the public tests' total), how many
    private tests there are, then each public test as ``grader report --student`` shows it
    (with the board of one judged wrong). Nothing of the private tests: no total, no symbol,
    and what the program said after the first of them cut (``student_view``)."""
    lines = [head]
    if tests.private:
        lines.append(f"{plural(len(tests.private), 'private test', 'private tests')}: results shown when the "
                     "instructor releases them")  # fmt: skip
    if student.problem:
        lines.append(student.problem)
    for result in student.results:
        why, viewed = student_view(result, tests.private)
        lines += [f"{result.file}: stopped {why}"] if why else []
        for t in viewed:
            if tests.is_public(t.number):
                lines.append(test_line(t))
                drawing = failed_board(t, tests.game)
                lines += [drawing] if drawing else []
    return "\n".join(lines)


def test_count(assignment: Assignment) -> int | None:
    """How many tests a grading of the assignment reports progress on: a script plan's; None
    for a GTP lab (its program answers the whole file in one run)."""
    return None if isinstance(assignment.plan, RegressionFile) else len(assignment.plan.positions)
