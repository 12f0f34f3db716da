"""Gomoku benchmark: the exact solver on the course's boards, and the grader's cost per GTP command.

Run: PYTHONPATH=. python bench/gomoku.py [--count 10] [--seed 1] [--commands 2000] [--skip-course]
Prints, CPU seconds on one core unless said (a fresh solver for each position, so no table is
shared between them; the C core when it is built, else the Python solver, as the grader runs):
  1. the empty 5x5 board (the course's test 160) and random 5x5 positions reached by legal play
     with 10 to 24 empty points, every move's value (target: at most 1 s each);
  2. random 7x7 endgames with 8, 12 and 16 empty points: value and every optimal move, median
     and max;
  3. the grader's cost per GTP command: a regression file of --commands commands run by
     'grader regress' against a GTP program that answers at once, against a bare loop that
     sends the same commands to the same program through pipes (target: at most 5 ms more);
  4. the course's 41-empty 7x7 positions (its public tests 180, 190 and 200), every move's
     value (target: at most 60 s each);
  5. the course's public file (tests/data/assignment2-public-tests.gtp) as a class's first run
     meets it: --programs programs answering every test (the empty 9x9 board of test 170 with
     a result, which the solver tries for regress.solve_seconds, --budget), wall seconds in all
     (target: at most 2 minutes), then a second run, which reads the solutions kept beside it;
  6. the empty boards of 6x6 to 9x9 (9x9 is test 170), each as far as the solver gets within
     --budget-empty seconds, and how many random 9x9 positions of 40 to 80 empty points it
     settles within --each-9 seconds.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
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

COURSE_FILE = Path(__file__).resolve().parents[1] / "tests" / "data" / "assignment2-public-tests.gtp"
COURSE_HARD = {  # the stones of the course's tests 180, 190 and 200 (black first, in turn); black to move
    180: "C3 A2 C4 G6 D4 A4 E3 G7",
    190: "C3 A1 C4 G6 D4 A4 E3 G7",
    200: "C3 A2 C4 G6 D4 A4 E3 G2",
}
# A correct program's answer to each solve and genmove test of the course's file, a result on 9x9
COURSE_ANSWERS = ["b", "b", "draw G5", "b A3", "A3", "draw G1", "b", "draw G3", "b C1", "C1", "b", "w B3", "B3",
                  "w D2", "D2", "draw A1", "b E5", "b C5", "b C2", "b G1"]  # fmt: skip
FIXED = """import json, sys
answers = iter(json.loads(sys.argv[1]))
for line in sys.stdin:
    w = line.split()
    n = w.pop(0) if w and w[0].isdigit() else ''
    text = next(answers) if w[:1] in (['solve'], ['genmove']) else ''
    print(f'={n} {text}'.rstrip() + '\\n', flush=True)
"""
ECHO = "import sys\nfor line in sys.stdin:\n    sys.stdout.write('=\\n\\n')\n    sys.stdout.flush()\n"


def every_move(pos) -> tuple[float, int, dict[int, int]]:
    """CPU seconds, nodes and every move's value, with a fresh solver."""
    solver = pos.game.solver("outcome")
    start = time.process_time()
    values = solver.move_values(pos)
    return time.process_time() - start, solver.nodes, values


def five_by_five(count: int, seed: int) -> None:
    five = GOMOKU.sized(5)
    seconds, nodes, values = every_move(five.start())
    print(f"5x5, the empty board (test 160): every move {sorted(set(values.values()))} in {seconds:.3f} s, "
          f"{nodes} nodes (target <= 1 s)")  # fmt: skip
    times = []
    for empties in range(10, 25, 2):
        for pos in five.random_positions(seed, range(empties, empties + 1), count):
            times.append(every_move(pos)[0])
    print(f"5x5, {len(times)} random positions of 10-24 empty points, every move: median {statistics.median(times):.4f} s, "
          f"max {max(times):.4f} s (target <= 1 s each)")  # fmt: skip


def endgames(empties: int, count: int, seed: int) -> list[float]:
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


def course_hard() -> None:
    for number, stones in COURSE_HARD.items():
        pos = GOMOKU.start()
        for p in stones.split():
            pos = pos.play(GOMOKU.parse_square(p))
        seconds, nodes, values = every_move(pos)
        wins = sorted(GOMOKU.square_name(m) for m, v in values.items() if v == 1)
        print(f"course test {number} (7x7, {pos.empties} empty points), every move: {len(wins)} win, "
              f"{sum(v == 0 for v in values.values())} draw, {sum(v < 0 for v in values.values())} lose, "
              f"C5 {values[GOMOKU.parse_square('C5')]:+d}, in {seconds:.2f} s, {nodes} nodes (target <= 60 s)")  # fmt: skip


