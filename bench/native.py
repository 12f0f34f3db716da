"""Native (C) solver benchmark against the pure-Python solver, FFO 40-44 and 16-empties boards.

Run: python bench/native.py [--seed 1] [--count 20] [--ffo PATH]
Prints (1) native vs pure Python on the same seeded random 12-empties boards, value plus
optimal moves, a fresh solver per board (target: at least 50x); (2) native nodes per second
on one core over the FFO solves (target: at least 10 M/s); (3) FFO 40-44 under
winner-takes-empties, value and best moves checked against the file, seconds each (target:
each right, each under 10 s); (4) seeded random 16-empties boards: median seconds for value
plus every optimal move.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from grader.board import Scoring, square_name
from grader.boards import random_position, read_boards
from grader.native_solver import NativeSolver, available, unavailable_reason
from grader.solver import Solver

FFO = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ffo-endgames.txt"


def solve(solver: Solver, pos) -> tuple[tuple[int, list[int]], float]:
    start = time.perf_counter()
    answer = (solver.value(pos), solver.optimal_moves(pos))
    return answer, time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--ffo", type=Path, default=FFO, help="FFO endgame file (default: shared/data)")
    args = ap.parse_args()
    if not available():
        print(f"native solver unavailable: {unavailable_reason()}")
        return 1
    print(f"Python {sys.version.split()[0]}; one thread; seed {args.seed}")

    rng = random.Random(f"{args.seed}-12")
    boards = [random_position(rng, 12) for _ in range(args.count)]
    py_time = c_time = 0.0
    same = True
    for pos in boards:
        py_answer, secs = solve(Solver(Scoring.PLAIN), pos)
        py_time += secs
        c_answer, secs = solve(NativeSolver(Scoring.PLAIN), pos)
        c_time += secs
        same &= py_answer == c_answer
    print(f"\n{args.count} random 12-empties boards, value + optimal moves, plain scoring, fresh solvers")
    print(f"  pure Python {py_time:7.3f} s   native {c_time:7.3f} s   ratio {py_time / c_time:6.0f}x "
          f"(target >= 50x)   answers {'identical' if same else 'DIFFER'}")

    nodes = secs_total = 0.0
    ffo_lines = []
    all_ok = True
    if args.ffo.exists():
        entries = [e for e in read_boards(args.ffo) if 40 <= int(e.label.split("#")[1]) <= 44]
        for e in entries:
            solver = NativeSolver(Scoring.WINNER_TAKES_EMPTIES)
            (value, best), secs = solve(solver, e.position)
            nodes += solver.nodes
            secs_total += secs
            ok = value == e.score and best == sorted(e.best_moves or ())
            all_ok &= ok and secs < 10
            names = ",".join(square_name(s) for s in best)
            ffo_lines.append(
                f"  {e.label:>7}  {e.position.empties} empties  value {value:+3d} (file {e.score:+3d})  "
                f"best {names:<6} {secs:6.2f} s  {solver.nodes / 1e6:7.1f} M nodes  {'ok' if ok else 'WRONG'}"
            )
    else:
        print(f"\nFFO file {args.ffo} not found: skipping FFO 40-44")

    if secs_total:
        print(f"\nnative speed over FFO 40-44: {nodes / secs_total / 1e6:.1f} M nodes/s on one core (target >= 10 M/s;"
              " nodes include the shallow ordering searches)")
        print("  reference, not measured here: Edax is known for 20-70 M nodes/s on one core")
        print("\nFFO 40-44, winner-takes-empties, value + optimal moves, a fresh solver each (target: right, < 10 s each)")
        print("\n".join(ffo_lines))
        print(f"  {'all right and under 10 s' if all_ok else 'NOT ALL RIGHT OR UNDER 10 s'}, {secs_total:.1f} s in all")

    rng = random.Random(f"{args.seed}-16")
    times = []
    for _ in range(args.count):
        pos = random_position(rng, 16)
        times.append(solve(NativeSolver(Scoring.PLAIN), pos)[1])
    print(f"\n{args.count} random 16-empties boards, value + optimal moves, plain scoring, fresh solvers")
    print(f"  median {statistics.median(times) * 1000:.1f} ms   max {max(times) * 1000:.1f} ms")
    return 0 if same and all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
