"""Solver benchmark: seeded random endgames and FFO positions 1-19.

Run: python bench/solver.py [--count 20] [--empties 10,12,14] [--seed 1] [--no-ffo]
Prints median and max seconds and nodes per second for (a) value plus optimal moves and
(b) every move's value, per number of empties; then FFO 1-19 (winner-takes-empties):
seconds for each and whether value and best moves match the file.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from grader.games.othello import PLAIN, WINNER_TAKES_EMPTIES, random_position, square_name
from grader.games.othello_solver import OthelloSolver as Solver
from grader.plans import read_boards

FFO = Path(__file__).resolve().parents[1] / "fixtures" / "ffo-endgames.txt"


def timed(fn, solver: Solver) -> tuple[float, int]:
    nodes, start = solver.nodes, time.perf_counter()
    fn()
    return time.perf_counter() - start, solver.nodes - nodes


def summary(name: str, runs: list[tuple[float, int]]) -> str:
    secs = [s for s, _ in runs]
    nps = sum(n for _, n in runs) / max(sum(secs), 1e-9)
    return f"{name:<28} median {statistics.median(secs) * 1000:9.1f} ms   max {max(secs) * 1000:9.1f} ms   {nps / 1000:7.1f} knodes/s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--empties", default="10,12,14")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ffo", type=Path, default=FFO, help="FFO endgame file (default: fixtures/)")
    ap.add_argument("--no-ffo", action="store_true")
    args = ap.parse_args()

    print(f"Python {sys.version.split()[0]}; {args.count} random positions each, seed {args.seed}; plain scoring")
    for empties in (int(e) for e in args.empties.split(",")):
        rng = random.Random(f"{args.seed}-{empties}")
        positions = [random_position(rng, empties) for _ in range(args.count)]
        best, every = [], []
        for pos in positions:
            # A fresh solver per position: no help from earlier positions' tables.
            solver = Solver(PLAIN)
            best.append(timed(lambda: solver.optimal_moves(pos), solver))
            solver = Solver(PLAIN)
            every.append(timed(lambda: solver.move_values(pos), solver))
        print(summary(f"{empties} empties value+optimal", best))
        print(summary(f"{empties} empties every move", every))

    if args.no_ffo:
        return 0
    if not args.ffo.exists():
        print(f"FFO file {args.ffo} not found: skipping")
        return 0
    print("\nFFO 1-19, winner-takes-empties, value + optimal moves (fresh solver each)")
    entries = [e for e in read_boards(args.ffo) if int(e.label.split("#")[1]) <= 19]
    all_ok, total = True, 0.0
    for e in entries:
        solver = Solver(WINNER_TAKES_EMPTIES)
        start = time.perf_counter()
        value = solver.value(e.position)
        best = solver.optimal_moves(e.position)
        secs = time.perf_counter() - start
        total += secs
        ok = value == e.score and sorted(best) == sorted(e.best_moves or ())
        all_ok &= ok
        names = ",".join(square_name(s) for s in best)
        print(f"{e.label:>7}  {e.position.empties} empties  value {value:+3d}  best {names:<8} "
              f"{secs:7.2f} s  {solver.nodes / secs / 1000:6.1f} knodes/s  {'ok' if ok else 'WRONG'}")
    print(f"FFO 1-19: {'all correct' if all_ok else 'SOME WRONG'}, {total:.1f} s in all")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
