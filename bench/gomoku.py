"""Gomoku benchmark: the solver on 7x7 endgames, and the grader's cost per GTP command.

Run: python bench/gomoku.py [--count 10] [--seed 1] [--commands 2000]
Prints, on one core:
  1. solve times (value and every optimal move, a fresh solver each) on random 7x7 endgames
     reached by legal play with 8, 12 and 16 empty points: median and max;
  2. the grader's cost per GTP command: a regression file of --commands commands run by
     'grader regress' against a GTP program that answers at once, against a bare loop that
     sends the same commands to the same program through pipes (no sandbox, no judging);
     the difference per command (the lab's target: at most 5 ms beyond the program's own time).
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.engines.players import PYTHON, ProtocolEngine
from grader.games.gomoku import GOMOKU
from grader.regression.regress import Command, RegressSettings, run_regress, write_regress

ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write('=\\n\\n')\n    sys.stdout.flush()\n"


def solve_times(empties: int, count: int, seed: int) -> list[float]:
    out = []
    for pos in GOMOKU.random_positions(seed, range(empties, empties + 1), count):
        solver = GOMOKU.solver("outcome")
        start = time.process_time()
        solver.value(pos)
        solver.optimal_moves(pos)
        out.append(time.process_time() - start)
    return out


def gtp_cost(commands: int, isolation: str) -> tuple[float, float]:
    """Seconds per command through 'grader regress', and through a bare pipe loop."""
    with tempfile.TemporaryDirectory() as work:
        echo = Path(work) / "echo.py"
        echo.write_text(ECHO)
        lines = [
            Command(0, "clear_board" if i % 50 == 0 else f"{i} play b A1", i if i % 50 else None)
            for i in range(commands)
        ]
        (Path(work) / "f.gtp").write_text(write_regress(lines))
        program = ProtocolEngine.from_command(shlex.join([PYTHON, str(echo)]), "gtp")
        settings = RegressSettings(isolation=isolation)
        start = time.perf_counter()
        run_regress(program, Path(work) / "f.gtp", GOMOKU, settings)
        harness = (time.perf_counter() - start) / commands
        proc = subprocess.Popen(
            [sys.executable, str(echo)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        start = time.perf_counter()
        for line in lines:
            proc.stdin.write(line.text + "\n")
            proc.stdout.readline()
            proc.stdout.readline()
        bare = (time.perf_counter() - start) / commands
        proc.kill()
        proc.wait()
    return harness, bare


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10, help="positions per number of empties (default 10)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--commands", type=int, default=2000)
    ap.add_argument("--isolation", default="auto")
    args = ap.parse_args()
    for empties in (8, 12, 16):
        times = solve_times(empties, args.count, args.seed)
        print(f"7x7, {empties} empty points, {len(times)} positions: median {statistics.median(times):.3f} s, "
              f"max {max(times):.3f} s (CPU, value and every optimal move)")  # fmt: skip
    harness, bare = gtp_cost(args.commands, args.isolation)
    print(f"GTP: {args.commands} commands, grader regress {harness * 1000:.3f} ms a command, bare pipe loop "
          f"{bare * 1000:.3f} ms; the grader's cost {(harness - bare) * 1000:.3f} ms a command "
          f"(target <= 5 ms: ratio {(harness - bare) * 1000 / 5:.2f}), its start and judging included")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
