"""An assignment's results for the instructor, as the grader's commands write them: Gradescope's
results.json for each student's counted submission (``grader gradescope``'s), the run folder
``grader grade class`` writes (run.json, tests.jsonl, plan.plan, its four exports; a GTP lab's:
the one ``grader regress`` writes for a class, regress.json, results.jsonl and its four exports),
streamed as a zip with the scripts and the run's key beside it (keys/RUN_ID.key: copied into
``$GRADER_KEYS``, ``grader report`` reads the folder), and the CSV Canvas or Moodle imports
(``grader export``'s), its grades after the late policy. All are rebuilt from what the portal
recorded: nothing is graded again."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...errors import GraderError
from ...grading import gradescope
from ...grading.exports import write_exports
from ...grading.plans import Plan
from ...grading.results import ScriptResult, TestResult
from ...grading.runfolder import RunFolder
from ...regression.gradescope import regress_results_json
from ...regression.results import StudentRegress
from ...regression.runs import RegressFolder, write_regress_exports
from ...runs import lms
from ...runs.folders import RecordFolder
from ...runs.seals import keys_dir
from ...runs.submissions import Submission
from ..database.db import DB_FILE, check_current, connect, sessions
from ..database.models import STUDENT, User
from ..uploads import unpack
from . import gtplab, policy
from .course import Assignment, Course, load_course
from .rubric import combined

CHUNK = 1 << 20  # bytes read from a file at a time into the zip


def safe_name(email: str) -> str:
    """A folder name for a student: their e-mail with anything but letters, digits and @._+- as _."""
    return re.sub(r"[^A-Za-z0-9@._+-]", "_", email).lstrip(".") or "student"


@dataclass(frozen=True)
class Counted:
    """A student's counted submission of an assignment (the latest or the best graded one, its
    old result while a rerun is under way), with its bytes."""

    email: str
    name: str
    submission: str
    filename: str
    sha256: str
    content: bytes
    records: str
    stopped: str | None
    plan_digest: str | None  # the plan it was graded on (None: graded before the portal kept it)
    hand: float | None = None  # its released hand grading's points (None: none)


def counted(session: Session, course: Course, assignment: Assignment) -> list[Counted]:
    """Each student's counted submission of ``assignment`` (``counts: latest`` or ``best``), by
    e-mail; students with none left out."""
    rows = [c for (_, name), c in policy.counted(session, course).items() if name == assignment.name]
    return [Counted(c.user.email, c.user.name, c.submission.id, c.submission.filename, c.submission.sha256,
                    c.submission.content, c.submission.records or "[]", c.submission.stopped,
                    c.submission.plan_digest, c.score.hand) for c in sorted(rows, key=lambda c: c.user.email)]  # fmt: skip


def on_older_plans(rows: list[Counted], digest: str) -> list[str]:
    """The students whose counted submission was graded on a plan the assignment has changed since."""
    return [c.email for c in rows if c.plan_digest is not None and c.plan_digest != digest]


def tests_of(c: Counted, assignment: Assignment) -> list[TestResult]:
    return [TestResult.from_record(r, assignment.plan.game) for r in json.loads(c.records)]


def script_result(c: Counted, assignment: Assignment) -> ScriptResult:
    """The submission's result as ``grader grade`` gave it, rebuilt from its recorded tests."""
    assert isinstance(assignment.plan, Plan), "a plan lab's"
    tests = tests_of(c, assignment)
    return ScriptResult(c.filename, assignment.plan, tests, sum(t.run.wall_seconds for t in tests), c.stopped,
                        name=c.email)  # fmt: skip


def not_kept(rows: list[Counted]) -> list[str]:
    """The students whose counted GTP program was graded before the portal kept its whole result."""
    return [c.email for c in rows if gtplab.recorded_student(c.records) is None]


def student_regress(c: Counted) -> StudentRegress:
    """A GTP program's result as ``grader gradescope`` gave it, named by the student's e-mail."""
    student = gtplab.recorded_student(c.records)
    assert student is not None, "kept (the portal refuses the downloads of results it did not keep)"
    student.name = c.email
    return student


