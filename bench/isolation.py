"""Isolation benchmark: the cost per test of each mechanism against 'none', in one run.

Run: python bench/isolation.py [--script submissions/negamax.py] [--tests 60] [--repeat 3]

The same tests (the first random boards of the standard plan, seed 1) are graded at --jobs 1
under each mechanism that works here, in alternation, each --repeat times; the best time of
each is kept. 'uid' runs with /usr/bin/python3 (the slot's uid cannot reach every Python), so
it is compared with 'none' under that same Python.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from grader import Plan, Settings, grade, standard_plan
from grader.engines.isolation import MECHANISMS, problem

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = "/usr/bin/python3"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", type=Path, default=ROOT / "submissions" / "negamax.py")
    ap.add_argument("--tests", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    plan = Plan(standard_plan(1).positions[10 : 10 + args.tests], 1, "random boards of seed 1")
    cases = [("none", sys.executable)]
    for m in MECHANISMS:
        python = SYSTEM_PYTHON if m == "uid" else sys.executable
        why = problem(m, python)
        if why:
            print(f"{m}: skipped ({why})")
        else:
            cases.append((m, python))
    if any(m == "uid" for m, _ in cases):
        cases.append(("none", SYSTEM_PYTHON))
    best: dict[tuple[str, str], float] = {}
    for _ in range(args.repeat):
        for mechanism, python in cases:
            start = time.perf_counter()
            result = grade(args.script, plan, Settings(jobs=1, isolation=mechanism, python=python))
            wall = time.perf_counter() - start
            assert result.total == len(plan.positions), (mechanism, result.symbols)
            best[(mechanism, python)] = min(wall, best.get((mechanism, python), wall))
    n = len(plan.positions)
    print(f"{args.script.name}, {n} tests at --jobs 1, best of {args.repeat}, running as "
          f"{'root' if os.geteuid() == 0 else 'uid ' + str(os.geteuid())}:")  # fmt: skip
    for (mechanism, python), wall in best.items():
        base = best[("none", python)]
        extra = (wall - base) / n * 1000
        print(f"  {mechanism:<8} {python:<45} {wall / n * 1000:6.1f} ms per test  ({extra:+5.1f} ms against none)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
