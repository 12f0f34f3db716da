"""What grading produces and runs with: the settings of a run, each student's submission,
each test's result and a whole script's; the bottom of the grading package (reports,
exports, run folders and the runs themselves build on it)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import asdict, dataclass
from typing import Any

from .. import settings as layers
from ..config import Config
from ..engines.parse import Claim
from ..engines.runner import RunResult
from ..engines.scripts import RunSettings
from ..errors import GraderError
from ..games import Game, Position
from ..games.cost import first_over, fix_hint
from ..games.solving import LineCheck
from ..limits import NOT_GIVEN
from ..runs.text import stderr_lines
from .judge import SYMBOLS, Verdict
from .plans import Plan

_KEEP_STDOUT = 600  # characters of stdout's tail kept in a test's record
_KEEP_STDERR = 1500


@dataclass(frozen=True)
class Settings(RunSettings):
    """How scripts are graded: the shared ``RunSettings`` (limits, isolation, python, commands,
    jobs, backend) and grading's own fields.

    - ``scoring``: the game's rule the answers are judged by; None: the lab's default for the game.
    - ``stop_on_error``: stop the run at the first script that cannot be run at all.
    - ``max_solve_seconds``: refuse a plan with a board the grader's solver would need longer for.
    """

    scoring: str | None = None
    stop_on_error: bool = False
    max_solve_seconds: float | None = 60.0

    @classmethod
    def from_config(cls, config: Config, **options: Any) -> Settings:
        """config.yaml's settings for its game, the ``options`` given (None: not given) winning:
        ``resolve`` before the plan is known, whose scoring and limits then apply where neither
        these options nor config.yaml set them (``on``)."""
        given = layers.given(**options)
        return layers.resolve(cls, given, layers.grading_layer(config, config.get_game()))

    @classmethod
    def resolve(cls, config: Config, game: Game, plan: Plan | None = None, time_limit: float | None = None,
                scoring: str | None = None, **options: Any) -> Settings:  # fmt: skip
        """The settings of a run, as every command and the portal take them (``grader.settings.resolve``):
        the options given (``time_limit``, ``scoring``, ``options``; None: not given) win, then
        the plan file's scoring and limits, then config.yaml (its scoring only for its own
        game), then the defaults; the scoring rule is the game's lab rule when none is set."""
        given = layers.given(time_limit=time_limit, scoring=scoring, **options)
        found = layers.resolve(cls, given, layers.plan_layer(plan.scoring if plan else None, plan.limits if plan else None),
                                 layers.grading_layer(config, game))  # fmt: skip
        return dataclasses.replace(found, scoring=game.scoring(found.scoring))

    def on(self, plan: Plan) -> Settings:
        """These settings as a run on ``plan`` uses them: what they were given wins, and what
        they leave unset (a library caller's ``Settings(jobs=2)``: scoring None, limits never
        given) is the plan's, else the game's lab rule and the defaults."""
        limits = plan.limits if self.limits is NOT_GIVEN and plan.limits else self.limits
        return dataclasses.replace(self, scoring=plan.game.scoring(self.scoring or plan.scoring), limits=limits)

    def check_plan(self, plan: Plan) -> None:
        """GraderError, before any script runs, when ``plan``'s game is graded over a protocol
        (GTP: 'grader regress'), or the grader cannot solve it with its backend, or would need
        more than ``max_solve_seconds`` for one of its boards."""
        game, budget = plan.game, self.max_solve_seconds
        if game.lab_protocol == "gtp":
            raise GraderError(f"{game.title} submissions speak GTP, not 'SCRIPT BOARD TOKEN': grade them with "
                              "'grader regress PROGRAM FILE.gtp' (a folder of students as PROGRAM grades a class; "
                              "'grader plan regress' writes the files)")  # fmt: skip
        over = first_over(plan.positions, game, game.backend(self.backend), budget)
        if over is not None and budget is not None:
            i, est = over
            raise GraderError(f"test {i + 1} has {est.empties} empties: the grader would need {est.describe()} to solve it, "
                              f"over max_solve_seconds ({budget:g} s in config.yaml): {fix_hint(game, est, budget)}, "
                              "or raise max_solve_seconds")  # fmt: skip