def gradescope_json(assignment: Assignment, rows: list[Counted]) -> dict[str, Any]:
    """Each student's results.json, as ``grader gradescope`` writes it for their counted
    submission (a GTP lab's: on the assignment's regression file)."""
    students = []
    for c in rows:
        if isinstance(assignment.plan, gtplab.RegressionFile):
            student = student_regress(c)
            results = regress_results_json(student, [assignment.plan.public], gtplab.seconds(student))
        else:
            result = script_result(c, assignment)
            results = gradescope.results_json(result, result.seconds)
        if c.hand is not None:  # released hand grading: its points in the score, as policy.grade counts them
            results["score"] = combined(results["score"], c.hand, results.get("max_score"))
            results.setdefault("tests", []).append({"name": "Hand grading", "score": c.hand, "max_score": 0,
                                                    "output": "the rubric's items applied by staff (see the portal)",
                                                    "visibility": "after_published"})  # fmt: skip
        students.append({"email": c.email, "name": c.name, "submission": c.submission, "results": results})
    return {"assignment": assignment.name, "title": assignment.title, "students": students}


def unpacked(root: Path, course: Course, rows: list[Counted]) -> list[Submission]:
    """Each upload unpacked in ``root/submissions/EMAIL/`` as the workers unpack it (a single
    script as submission.py), named by the student's e-mail."""
    subs = []
    for c in rows:
        path = root / "submissions" / safe_name(c.email)  # an uploaded file name is never a path
        path.mkdir(parents=True)
        sub = unpack(c.filename, c.content, path, course.config.commands, course.config.entry)
        subs.append(dataclasses.replace(sub, name=c.email))
    return subs


def write_run_folder(root: Path, course: Course, assignment: Assignment, rows: list[Counted]) -> RecordFolder:
    """The run folder ``grade class`` writes for these submissions (a GTP lab's: the one
    ``grader regress`` writes for a class), at ``root/run``, the uploads beside it."""
    if isinstance(assignment.plan, gtplab.RegressionFile):
        return _regress_folder(root, course, assignment.plan, assignment, rows)
    plan, settings = assignment.plan, course.settings(assignment)
    folder = RunFolder.create(root / "run", plan, settings)
    folder.meta["backend_used"] = plan.game.backend(settings.backend)
    subs = unpacked(root, course, rows)
    digests = folder.register(subs, {c.email: c.sha256 for c in rows})
    for c in rows:
        tests = tests_of(c, assignment)
        for test in tests:
            folder.append(c.email, digests[c.email], test)
        folder.set_stopped(c.email, c.stopped, len(tests))
    write_exports(folder.path, folder.results())
    return folder


def _regress_folder(root: Path, course: Course, tests: gtplab.RegressionFile, assignment: Assignment,
                    rows: list[Counted]) -> RegressFolder:  # fmt: skip
    settings = gtplab.regress_settings(course.config, assignment.limits)
    folder = RegressFolder.create(root / "run", tests.game, [(tests.name, tests.text + "\n")], settings)
    students = {c.email: student_regress(c) for c in rows}
    subs = [dataclasses.replace(sub, problem=students[sub.name].problem) for sub in unpacked(root, course, rows)]
    digests = folder.register(subs, {c.email: c.sha256 for c in rows})
    for email, student in students.items():
        for result in student.results:
            folder.append(email, digests[email], 0, result)
    write_regress_exports(folder.path, folder.results(), folder.file_names, tests.game)
    return folder


