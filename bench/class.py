"""Class benchmark: 40 copies of the bundled example submissions graded on the standard plan.

Run: python bench/class.py [--copies 40] [--jobs 2] [--seed 1] [--time-limit 10]
The class is a mix of correct, slow and broken scripts: of 40, 12 negamax, 6 each of
wrong_line, wrong_score and rule_of_thumb, 4 each of crash and illegal, 2 slow (which time
out on every test, hence the short default time limit). Prints the total time and the grader's own overhead
per test: (wall time x jobs - the scripts' own run time) / tests, i.e. the worker time not
spent running scripts.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from grader import Limits, Settings, grade_class, standard_plan

ROOT = Path(__file__).resolve().parents[1]
KINDS = ["negamax", "wrong_line", "wrong_score", "rule_of_thumb", "crash", "illegal", "slow"]
MIX = ["negamax"] * 12 + ["wrong_line", "wrong_score", "rule_of_thumb"] * 6 + ["crash", "illegal"] * 4 + ["slow"] * 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=1.0, help="per test (slow.py always times out)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="grader-bench-"))
    try:
        (work / "class").mkdir()
        for i, kind in zip(range(args.copies), itertools.cycle(MIX)):
            shutil.copy(ROOT / "submissions" / f"{kind}.py", work / "class" / f"student{i:02d}_{kind}.py")
        plan = standard_plan(args.seed)
        settings = Settings(limits=Limits(wall_seconds=args.time_limit), jobs=args.jobs)
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        results = grade_class([work / "class"], plan, settings, out=work / "run").results
        wall = time.perf_counter() - start
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        tests = sum(len(r.tests) for r in results)
        scripts = sum(r.script_seconds for r in results)
        own_cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
        timeouts = sum(r.timeouts for r in results)
        print(f"{args.copies} students x {len(plan.positions)} tests = {tests} tests at --jobs {args.jobs}, "
              f"time limit {args.time_limit:g} s ({timeouts} timeouts)")  # fmt: skip
        print(f"total {wall:.1f} s wall; scripts ran {scripts:.1f} s in all")
        print(
            f"grader overhead {(wall * args.jobs - scripts) / tests * 1000:.2f} ms per test of worker time; "
            f"grader's own CPU {own_cpu / tests * 1000:.2f} ms per test"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