def settings_for(plan: Plan, settings: Settings | None = None) -> Settings:
    """The settings a run on ``plan`` uses: ``settings`` as given (``Settings.on``), or, without
    them, the plan's scoring and limits over the built-in defaults (``Settings.resolve``)."""
    if settings is None:
        return Settings.resolve(Config(), plan.game, plan)
    return settings.on(plan)


@dataclass(frozen=True)
class TestResult:
    """One test: the position, what the script did and printed, and the verdict."""

    index: int  # 1-based test number
    position: Position
    run: RunResult
    claim: Claim
    verdict: Verdict
    value: int
    optimal_moves: list[int]

    @property
    def symbol(self) -> str:
        return self.verdict.symbol

    @property
    def error(self) -> str | None:
        """Why this test failed outright (a crash, no move, an illegal move): --stop-on-error stops here."""
        return self.verdict.failure

    @property
    def illegal_move(self) -> bool:
        """The script printed a move, and it is not legal here."""
        return self.claim.move is not None and self.verdict.move_value is None

    @property
    def diagnosis(self) -> str:
        """The verdict's diagnosis, with how the run ended and, after a crash, the end of stderr."""
        parts = [self.verdict.diagnosis]
        if self.run.stopped_by_grader:
            parts.append(f"the script {self.run.describe()}")
        if self.run.crashed and self.run.stderr_tail.strip():
            parts.append("stderr ends: " + " | ".join(stderr_lines(self.run.stderr_tail, 3)))
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The record of the --json schema."""
        return {
            "index": self.index,
            "board": self.position.board_string(),
            "token": self.position.token,
            "empties": self.position.empties,
            "symbol": self.symbol,
            "credit": self.verdict.credit,
            "claimed_score": self.claim.score,
            "claimed_line": list(self.claim.line) if self.claim.has_score_line else None,
            "move": self.claim.move,
            "value": self.value,
            "optimal_moves": self.optimal_moves,
            "timed_out": self.run.timed_out,
            "crashed": self.run.crashed,
            "exit_code": self.run.exit_code,
            "seconds": round(self.run.wall_seconds, 4),
            "cpu_seconds": round(self.run.cpu_seconds, 4),
            "host": self.run.host,
            "diagnosis": self.diagnosis,
        }

    def record(self) -> dict[str, Any]:
        """Everything needed to rebuild this result (``from_record``): the JSON fields and details."""
        run = asdict(self.run)
        run["stdout_tail"] = run["stdout_tail"][-_KEEP_STDOUT:]
        run["stderr_tail"] = run["stderr_tail"][-_KEEP_STDERR:]
        return {**self.to_json(), "claim": asdict(self.claim), "run": run, "verdict": asdict(self.verdict)}

    @classmethod
    def from_record(cls, r: dict[str, Any], game: Game) -> TestResult:
        v = dict(r["verdict"])
        if v["line_check"] is not None:
            v["line_check"] = LineCheck(**v["line_check"])
        claim = dict(r["claim"], line=tuple(r["claim"]["line"]))
        return cls(
            r["index"],
            game.parse(r["board"], r["token"]),
            RunResult(**r["run"]),
            Claim(**claim),
            Verdict(**v),
            r["value"],
            r["optimal_moves"],
        )


@dataclass(frozen=True)
class Level:
    """One number of empties of a speed plan: how a script did on its boards."""

    empties: int
    tests: int  # boards with this many empties in the plan
    right: int  # of them answered with full credit, within the time limit
    median_seconds: float | None  # over the tests run (None: none run)

    @property
    def solved(self) -> bool:
        return self.tests > 0 and self.right == self.tests


@dataclass
class ScriptResult:
    """A whole run of one script (``tests`` in test order)."""

    script: str
    plan: Plan
    tests: list[TestResult]
    seconds: float
    stopped: str | None = None  # why the run stopped before the end, if it did
    interrupted: bool = False  # not graded to its end (Ctrl-C, SIGTERM): ``tests`` holds the tests that finished
    name: str = ""  # the student
    backend: str = ""  # the solver behind the exact answers
    not_graded: bool = False  # there was no script to run (``stopped`` says why: two scripts in a folder, say)
    game_hint: str | None = None  # why the script seems written for another game, as a sentence (``wrong_game``)

    @property
    def total(self) -> float:
        return sum(t.verdict.credit for t in self.tests)

    @property
    def max_total(self) -> int:
        return len(self.plan.positions)

    @property
    def complete(self) -> bool:
        """Graded to its end: every test judged, or stopped on purpose (--stop-on-error). An
        interrupted run's grade is not final, nor is a student's without a script to run."""
        return not self.interrupted and not self.not_graded

    @property
    def symbols(self) -> str:
        return "".join(t.symbol for t in self.tests)

    def counts(self) -> dict[str, int]:
        return {s: self.symbols.count(s) for s in SYMBOLS}

    @property
    def timeouts(self) -> int:
        return sum(t.run.timed_out for t in self.tests)

    @property
    def crashes(self) -> int:
        return sum(t.run.crashed for t in self.tests)

    @property
    def illegal_moves(self) -> int:
        """Tests whose move (the last integer printed) is not a legal move of the position."""
        return sum(t.illegal_move for t in self.tests)

    @property
    def script_seconds(self) -> float:
        """The time the script's runs took, added up."""
        return sum(t.run.wall_seconds for t in self.tests)

    @property
    def is_speed(self) -> bool:
        """Graded on a speed plan (a ladder of empties)."""
        return self.plan.empties is not None

    def levels(self) -> list[Level]:
        """A speed plan's ladder: each number of empties of the plan, fewest first, with the
        tests right (full credit, not timed out) and the median time of the tests run."""
        out = []
        for e in sorted({p.empties for p in self.plan.positions}):
            tests = [t for t in self.tests if t.position.empties == e]
            times = sorted(t.run.wall_seconds for t in tests)
            median = None if not times else (times[(len(times) - 1) // 2] + times[len(times) // 2]) / 2
            planned = sum(p.empties == e for p in self.plan.positions)
            right = sum(t.verdict.credit == 1 and not t.run.timed_out for t in tests)
            out.append(Level(e, planned, right, median))
        return out

    @property
    def deepest(self) -> int | None:
        """The headline of a speed plan: the most empties up to which every board of every
        level was right in time (None: the first level was not)."""
        best = None
        for level in self.levels():
            if not level.solved:
                break
            best = level.empties
        return best

    def to_json(self) -> dict[str, Any]:
        speed: dict[str, Any] = {}
        if self.is_speed:
            speed = {"deepest": self.deepest,
                     "levels": [dataclasses.asdict(lv) for lv in self.levels()]}  # fmt: skip
        return {
            "script": self.script,
            "name": self.name,
            "total": self.total,
            "max_total": self.max_total,
            "complete": self.complete,
            "symbols": self.symbols,
            "seed": self.plan.seed,
            "stopped": self.stopped,
            "game_hint": self.game_hint,
            "seconds": round(self.seconds, 3),
            "backend": self.backend,
            **speed,
            "tests": [t.to_json() for t in self.tests],
        }


def stop_at(test: TestResult) -> str:
    """Why a --stop-on-error run stopped, at ``test``: 'stopped at test N: reason'."""
    return f"stopped at test {test.index}: {test.error}"


def stopped_test(stopped: str | None) -> int | None:
    """The test a --stop-on-error run stopped at, read back from its ``stop_at`` message."""
    found = re.match(r"stopped at test (\d+):", stopped or "")
    return int(found.group(1)) if found else None
