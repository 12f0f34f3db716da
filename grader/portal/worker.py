"""Workers: threads of the server process that claim jobs from the queue and grade each
submission with the call ``grader grade`` makes (``grade_submission``, on the assignment's
plan and the settings ``grader.settings`` resolves; a GTP lab's with the call ``grader
gradescope`` makes, ``gtplab.grade_program``), then keep what each reader may see."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sqlalchemy.orm import Session, sessionmaker

from ..errors import GraderError
from ..grading import report
from ..grading.results import ScriptResult
from ..grading.run import grade_submission
from ..runs.text import fmt_total, plural
from . import gtplab
from .course import Assignment, Course
from .models import FAILED, GRADED, Job, Submission, now
from .queue import claim, finish, give_back
from .uploads import command_program, unpack

log = logging.getLogger("grader.portal")


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


def grade_upload(
    course: Course, assignment: Assignment, filename: str, content: bytes
) -> Feedback | gtplab.GtpFeedback:
    """Grade an upload as ``grader grade`` grades a student's script (``grader gradescope`` a GTP
    program): unpacked alone in a fresh folder (``uploads.unpack``: a single file as
    submission.py, never under its own name), the course's files kept out of its reach."""
    with tempfile.TemporaryDirectory(prefix="grader-portal-") as folder:
        os.chmod(folder, 0o755)
        sub = unpack(filename, content, Path(folder), course.config.commands, course.config.entry)
        if isinstance(assignment.plan, gtplab.RegressionFile):
            settings = gtplab.regress_settings(course.config, assignment.limits)
            program = command_program(sub.folder) if sub.folder is not None else None
            student = gtplab.grade_program(sub, assignment.plan, settings, course.private_files(), program)
            return gtplab.feedback(student, assignment.plan, filename)
        result = grade_submission(sub, assignment.plan, course.settings(assignment), private=course.private_files())
    return feedback(result, filename)


class Workers:
    """``count`` threads grading from the queue until ``stop``; ``wake`` after an upload."""

    def __init__(self, course: Course, make: sessionmaker[Session], count: int = 1, name: str = "portal",
                 on_graded: Callable[[str], object] | None = None):  # fmt: skip
        self.course, self.make, self.name = course, make, name
        self.on_graded = on_graded  # told each submission graded (the LTI tool sends its score)
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._loop, args=(i,), name=f"grader-worker-{i}", daemon=True)
                        for i in range(count)]  # fmt: skip

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        """Stop claiming; a grading under way ends with the process (its job is queued again at the next start)."""
        self.stopping.set()
        self.wake.set()

    def _loop(self, i: int) -> None:
        me = f"{self.name}-{os.getpid()}-{i}"
        while not self.stopping.is_set():
            try:
                worked = self.work_once(me)
            except Exception:  # a database gone for a moment: try again, never end the thread
                log.exception("worker %s", me)
                worked = False
            if not worked:
                self.wake.wait(1.0)
                self.wake.clear()

    def work_once(self, me: str) -> bool:
        """Claim one job and grade it; False when the queue was empty."""
        with self.make.begin() as session:
            job = claim(session, me)
            if job is None:
                return False
            job_id, sub_id = job.id, job.submission_id
            sub = session.get(Submission, sub_id)
            assert sub is not None
            filename, content, name = sub.filename, sub.content, sub.assignment
            rerun = sub.change_reason is not None
        assignment = self.course.assignments.get(name)
        try:
            if assignment is None:
                raise GraderError(f"the course has no assignment {name!r} any more")
            found: Feedback | gtplab.GtpFeedback | None = grade_upload(self.course, assignment, filename, content)
            error = None
        except GraderError as e:  # the grader's or the course's problem, never the student's: not counted
            found, error = None, str(e)
        except Exception as e:  # a bug of the grader's: the student is not charged for it either
            log.exception("grading %s", sub_id)
            found, error = None, f"the grader failed: {type(e).__name__}: {e}"
        with self.make.begin() as session:
            sub = session.get(Submission, sub_id)
            job = session.get(Job, job_id)
            assert sub is not None
            sub.graded_at = now()
            if found is not None:
                sub.status = GRADED
                sub.plan_digest = self.course.plan_digest(assignment) if assignment is not None else None
                for field in ("total", "max_total", "symbols", "public_symbols", "public_total", "student_text",
                              "full_text", "records", "stopped"):  # fmt: skip
                    setattr(sub, field, getattr(found, field))
            else:
                sub.status, sub.error = FAILED, error
                if not rerun:  # a rerun took none of the student's uploads
                    give_back(session, sub)
            if job is not None:
                finish(session, job)
        if found is not None and self.on_graded is not None:
            self.on_graded(sub_id)
        return True
