"""A GTP lab (Gomoku) as an assignment: its tests are a GoGui regression file in the course
folder, as ``grader gradescope --game gomoku --plan FILE`` takes it, and a student's program is
run on it by the same call (``regress_submission``). The tests the file names as public
(``# grader: public tests``) are shown in full; the others only by their symbol, with what the
program said after the first of them cut as Gradescope's results cut it (``student_text``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..engines.programs import ProtocolEngine
from ..errors import GraderError
from ..files import read_lines
from ..games import Game
from ..limits import Limits
from ..regression.regress import (
    RegressResult,
    RegressSettings,
    StudentRegress,
    parse_regress,
    public_tests,
    regress_game,
)
from ..regression.runs import failed_board, regress_submission, student_text, student_view, test_line
from ..runs.submissions import Submission
from ..runs.text import fmt_total, plural


@dataclass(frozen=True)
class RegressionFile:
    """A GTP lab's tests: the regression file, its game, its tests' numbers and the public ones."""

    path: Path
    game: Game
    numbers: tuple[int, ...]
    public: frozenset[int]
    text: str

    @property
    def name(self) -> str:
        return self.path.name

    def is_public(self, number: int) -> bool:
        return number in self.public

    @property
    def private(self) -> frozenset[int]:
        return frozenset(self.numbers) - self.public


def load_regression(path: Path, config: Config, game_name: str) -> RegressionFile:
    """The regression file at ``path`` (GraderError naming the file, the line and the fix); a
    file that does not name its public tests has none (as Gradescope shows it)."""
    if not path.is_file():
        raise GraderError(f"no regression file '{path.name}' in the course folder: write it with 'grader plan regress'")
    text = "\n".join(read_lines(path, "regression file"))
    game = regress_game(game_name, config, [path])
    commands = parse_regress(text, path.name, game)
    numbers = tuple(c.number for c in commands if c.number is not None)
    shown = public_tests(text)
    return RegressionFile(path, game, numbers, frozenset() if shown is None else shown & set(numbers), text)


def regress_settings(config: Config, limits: Limits | None) -> RegressSettings:
    """The settings ``grader regress`` resolves from config.yaml, the assignment's limits first."""
    return RegressSettings.resolve(config, limits=limits)  # None: not given


def digest(tests: RegressionFile, settings: RegressSettings) -> str:
    """What grading depends on (the file's text, the credits, which tests count, the limits), as a SHA-256."""
    what = {"file": tests.text, "unknown": settings.unknown_credit, "unverified": settings.unverified_credit,
            "count": settings.count, "per_test": settings.per_test, "limits": str(settings.limits)}  # fmt: skip
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def grade_program(sub: Submission, tests: RegressionFile, settings: RegressSettings, private: list[Path],
                  program: ProtocolEngine | None = None) -> StudentRegress:  # fmt: skip
    """The student's program (``program``: started by the command the student named) on the
    file, as ``grader gradescope`` runs it; the result names the file by its name (never the
    course folder's path)."""
    student = regress_submission(sub, [tests.path], tests.game, settings, private, program)
    for result in student.results:
        result.file = tests.name
    return student


@dataclass(frozen=True)
class GtpFeedback:
    """What the portal keeps of a graded GTP program (the fields of a plan lab's ``Feedback``)."""

    total: float
    max_total: int
    symbols: str
    public_symbols: str
    public_total: float
    student_text: str
    full_text: str
    records: str
    stopped: str | None


def feedback(student: StudentRegress, tests: RegressionFile, filename: str) -> GtpFeedback:
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
    return GtpFeedback(
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


def test_records(records: str) -> list[dict[str, Any]]:
    """Each test's record as a page shows a released private test (a GTP lab's records keep
    them beside the whole result; a plan lab's, and a GTP lab's graded before, are that list)."""
    data = json.loads(records)
    return list(data["tests"]) if isinstance(data, dict) else list(data)


def recorded_student(records: str) -> StudentRegress | None:
    """The program's whole result as graded (``StudentRegress``), None for a submission graded
    before the portal kept it."""
    data = json.loads(records)
    if not isinstance(data, dict) or "student" not in data:
        return None
    found = data["student"]
    return StudentRegress(found["name"], found["program"], [RegressResult.from_json(r) for r in found["files"]],
                          found["problem"])  # fmt: skip


def seconds(student: StudentRegress) -> float:
    """The time its tests took, as Gradescope's execution_time counts it."""
    return sum(t.seconds for r in student.results for t in r.tests)


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
