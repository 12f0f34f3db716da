"""A grading run: every test of a plan run on a script, judged, in test order."""

from __future__ import annotations

import os
import shlex
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .board import Position, Scoring
from .boards import Plan
from .errors import GraderError
from .judge import SYMBOLS, Verdict, judge
from . import runner
from .parse import Claim, OutputScanner
from .runner import Limits, RunResult
from .solver import Solver


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


@dataclass
class ScriptResult:
    """A whole run of one script."""

    script: str
    plan: Plan
    tests: list[TestResult]
    seconds: float
    stopped: str | None = None  # why the run stopped before the end, if it did
    interrupted: bool = False  # stopped by Ctrl-C: ``tests`` holds the tests that finished

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

    def to_json(self) -> dict[str, Any]:
        return {
            "script": self.script,
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
    command = command_for(script, settings)
    solver = solver or Solver(settings.scoring)
    start = time.monotonic()
    results: dict[int, TestResult] = {}
    delivered = 0
    stopped = None
    interrupted = False
    cancel = threading.Event()
    pool = ThreadPoolExecutor(max_workers=max(1, settings.jobs))
    futures: dict[Future, int] = {
        pool.submit(_unless_cancelled, cancel, run_test, command, pos, settings): i
        for i, pos in enumerate(plan.positions)
    }
    pending = set(futures)

    def collect(done: set[Future]) -> None:
        for fut in done:
            outcome = fut.result() if not fut.cancelled() else None
            if outcome is None or outcome[0].interrupted:
                continue  # never ran, or stopped by Ctrl-C: not a verdict on the script
            i = futures[fut]
            pos = plan.positions[i]
            run_result, claim = outcome
            verdict = judge(pos, claim, solver)
            results[i] = TestResult(i + 1, pos, run_result, claim, verdict, solver.value(pos), solver.optimal_moves(pos))

    try:
        while pending and stopped is None:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            collect(done)
            while delivered in results and stopped is None:
                test = results[delivered]
                delivered += 1
                if on_result:
                    on_result(test)
                if settings.stop_on_error and test.error:
                    stopped = f"stopped at test {test.index}: {test.error}"
    except KeyboardInterrupt:
        interrupted, stopped = True, "interrupted (Ctrl-C)"
        runner.kill_all()
    finally:
        cancel.set()
        for fut in pending:
            fut.cancel()
        pool.shutdown(wait=True)
    if interrupted:
        collect(pending)  # tests that finished while we were stopping
        tests = [results[i] for i in sorted(results)]
    else:
        tests = [results[i] for i in range(delivered)]
    return ScriptResult(str(script), plan, tests, time.monotonic() - start, stopped, interrupted)


def _unless_cancelled(cancel: threading.Event, fn, *args):
    """Skip a test whose run was cancelled before it started."""
    return None if cancel.is_set() else fn(*args)
