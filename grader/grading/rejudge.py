"""Re-judging a run folder: every verdict computed again from the recorded claims (score,
line, move, how the run ended) with today's rules and exact answers, no script run again."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engines.parse import Claim
from ..engines.runner import RunResult
from ..runs.changes import GradeChange, TestChange
from .exports import write_exports
from .results import ScriptResult, TestResult, stop_at, stopped_test
from .run import Run
from .runfolder import RunFolder


@dataclass
class Rejudged:
    """What ``rejudge`` did to a run folder."""

    folder: RunFolder
    results: list[ScriptResult]
    changes: list[GradeChange]  # students whose total changed
    tests_changed: int  # tests whose symbol changed (also where the total did not)
    tests: int  # tests re-judged
    adopted: bool  # the folder was written before records were sealed, and is sealed now
    skipped: int = 0  # records that could not be read (damaged), left out
    files: list[str] = field(default_factory=list)


def rejudge(path: str | Path, exports: bool = True) -> Rejudged:
    """Judge every recorded test of the run folder ``path`` again with the current rules,
    rewrite its records (sealed) and, unless ``exports`` is false, its exports. A folder from
    grader 0.1 (no seals) is adopted: it gets a key, and its records are sealed as rewritten."""
    folder = RunFolder.open(path, adopt_unsealed=True)
    adopted = folder.unsealed
    plan, settings = folder.plan, folder.settings()
    judging = Run(plan, settings, None)  # type: ignore[arg-type]  # judges only, with answers solved afresh
    before = {r.name: r for r in folder.results()} if not adopted else None
    old: dict[tuple[str, int], dict[str, Any]] = {}
    new: dict[tuple[str, int], TestResult] = {}
    skipped = 0
    for r in folder.current_records():
        try:
            test = _judge_again(judging, r)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            skipped += 1
            continue
        old[(r["student"], test.index)] = r
        new[(r["student"], test.index)] = test
    digests = {name: info["sha256"] for name, info in folder.meta["scripts"].items()}
    folder.replace_tests([(name, digests[name], test) for (name, _), test in sorted(new.items())])
    if settings.stop_on_error:
        _restop(folder, new, len(plan.positions))
    results = folder.results()

    changes, tests_changed = [], 0
    for result in results:
        moved = [
            TestChange(t.index, old[(result.name, t.index)].get("symbol", "?"), t.symbol, t.diagnosis)
            for t in result.tests
            if old[(result.name, t.index)].get("symbol") != t.symbol
        ]
        tests_changed += len(moved)
        was = (
            before[result.name].total
            if before
            else sum(float(old[k].get("credit", 0)) for k in old if k[0] == result.name)
        )
        if round(was, 6) != round(result.total, 6):
            changes.append(GradeChange(result.name, was, result.total, result.max_total, moved))
    done = Rejudged(folder, results, changes, tests_changed, len(new), adopted, skipped)
    if exports:
        done.files = write_exports(folder.path, results)
    return done


def _judge_again(judging: Run, r: dict[str, Any]) -> TestResult:
    """The record ``r`` judged with today's rules (KeyError, TypeError, ValueError when it
    is damaged or not of this plan)."""
    i = int(r["index"]) - 1
    if i < 0:
        raise ValueError("no such test")
    pos = judging.plan.positions[i]
    if r["board"] != pos.board_string() or r["token"] != pos.token:
        raise ValueError("not a test of this plan")
    known = {f.name for f in dataclasses.fields(RunResult)}
    run = RunResult(**{k: v for k, v in r["run"].items() if k in known})
    claim = Claim(**{**r["claim"], "line": tuple(r["claim"]["line"])})
    return judging.judge(i, run, claim)


def _restop(folder: RunFolder, tests: dict[tuple[str, int], TestResult], n: int) -> None:
    """Under --stop-on-error, each student stops at the first test that is now an error, if
    every test before it was recorded (else one of those, never run, might have stopped it)."""
    for name in folder.meta["scripts"]:
        first = next((i for i in range(1, n + 1) if (name, i) not in tests or tests[(name, i)].error), None)
        if first is not None and (name, first) in tests:
            folder.set_stopped(name, stop_at(tests[(name, first)]), first)
        elif stopped_test(folder.meta["scripts"][name].get("stopped")) is not None:
            folder.set_stopped(name, None, 0)  # no longer an error: the tests after it were never run
