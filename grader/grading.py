"""A grading run: every test of a plan run on one or many scripts, judged, results in test order."""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import runner
from .board import Position, Scoring
from .boards import Plan
from .errors import GraderError
from .judge import SYMBOLS, Verdict, judge
from .parse import Claim, OutputScanner
from .runner import Limits, RunResult
from .solver import LineCheck, Solver

_KEEP_STDOUT = 600  # characters of stdout's tail kept in a test's record
_KEEP_STDERR = 1500


@dataclass(frozen=True)
class Settings:
    """How scripts are run and judged."""

    limits: Limits = Limits()
    isolation: str = "none"
    jobs: int = 2
    scoring: Scoring = Scoring.PLAIN
    python: str = sys.executable
    commands: dict[str, str] = field(default_factory=dict)  # file suffix -> command template
    stop_on_error: bool = False


@dataclass(frozen=True)
class Submission:
    """One student's script. ``path`` is None when no single script could be chosen."""

    name: str
    path: Path | None
    problem: str | None = None  # why there is no script to grade

    @property
    def sha256(self) -> str | None:
        """Content hash of the script (None without one): a changed script is graded again."""
        if self.path is None:
            return None
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


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
        """Why this test counts as an error for --stop-on-error (bad move or a crash)."""
        if self.verdict.failure:
            return self.verdict.failure
        return self.run.describe() if self.run.crashed else None

    @property
    def diagnosis(self) -> str:
        """The verdict's diagnosis, with how the run ended and the end of stderr if it failed."""
        parts = [self.verdict.diagnosis]
        ended = self.run.describe()
        if ended:
            parts.append(f"the script {ended}")
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
            "exit_code": self.run.exit_code,
            "seconds": round(self.run.wall_seconds, 4),
            "cpu_seconds": round(self.run.cpu_seconds, 4),
            "diagnosis": self.diagnosis,
        }

    def record(self) -> dict[str, Any]:
        """Everything needed to rebuild this result (``from_record``): the JSON fields and details."""
        run = asdict(self.run)
        run["stdout_tail"] = run["stdout_tail"][-_KEEP_STDOUT:]
        run["stderr_tail"] = run["stderr_tail"][-_KEEP_STDERR:]
        return {**self.to_json(), "claim": asdict(self.claim), "run": run, "verdict": asdict(self.verdict)}

    @classmethod
    def from_record(cls, r: dict[str, Any]) -> TestResult:
        v = dict(r["verdict"])
        if v["line_check"] is not None:
            v["line_check"] = LineCheck(**v["line_check"])
        claim = dict(r["claim"], line=tuple(r["claim"]["line"]))
        return cls(
            r["index"],
            Position.from_string(r["board"], r["token"]),
            RunResult(**r["run"]),
            Claim(**claim),
            Verdict(**v),
            r["value"],
            r["optimal_moves"],
        )


@dataclass
class ScriptResult:
    """A whole run of one script (``tests`` in test order)."""

    script: str
    plan: Plan
    tests: list[TestResult]
    seconds: float
    stopped: str | None = None  # why the run stopped before the end, if it did
    interrupted: bool = False  # stopped by Ctrl-C: ``tests`` holds the tests that finished
    name: str = ""  # the student

    @property
    def total(self) -> float:
        return sum(t.verdict.credit for t in self.tests)

    @property
    def max_total(self) -> int:
        return len(self.plan.positions)

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
    def script_seconds(self) -> float:
        """The time the script's runs took, added up."""
        return sum(t.run.wall_seconds for t in self.tests)

    def to_json(self) -> dict[str, Any]:
        return {
            "script": self.script,
            "name": self.name,
            "total": self.total,
            "max_total": self.max_total,
            "symbols": self.symbols,
            "seed": self.plan.seed,
            "stopped": self.stopped,
            "seconds": round(self.seconds, 3),
            "tests": [t.to_json() for t in self.tests],
        }


def stderr_lines(text: str, n: int) -> list[str]:
    return [ln.strip() for ln in text.strip().splitlines() if ln.strip()][-n:]


def command_for(script: str | Path, settings: Settings) -> list[str]:
    """The command that runs ``script``, with '{board}' and '{token}' left to fill in."""
    path = Path(script)
    if not path.is_file():
        raise GraderError(f"script '{script}' not found: give the path of a script file")
    path = path.resolve()
    template = settings.commands.get(path.suffix.lower())
    if template:
        fields = {"script": str(path), "dir": str(path.parent), "stem": path.stem}
        return [part.format(board="{board}", token="{token}", **fields) for part in shlex.split(template)]
    if path.suffix.lower() == ".py":
        return [settings.python, str(path), "{board}", "{token}"]
    if os.access(path, os.X_OK):
        return [str(path), "{board}", "{token}"]
    raise GraderError(
        f"cannot run '{script}': make it executable (chmod +x) or add a command template for "
        f"'{path.suffix or 'files without a suffix'}' under 'commands' in config.yaml"
    )


def run_test(command: list[str], pos: Position, settings: Settings) -> tuple[RunResult, Claim]:
    """Run the script on one position; return how it ran and what it claimed."""
    argv = [part.replace("{board}", pos.board_string()).replace("{token}", pos.token) for part in command]
    scanner = OutputScanner()
    result = runner.run(argv, settings.limits, scanner.feed, settings.isolation)
    return result, scanner.claim()