class _Chunks(io.RawIOBase):
    """Where the zip is written: its bytes kept until taken (the zip is never whole in memory)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self.parts.append(bytes(b))
        return len(b)

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts.clear()
        return out


def run_zip(course: Course, assignment: Assignment, rows: list[Counted]) -> Iterator[bytes]:
    """The run folder and the scripts as a zip, yielded piece by piece as it is written."""
    with tempfile.TemporaryDirectory(prefix="grader-portal-run-") as tmp:
        root = Path(tmp)
        folder = write_run_folder(root, course, assignment, rows)
        key = keys_dir() / f"{folder.meta['run_id']}.key"  # made for this download: it goes with the zip
        (root / "keys").mkdir()
        key.replace(root / "keys" / key.name)
        out = _Chunks()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                with path.open("rb") as src, zf.open(f"{assignment.name}/{path.relative_to(root)}", "w") as dst:
                    while block := src.read(CHUNK):
                        dst.write(block)
                        yield out.take()
        yield out.take()


def lms_grades(session: Session, course: Course, assignment: Assignment) -> list[lms.RunGrade]:
    """Each student's counted submission of ``assignment`` as an LMS grade, by e-mail, as
    ``policy.grade`` gives it: its score after the late policy (late days, penalty, the
    student's extension), how the policy made it, and whether it is final."""
    out = []
    for c in sorted((c for (_, name), c in policy.counted(session, course).items() if name == assignment.name),
                    key=lambda c: c.user.email):  # fmt: skip
        g = c.grade
        out.append(lms.RunGrade(c.user.email, g.score.score or 0.0, float(g.score.max_total or 0), g.final,
                                g.not_final, g.why, g.score.total or 0.0))  # fmt: skip
    return out


def without_grade(session: Session, grades: list[lms.RunGrade]) -> list[str]:
    """The e-mail addresses of the portal's students without a grade among ``grades``."""
    graded = {g.name for g in grades}
    return [e for e in session.scalars(select(User.email).where(User.role == STUDENT).order_by(User.email))
            if e not in graded]  # fmt: skip


@dataclass(frozen=True)
class LmsGrades:
    """An assignment's grades as the CSV an LMS imports; for Canvas, the notes CSV beside it."""

    system: str  # canvas or moodle
    column: str
    csv: str
    notes: str | None
    unmatched: list[str]  # students of the portal the roster does not name (or names twice)
    not_final: list[lms.RunGrade]


def lms_export(session: Session, course: Course, assignment: Assignment, to: str,
               roster: lms.Roster | None = None, column: str | None = None) -> LmsGrades:  # fmt: skip
    """``assignment``'s grades after the late policy as the CSV Canvas or Moodle (``to``)
    imports, in the column ``column`` (default: its title). Canvas needs ``roster``, its
    gradebook export (it finds students by its IDs); Moodle finds them by e-mail address
    without one. A grade that is not final is left out (Canvas's cell empty, Moodle's row
    missing: each LMS leaves the grade as it is); a student without a grade keeps a row (an
    empty grade), in both."""
    name = column or assignment.title
    if roster is not None and roster.lms != to:
        raise GraderError(f"the roster is {roster.lms.capitalize()}'s: give the gradebook {to.capitalize()} exported")
    grades = lms_grades(session, course, assignment)
    if to == "canvas":
        if roster is None:
            raise GraderError(
                "Canvas finds students by its IDs: give its gradebook export (Grades > Export) as the roster"
            )
        made = lms.canvas_csv(grades, roster, name, final_only=True)
        return LmsGrades(to, name, made.text, lms.canvas_notes(grades, roster, name), made.unmatched, made.incomplete)
    made = lms.moodle_csv(grades, roster, name, ident="Email address", final_only=True,
                          absent=without_grade(session, grades))  # fmt: skip
    return LmsGrades(to, name, made.text, None, made.unmatched, made.incomplete)


def export_course_grades(folder: str | Path, to: str, assignment: str, database: str | None = None,
                         roster: str | Path | None = None, column: str | None = None) -> LmsGrades:  # fmt: skip
    """``grader export canvas|moodle --portal COURSE``: ``lms_export`` of the course's
    database (``database``, default its SQLite in COURSE/.portal/), which is only read."""
    course = load_course(folder)
    found = course.assignments.get(assignment)
    if found is None:
        raise GraderError(f"the course has no assignment {assignment!r}: give one of {', '.join(course.assignments)}")
    if database is None:
        path = course.folder / ".portal" / DB_FILE
        if not path.is_file():
            raise GraderError(f"no portal database at {path}: give --database URL, or start grader serve on the course")
        database = f"sqlite:///{path}"
    read = lms.roster_file(roster) if roster is not None else None
    engine = connect(database)
    try:
        check_current(engine)
        with sessions(engine)() as session:
            return lms_export(session, course, found, to, read, column)
    finally:
        engine.dispose()
