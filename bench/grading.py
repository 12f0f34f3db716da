"""Grading benchmark: the grader's own overhead per test, and a whole standard run.

Run: python bench/grading.py [--script submissions/negamax.py] [--seed 1]
Overhead per test = (wall time of the run - the sum of the script runs' wall times) / tests,
measured at --jobs 1, where the runs do not overlap (judging a test overlaps the next run, so
the grader's own CPU time per test is printed too). Then the whole standard run at --jobs 2.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

from grader.board import Scoring
from grader.boards import standard_plan
from grader.grading import Settings, grade
from grader.solver import Solver

ROOT = Path(__file__).resolve().parents[1]


def timed_run(script: Path, seed: int, jobs: int):
    plan = standard_plan(seed)
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    result = grade(script, plan, Settings(jobs=jobs), Solver(Scoring.PLAIN))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    grader_cpu = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
    return result, wall, grader_cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", type=Path, default=ROOT / "submissions" / "negamax.py")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    result, wall, grader_cpu = timed_run(args.script, args.seed, jobs=1)
    n = len(result.tests)
    scripts = sum(t.run.wall_seconds for t in result.tests)
    print(f"{args.script.name}, standard plan seed {args.seed}: {result.total:g}/{result.max_total}")
    print(f"--jobs 1: {wall:.2f} s wall, scripts {scripts:.2f} s, grader overhead {(wall - scripts) / n * 1000:.2f} ms per test")
    print(f"          grader's own CPU (solving, judging, running the pool) {grader_cpu / n * 1000:.2f} ms per test")
    result, wall, _ = timed_run(args.script, args.seed, jobs=2)
    cpu = sum(t.run.cpu_seconds for t in result.tests)
    print(f"--jobs 2: whole standard run {wall:.2f} s wall ({cpu:.2f} s CPU in scripts), {result.total:g}/{result.max_total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
