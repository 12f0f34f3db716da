"""A GTP lab (Gomoku) as an assignment: its tests are a GoGui regression file in the course
folder, as ``grader gradescope --game gomoku --plan FILE`` takes it (``RegressionFile``), with
the settings and digest grading it depends on, and the records a graded program keeps
(grading it: ``grader.portal.jobs.grading``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...config import Config
from ...errors import GraderError
from ...files import read_lines
from ...games import Game
from ...limits import Limits
from ...regression.format import parse_regress, public_tests
from ...regression.plans import regress_game
from ...regression.results import RegressResult, RegressSettings, StudentRegress


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