def grade(
    script: str | Path,
    plan: Plan,
    settings: Settings,
    solver: Solver | None = None,
    on_result: Callable[[TestResult], None] | None = None,
) -> ScriptResult:
    """Run every test of ``plan`` on ``script``; ``on_result`` sees each result in test order."""
    command_for(script, settings)  # a missing or unrunnable script is the user's error here
    path = Path(script)
    sub = Submission(path.stem, path)
    (result,) = grade_many(
        [sub], plan, settings, solver, on_test=(lambda _, t: on_result(t)) if on_result else None
    )
    result.script = str(script)
    return result


class _Progress:
    """One script's tests in a run: results so far, in-order delivery, stopping."""

    def __init__(self, sub: Submission, plan: Plan):
        self.sub, self.plan = sub, plan
        self.results: dict[int, TestResult] = {}
        self.delivered = 0
        self.running = 0
        self.stopped: str | None = sub.problem
        self.cancel = threading.Event()
        self.reported = False
        self.start = time.monotonic()

    def deliver(self, on_test, stop_on_error: bool) -> None:
        while self.delivered in self.results and not self.cancel.is_set():
            test = self.results[self.delivered]
            self.delivered += 1
            if on_test:
                on_test(self.sub, test)
            if stop_on_error and test.error and not self.stopped:
                self.stopped = f"stopped at test {test.index}: {test.error}"
                self.cancel.set()
                break

    def finished(self) -> bool:
        return self.running == 0 and (self.stopped is not None or self.delivered == len(self.plan.positions))

    def result(self, interrupted: bool = False) -> ScriptResult:
        if interrupted:
            tests = [self.results[i] for i in sorted(self.results)]
        else:
            tests = [self.results[i] for i in range(self.delivered)]
        script = str(self.sub.path) if self.sub.path else ""
        return ScriptResult(script, self.plan, tests, time.monotonic() - self.start, self.stopped, interrupted, self.sub.name)


def grade_many(
    submissions: list[Submission],
    plan: Plan,
    settings: Settings,
    solver: Solver | None = None,
    previous: dict[tuple[str, int], TestResult] | None = None,
    on_test: Callable[[Submission, TestResult], None] | None = None,
    on_record: Callable[[Submission, TestResult], None] | None = None,
    on_script: Callable[[ScriptResult], None] | None = None,
) -> list[ScriptResult]:
    """Grade every submission on the same plan, all tests sharing one pool of ``settings.jobs``.

    ``previous`` holds results already recorded (resume): those tests are not run again.
    ``on_record`` sees each new result as soon as it is judged; ``on_test`` sees each
    script's results in test order; ``on_script`` sees each script's result when it is done.
    """
    solver = solver or Solver(settings.scoring)
    previous = previous or {}
    progress = [_Progress(sub, plan) for sub in submissions]
    pool = ThreadPoolExecutor(max_workers=max(1, settings.jobs))
    futures: dict[Future, tuple[_Progress, int]] = {}
    for p in progress:
        if p.sub.path is None:
            continue
        try:
            command = command_for(p.sub.path, settings)
        except GraderError as e:
            p.stopped = str(e)
            continue
        for i, pos in enumerate(plan.positions):
            if (p.sub.name, i + 1) in previous:
                p.results[i] = previous[(p.sub.name, i + 1)]
            else:
                p.running += 1
                futures[pool.submit(_unless_cancelled, p.cancel, run_test, command, pos, settings)] = (p, i)

    def settle(p: _Progress) -> None:
        p.deliver(on_test, settings.stop_on_error)
        if p.finished() and not p.reported:
            p.reported = True
            if on_script:
                on_script(p.result())

    collected: set[Future] = set()

    def collect(done: set[Future]) -> None:
        for fut in done - collected:
            collected.add(fut)
            p, i = futures[fut]
            p.running -= 1
            outcome = None if fut.cancelled() or p.stopped else fut.result()
            if outcome is not None and not outcome[0].interrupted:  # else: not wanted, never ran, or Ctrl-C
                pos = plan.positions[i]
                run_result, claim = outcome
                verdict = judge(pos, claim, solver)
                test = TestResult(i + 1, pos, run_result, claim, verdict, solver.value(pos), solver.optimal_moves(pos))
                p.results[i] = test
                if on_record:
                    on_record(p.sub, test)

    interrupted = False
    pending = set(futures)
    try:
        for p in progress:
            settle(p)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            collect(done)
            for p in {futures[f][0] for f in done}:
                settle(p)
                if p.cancel.is_set():
                    for f in [f for f in pending if futures[f][0] is p and f.cancel()]:
                        pending.discard(f)
                        collected.add(f)
                        p.running -= 1
                    settle(p)
    except KeyboardInterrupt:
        interrupted = True
        runner.kill_all()
    finally:
        for p in progress:
            p.cancel.set()
        for f in pending:
            f.cancel()
        pool.shutdown(wait=True)
    if interrupted:
        collect({f for f in futures if f.done()})  # tests that finished while we were stopping
        for p in progress:
            p.stopped = p.stopped or "interrupted (Ctrl-C)"
        return [p.result(interrupted=True) for p in progress]
    return [p.result() for p in progress]


def _unless_cancelled(cancel: threading.Event, fn, *args):
    """Skip a test whose run was cancelled before it started."""
    return None if cancel.is_set() else fn(*args)
