"""Tic-tac-toe benchmark: the exhaustive plan (4,520 positions) and a proof, for the perfect example.

Run: python bench/tictactoe.py [--jobs N] [--skip-exhaustive]
Prints the exhaustive grading's wall time, the scripts' own time and the grader's overhead per
run (wall x jobs minus the scripts' time, over the runs), then 'prove --as both': positions
asked, wall time and the time per position.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from grader import Settings, grade, prove, standard_plan
from grader.engines.isolation import choose

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "submissions" / "tictactoe" / "minimax.py"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--skip-exhaustive", action="store_true")
    args = ap.parse_args()
    settings = Settings(jobs=args.jobs)
    print(f"{SCRIPT.name}, --jobs {args.jobs}, isolation {choose('auto', sys.executable)}")
    if not args.skip_exhaustive:
        plan = standard_plan(1, "tictactoe", "exhaustive")
        start = time.perf_counter()
        result = grade(SCRIPT, plan, settings)
        wall = time.perf_counter() - start
        scripts = result.script_seconds
        n = len(result.tests)
        print(f"exhaustive plan: {n} runs in {wall:.1f} s, {result.total:g}/{result.max_total}; "
              f"scripts {scripts / n * 1000:.1f} ms per run, grader overhead {(wall * args.jobs - scripts) / n * 1000:.1f} ms per run")  # fmt: skip
    start = time.perf_counter()
    proof = prove(SCRIPT, "tictactoe", settings=settings)
    wall = time.perf_counter() - start
    asked = sum(s.asked for s in proof.sides)
    print(f"prove --as both: {asked} positions ({', '.join(f'{s.side} {s.asked}' for s in proof.sides)}), each asked twice "
          f"(determinism), {wall:.1f} s, {wall / (2 * asked) * args.jobs * 1000:.1f} ms per run of worker time; "
          f"never loses: {all(s.never_loses for s in proof.sides)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