def course_file(programs: int, budget: float, isolation: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        lab = Path(work) / "a2.gtp"
        shutil.copy(COURSE_FILE, lab)
        (Path(work) / "fixed.py").write_text(FIXED)
        program = ProtocolEngine.from_command(
            shlex.join([PYTHON, str(Path(work) / "fixed.py"), json.dumps(COURSE_ANSWERS)]), "gtp"
        )
        settings = RegressSettings(isolation=isolation, solve_seconds=budget)
        for run in ("first run", "second run"):
            start, cpu = time.perf_counter(), time.process_time()
            solutions = Solutions.load(lab, budget)
            solve_file(parse_regress(lab.read_text(), "a2"), GOMOKU, solutions, Stop())
            solutions.save(lab)
            results = [run_regress(program, lab, GOMOKU, settings, solutions=solutions) for _ in range(programs)]
            solutions.save(lab)
            unverified = sorted({t.number for r in results for t in r.tests if t.symbol == "v"})
            print(f"course file, {run}: {programs} programs in {time.perf_counter() - start:.1f} s "
                  f"(the grader's CPU {time.process_time() - cpu:.1f} s; target <= 120 s); "
                  f"{' '.join(r.symbols for r in results)}; unverified: tests "
                  f"{unverified or 'none'}; kept in {lab.name}{SUFFIX}: {lab.with_name(lab.name + SUFFIX).exists()}")  # fmt: skip


def empty_board(size: int, budget: float) -> None:
    rules = GOMOKU.sized(size)
    solver = rules.solver("outcome")
    start = time.process_time()
    solver.should_stop = lambda: time.process_time() - start > budget
    try:
        found = f"value {solver.value(rules.start()):+d}"
    except Stopped:
        found = "not settled"
    seconds = time.process_time() - start
    print(f"{size}x{size}, the empty board{' (test 170)' if size == 9 else ''}: {found} in {seconds:.1f} s, "
          f"{solver.nodes} nodes ({solver.nodes / max(seconds, 1e-9) / 1e6:.2f} M nodes/s; budget {budget:g} s)")  # fmt: skip


def nine_by_nine(each: float, count: int, seed: int) -> None:
    nine = GOMOKU.sized(9)
    for empties in range(40, 81, 10):
        settled, times = 0, []
        for pos in nine.random_positions(seed, range(empties, empties + 1), count):
            solver = nine.solver("outcome")
            begin = time.process_time()
            solver.should_stop = lambda: time.process_time() - begin > each
            try:
                solver.value(pos)
                settled += 1
            except Stopped:
                pass
            times.append(time.process_time() - begin)
        print(f"9x9, random positions of {empties} empty points: {settled} of {count} settled within {each:g} s "
              f"(median {statistics.median(times):.2f} s)")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10, help="positions per number of empties (default 10)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--commands", type=int, default=2000)
    ap.add_argument("--isolation", default="auto")
    ap.add_argument("--budget", type=float, default=30.0, help="regress.solve_seconds (default 30)")
    ap.add_argument("--budget-empty", type=float, default=120.0,
                    help="seconds on each empty board, 6x6 to 9x9 (default 120)")  # fmt: skip
    ap.add_argument("--each-9", type=float, default=10.0, help="seconds on each random 9x9 position (default 10)")
    ap.add_argument("--programs", type=int, default=3, help="programs run on the course's file (default 3)")
    ap.add_argument("--skip-course", action="store_true", help="leave out parts 4 to 6")
    args = ap.parse_args()
    print(f"solver: {GOMOKU.backend()} (grader.games.gomoku_native)")
    five_by_five(args.count, args.seed)
    for empties in (8, 12, 16):
        times = endgames(empties, args.count, args.seed)
        print(f"7x7, {empties} empty points, {len(times)} positions: median {statistics.median(times):.3f} s, "
              f"max {max(times):.3f} s (value and every optimal move)")  # fmt: skip
    harness, bare = gtp_cost(args.commands, args.isolation)
    print(f"GTP: {args.commands} commands, grader regress {harness * 1000:.3f} ms a command, bare pipe loop "
          f"{bare * 1000:.3f} ms; the grader's cost {(harness - bare) * 1000:.3f} ms a command "
          f"(target <= 5 ms: ratio {(harness - bare) * 1000 / 5:.2f}), its start and judging included")  # fmt: skip
    if not args.skip_course:
        course_hard()
        course_file(args.programs, args.budget, args.isolation)
        for size in (6, 7, 8, 9):
            empty_board(size, args.budget_empty)
        nine_by_nine(args.each_9, min(args.count, 4), args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
