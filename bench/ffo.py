"""FFO endgame benchmark of the native solver: one line per position, then totals.

Run: python bench/ffo.py [--first 40] [--last 49] [--python 50] [--median20 21]
Each position (fixtures/ffo-endgames.txt, winner-takes-empties, as the suite's answers are)
gets a fresh solver; the value alone is searched first, then every optimal move (the grader's
own work on a test). Prints the value and best moves found, right or WRONG against the suite,
nodes, CPU seconds (time.process_time: the search is single-threaded) and nodes per second,
and the totals, beside Egaroucid's published node total for FFO #40-49 (about 538 M), and the
cost estimate the CLI's --max-seconds refuses by (grader.games.cost) against the real time.
--python N also solves N random boards of 12 empties with both backends (same analysis, fresh
solvers) and prints the speed-up; --median20 N prints the median time and nodes of N random
boards of 20 empties. Pin it to one core (taskset -c 1) for steady figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from grader.games import othello_native as native_solver
from grader.games.cost import estimate
from grader.games.native import HOW_TO_BUILD
from grader.games.othello import OTHELLO, PLAIN, WINNER_TAKES_EMPTIES, Position
from grader.grading.plans import read_boards

FFO = Path(__file__).resolve().parents[1] / "fixtures" / "ffo-endgames.txt"
EGAROUCID_40_49 = 538e6  # nodes, Egaroucid's published counts for FFO #40-49, summed


def analysis_seconds(pos: Position, backend: str) -> tuple[float, int, list[int]]:
    """CPU seconds and nodes of value + optimal moves with a fresh solver, and the answer."""
    solver = OTHELLO.solver(PLAIN, backend=backend)
    start = time.process_time()
    value = solver.value(pos)
    best = solver.optimal_moves(pos)
    return time.process_time() - start, solver.nodes, [value, *best]


def ffo(first: int, last: int) -> int:
    wanted = {f"FFO #{n}" for n in range(first, last + 1)}
    entries = [e for e in read_boards(FFO, OTHELLO) if e.label in wanted]
    total_nodes, total_seconds, total_estimate, wrong = 0, 0.0, 0.0, 0
    for e in entries:
        guess = estimate(OTHELLO, e.position.empties, "native").seconds
        solver = OTHELLO.solver(WINNER_TAKES_EMPTIES, backend="native")
        start = time.process_time()
        value = solver.value(e.position)
        best = solver.optimal_moves(e.position)
        seconds = time.process_time() - start
        right = value == e.score and best == sorted(e.best_moves or ())
        wrong += not right
        total_nodes += solver.nodes
        total_seconds += seconds
        total_estimate += guess
        moves = " ".join(OTHELLO.square_name(m) for m in best)
        print(f"{e.label:>8}: {e.position.empties} empties  {value:+3d} {moves:<8} {'right' if right else 'WRONG'}  "
              f"{solver.nodes / 1e6:8.1f} M nodes  {seconds:7.2f} s  "
              f"{solver.nodes / max(seconds, 1e-9) / 1e6:5.1f} M nodes/s  estimate {guess:6.2f} s", flush=True)  # fmt: skip
    print(f"total: {len(entries)} positions, {wrong} wrong, {total_nodes / 1e6:.1f} M nodes, {total_seconds:.1f} CPU s, "
          f"{total_nodes / max(total_seconds, 1e-9) / 1e6:.1f} M nodes/s"
          + (f"; Egaroucid's #40-49: {EGAROUCID_40_49 / 1e6:.0f} M nodes ({total_nodes / EGAROUCID_40_49:.2f}x)"
             if (first, last) == (40, 49) else ""))  # fmt: skip
    print(f"estimate: {total_estimate:.1f} s, {total_estimate / max(total_seconds, 1e-9):.2f}x the real time")
    return wrong


def versus_python(count: int) -> int:
    boards = OTHELLO.random_positions(12, range(12, 13), count)
    native_total = python_total = 0.0
    ratios, wrong = [], 0
    for pos in boards:
        n_s, _, n_answer = analysis_seconds(pos, "native")
        p_s, _, p_answer = analysis_seconds(pos, "python")
        wrong += n_answer != p_answer
        native_total += n_s
        python_total += p_s
        ratios.append(p_s / max(n_s, 1e-6))
    print(f"12 empties, {count} boards (value + optimal moves, fresh solvers): python {python_total:.2f} CPU s, "
          f"native {native_total:.3f} CPU s, {python_total / max(native_total, 1e-9):.0f}x in total, "
          f"{statistics.median(ratios):.0f}x median per board, {wrong} disagreements")  # fmt: skip
    return wrong


def median20(count: int) -> None:
    runs = [analysis_seconds(pos, "native")[:2] for pos in OTHELLO.random_positions(20, range(20, 21), count)]
    times, nodes = [r[0] for r in runs], [r[1] for r in runs]
    print(f"20 empties, {count} boards (value + optimal moves, fresh solvers): median {statistics.median(times):.3f} "
          f"CPU s, {statistics.median(nodes) / 1e6:.1f} M nodes, max {max(times):.3f} s")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--first", type=int, default=40)
    ap.add_argument("--last", type=int, default=49)
    ap.add_argument("--python", type=int, default=0, metavar="N", help="boards of 12 empties against Python")
    ap.add_argument("--median20", type=int, default=0, metavar="N", help="boards of 20 empties for the median")
    args = ap.parse_args()
    if not native_solver.available():
        sys.exit(f"the native solver is not built: {HOW_TO_BUILD}")
    wrong = ffo(args.first, args.last) if args.first <= args.last else 0
    if args.python:
        wrong += versus_python(args.python)
    if args.median20:
        median20(args.median20)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
