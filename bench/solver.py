"""Solver benchmark: the native core against the pure-Python solver, in one run.

Run: PYTHONPATH=. python bench/solver.py [--count 20] [--seed 1] [--quick]
Prints, each on one core (the search is single-threaded):
  1. native vs python on the same 12-empties boards (value and every optimal move): the speed-up;
  2. native nodes per second (Edax, the reference engine: about 20-70 M nodes/s on one core);
  3. FFO #40-44 (20-24 empties) under winner-takes-empties: right or not, and the time each;
  4. random 16-empties boards: median and max time for the value and every optimal move.
--quick uses fewer boards (for a sanity check on a busy machine). Each board gets a fresh
solver, so no table is shared between boards.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from grader.games import othello_native as native_solver
from grader.games.native import HOW_TO_BUILD
from grader.games.othello import OTHELLO, PLAIN, WINNER_TAKES_EMPTIES
from grader.grading.plans import read_boards

FFO = Path(__file__).resolve().parents[1] / "fixtures" / "ffo-endgames.txt"
EDAX = "Edax: about 20-70 M nodes/s on one core"


def solve(pos, scoring: str, backend: str) -> tuple[float, int, int, list[int]]:
    """Seconds, nodes, value and optimal moves with a fresh solver."""
    solver = OTHELLO.solver(scoring, backend=backend)
    start = time.perf_counter()
    value, best = solver.value(pos), solver.optimal_moves(pos)
    return time.perf_counter() - start, solver.nodes, value, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=20, help="random boards per section (default 20)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="5 boards per section")
    args = ap.parse_args()
    if not native_solver.available():
        sys.exit(f"the native solver is not built: {HOW_TO_BUILD}")
    count = 5 if args.quick else args.count

    boards = OTHELLO.random_positions(args.seed, range(12, 13), count)
    py = [solve(p, PLAIN, "python") for p in boards]
    c = [solve(p, PLAIN, "native") for p in boards]
    assert all(a[2:] == b[2:] for a, b in zip(py, c)), "the backends disagree"
    py_s, c_s = sum(r[0] for r in py), sum(r[0] for r in c)
    print(
        f"1. 12 empties, {count} boards, value + optimal moves: python {py_s:.3f} s, native {c_s:.4f} s: "
        f"native {py_s / c_s:.0f}x faster (same values and moves)"
    )

    deeper = OTHELLO.random_positions(args.seed, range(18, 19), max(2, count // 4))
    runs = [solve(p, PLAIN, "native") for p in deeper]
    rate = sum(r[1] for r in runs) / sum(r[0] for r in runs)
    print(f"2. native speed at 18 empties ({len(deeper)} boards): {rate / 1e6:.1f} M nodes/s on one core ({EDAX})")

    if FFO.exists():
        entries = [e for e in read_boards(FFO, OTHELLO) if e.label in {f"FFO #{n}" for n in range(40, 45)}]
        print("3. FFO #40-44, winner-takes-empties, value + optimal moves:")
        for e in entries:
            seconds, nodes, value, best = solve(e.position, WINNER_TAKES_EMPTIES, "native")
            right = value == e.score and best == sorted(e.best_moves or ())
            print(
                f"   {e.label}: {e.position.empties} empties, {value:+d} {OTHELLO.moves_text(best)}  "
                f"{'right' if right else 'WRONG'}  {seconds:.2f} s  {nodes / seconds / 1e6:.1f} M nodes/s"
            )
    else:
        print(f"3. FFO: {FFO} not found")

    deep = OTHELLO.random_positions(args.seed, range(16, 17), count)
    times = sorted(solve(p, PLAIN, "native")[0] for p in deep)
    print(
        f"4. 16 empties, {count} random boards, value + every optimal move: median {statistics.median(times):.3f} s, "
        f"max {times[-1]:.3f} s"
    )


if __name__ == "__main__":
    main()
