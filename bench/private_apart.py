"""What running a GTP lab's private tests apart costs: one submission's program over a
regression file with public and private tests, run as one program, as two (public tests in
one, private in the other: how the portal and ``grader gradescope`` grade), and as a program
per test (``regress.per_test``).

Run: python bench/private_apart.py [--runs N] [--public K]
Prints each way's median and fastest wall time over N runs (interleaved, so load affects all
alike), for submissions/gomoku/solver.py on a file drawn by ``grader plan new --game gomoku``.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from grader.config import load_config
from grader.games.gomoku import GOMOKU
from grader.labs import new_tests
from grader.regression.regress import run_regress
from grader.regression.results import RegressSettings
from grader.regression.runs import student_program
from grader.runs.submissions import find_submission_folder

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "submissions" / "gomoku" / "solver.py"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--public", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        lab = Path(folder) / "lab.gtp"
        plan = new_tests(load_config(None), "gomoku", public=args.public)
        lab.write_text(plan.text())
        (Path(folder) / "sub").mkdir()
        shutil.copy(PROGRAM, Path(folder) / "sub" / "Gomoku.py")
        program = student_program(find_submission_folder(Path(folder) / "sub", set(), None))
        settings = RegressSettings()
        ways = {"one program": (settings, False), "public and private apart": (settings, True),
                "a program a test": (dataclasses.replace(settings, per_test=True), False)}  # fmt: skip
        run_regress(program, lab, GOMOKU, settings)  # solves the file's positions once, kept beside it
        times: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(args.runs):
            for way, (chosen, apart) in ways.items():
                started = time.perf_counter()
                run_regress(program, lab, GOMOKU, chosen, apart=apart)
                times[way].append(time.perf_counter() - started)
        tests = sum(c.number is not None for c in plan.commands())
        print(f"{PROGRAM.name} on {tests} tests ({args.public} public), {args.runs} runs each")
        for way, seconds in times.items():
            print(f"  {way:26} median {statistics.median(seconds):.2f} s, fastest {min(seconds):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
