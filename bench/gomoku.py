"""Gomoku benchmark: the solver on 7x7 endgames, and the grader's cost per GTP command.

Run: python bench/gomoku.py [--count 10] [--seed 1] [--commands 2000]
Prints, on one core:
  1. solve times (value and every optimal move, a fresh solver each) on random 7x7 endgames
     reached by legal play with 8, 12 and 16 empty points: median and max;
  2. the grader's cost per GTP command: a regression file of --commands commands run by
     'grader regress' against a GTP program that answers at once, against a bare loop that
     sends the same commands to the same program through pipes (no sandbox, no judging);
     the difference per command (the lab's target: at most 5 ms beyond the program's own time);
  3. the course's hard positions (the 7x7 boards of 41 empty points its public tests 180-200
     expect 'b C5' of): whether the solver settles each within --budget seconds (regress's
     solve_seconds), and how long it took; then how many of its moves threat proofs settle
     alone (what listing every winning move does first);
  4. the per-position cache: a file of those positions run by --programs programs (each
     answering 'b C5'), the first run (each position solved once, for every program) against
     a second run, which reads the solutions kept beside the file.
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

from grader.engines.programs import PYTHON, ProtocolEngine
from grader.games.gomoku import GOMOKU
from grader.regression.format import Command, parse_regress, write_regress
from grader.regression.judge import solve_file
from grader.regression.regress import run_regress
from grader.regression.results import RegressSettings
from grader.regression.solutions import SUFFIX, Solutions
from grader.stop import Stop, Stopped

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
            Command(
                0, "clear_board" if i % 50 == 0 else f"{i} play b A1", i if i % 50 else None, "" if i % 50 else None
            )
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


COURSE_HARD = {  # the stones of the course's tests 180, 190 and 200 (black first, in turn); black to move
    180: "C3 A2 C4 G6 D4 A4 E3 G7",
    190: "C3 A1 C4 G6 D4 A4 E3 G7",
    200: "C3 A2 C4 G6 D4 A4 E3 G2",
}
ANSWER = (
    "import sys\nfor line in sys.stdin:\n    w = line.split()\n    n = w[0] if w and w[0].isdigit() else ''\n"
    "    sys.stdout.write(f'={n} b C5\\n\\n' if 'solve' in w else f'={n}\\n\\n')\n    sys.stdout.flush()\n"
)


def hard_file(folder: Path) -> Path:
    lines = []
    for number, stones in COURSE_HARD.items():
        lines += ["timelimit 30", "boardsize 7", "clear_board"]
        lines += [f"play {'BW'[i % 2]} {p}" for i, p in enumerate(stones.split())]
        lines += [f"{number} solve", "#?[b C5]"]
    path = folder / "hard.gtp"
    path.write_text("\n".join(lines) + "\n")
    return path


def hard_positions(budget: float) -> None:
    for number, stones in COURSE_HARD.items():
        pos = GOMOKU.start()
        for p in stones.split():
            pos = pos.play(GOMOKU.parse_square(p))
        solver = GOMOKU.solver("outcome")
        start = time.process_time()
        solver.should_stop = lambda: time.process_time() - start > budget
        try:
            value = f"value {solver.value(pos):+d}"
            value += f", C5 {solver.move_value(pos, GOMOKU.parse_square('C5')):+d}"
        except Stopped:
            value = "not settled"
        print(f"course test {number} (7x7, {pos.empties} empty points): {value} in {time.process_time() - start:.3f} "
              f"CPU s, {solver.nodes} nodes (budget {budget:g} s)")  # fmt: skip
        start, nodes = time.process_time(), solver.nodes
        proven = [solver.proven_move_value(pos, m) for m in pos.moves()]
        print(f"  its moves by threat proofs alone: {proven.count(1)} proven winning, {proven.count(-1)} losing, "
              f"{proven.count(None)} left to the negamax, in {time.process_time() - start:.2f} CPU s, "
              f"{solver.nodes - nodes} nodes")  # fmt: skip


def cache_cost(programs: int, budget: float, isolation: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        answer = Path(work) / "answer.py"
        answer.write_text(ANSWER)
        lab = hard_file(Path(work))
        program = ProtocolEngine.from_command(shlex.join([PYTHON, str(answer)]), "gtp")
        settings = RegressSettings(isolation=isolation, solve_seconds=budget)
        for run in ("first run", "second run"):
            start = time.perf_counter()
            solutions = Solutions.load(lab, budget)
            solve_file(parse_regress(lab.read_text(), "hard"), GOMOKU, solutions, Stop())
            solutions.save(lab)
            results = [run_regress(program, lab, GOMOKU, settings, solutions=solutions) for _ in range(programs)]
            judged = sorted({t.judged_by for r in results for t in r.tests})
            print(f"cache, {run}: {len(COURSE_HARD)} hard positions, {programs} programs in "
                  f"{time.perf_counter() - start:.1f} s ({' '.join(r.symbols for r in results)}, judged by "
                  f"{' and '.join(judged)}); "
                  f"kept in {lab.name}{SUFFIX}: {lab.with_name(lab.name + SUFFIX).exists()}")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10, help="positions per number of empties (default 10)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--commands", type=int, default=2000)
    ap.add_argument("--isolation", default="auto")
    ap.add_argument("--budget", type=float, default=30.0, help="the solver's seconds a position (default 30)")
    ap.add_argument("--programs", type=int, default=3, help="programs run on the hard file (default 3)")
    ap.add_argument("--skip-hard", action="store_true", help="leave out parts 3 and 4")
    args = ap.parse_args()
    for empties in (8, 12, 16):
        times = solve_times(empties, args.count, args.seed)
        print(f"7x7, {empties} empty points, {len(times)} positions: median {statistics.median(times):.3f} s, "
              f"max {max(times):.3f} s (CPU, value and every optimal move)")  # fmt: skip
    harness, bare = gtp_cost(args.commands, args.isolation)
    print(f"GTP: {args.commands} commands, grader regress {harness * 1000:.3f} ms a command, bare pipe loop "
          f"{bare * 1000:.3f} ms; the grader's cost {(harness - bare) * 1000:.3f} ms a command "
          f"(target <= 5 ms: ratio {(harness - bare) * 1000 / 5:.2f}), its start and judging included")  # fmt: skip
    if not args.skip_hard:
        hard_positions(args.budget)
        cache_cost(args.programs, args.budget, args.isolation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
