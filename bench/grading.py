"""Grading benchmark: the grader against a bare subprocess loop on the same tests, then a whole run.

Run: python bench/grading.py [--script submissions/negamax.py] [--seed 1] [--repeat 3] [--flood-only]

The 90 random tests of the standard plan (seed 1) are run at --jobs 1 by the grader and by
a bare loop of subprocess.run([python, script, board, token]) over the same positions, in
alternation, each --repeat times; the best time of each is kept. The ratio grader / bare is
what grading costs beyond running the script. Then where the grader's own time goes
(solving the exact answers, judging, starting and cleaning up each run), and the whole
100-test standard run at --jobs 2. Last, the cost of one spawn from the grader's own process
(after the runs: its solver tables and imports in memory): /bin/true started and reaped by a
bare subprocess.run, by the grader's start (the launcher, a test's limits, in one folder), by
a whole runner.run (a work folder made and removed, limits, cleanup), and by subprocess.run with a preexec_fn, as the
grader started scripts before (a full fork of the grader). Then how fast the grader reads a
flood of output: a script printing 48 MB of score lines (under the 64 MiB cap) read by the
grader, against a bare loop reading the same script's pipe.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grader import Limits, Plan, Settings, grade, standard_plan
from grader.engines import runner, spawn
from grader.engines.parse import parse_output
from grader.engines.sandbox import Sandbox
from grader.grading.judge import Answer, judge

ROOT = Path(__file__).resolve().parents[1]


def bare_loop(script: Path, plan: Plan) -> float:
    start = time.perf_counter()
    for pos in plan.positions:
        subprocess.run([sys.executable, str(script), pos.board_string(), pos.token], capture_output=True, check=False)
    return time.perf_counter() - start


def graded(script: Path, plan: Plan, jobs: int, isolation: str = "auto"):
    start = time.perf_counter()
    result = grade(script, plan, Settings(jobs=jobs, isolation=isolation))
    return time.perf_counter() - start, result


def median_ms(action, n: int = 200) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def grader_start(work: str) -> None:
    """/bin/true through the grader's start (the launcher, a test's limits), read and reaped."""
    proc = spawn.start(["/bin/true"], work, spawn.rlimits(Limits(), None), Sandbox("none"), stdin=False)
    proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    spawn.reap(proc.pid)
    proc.stdout.close(), proc.stderr.close()  # type: ignore[union-attr]


def spawn_costs() -> str:
    """One spawn of /bin/true from this process, in ms, four ways (see the docstring)."""
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    rss, peak = (int(status[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))
    bare = median_ms(lambda: subprocess.run(["/bin/true"], capture_output=True))
    work = tempfile.mkdtemp(prefix="bench-")
    ours = median_ms(lambda: grader_start(work))
    shutil.rmtree(work)
    whole = median_ms(lambda: runner.run(["/bin/true"], Limits(wall_seconds=5)))
    forked = median_ms(lambda: subprocess.run(["/bin/true"], capture_output=True, preexec_fn=lambda: None), 50)
    return (
        f"one spawn of /bin/true from the grader's process ({rss:.0f} MB resident, {peak:.0f} MB at its peak, {threading.active_count()} "
        f"threads, {os.path.basename(spawn.launcher()[-1])}):\n"
        f"    bare subprocess.run {bare:.2f} ms; the grader's start {ours:.2f} ms ({ours / bare:.2f}x); "
        f"a whole runner.run {whole:.2f} ms; subprocess.run with a preexec_fn (the fork before) {forked:.2f} ms"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", type=Path, default=ROOT / "submissions" / "negamax.py")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--flood-only", action="store_true", help="only the flood of output")
    args = ap.parse_args()

    full = standard_plan(args.seed)
    if args.flood_only:
        flood(full)
        return 0
    plan = Plan(full.positions[10:], args.seed, f"the 90 random tests of seed {args.seed}")
    # The bare loop isolates nothing: the grader is measured without isolation (its own cost)
    # and with the default, 'auto' (what isolation adds: see bench/isolation.py).
    bare, ours, isolated = [], [], []
    for _ in range(args.repeat):
        bare.append(bare_loop(args.script, plan))
        ours.append(graded(args.script, plan, 1, "none"))
        isolated.append(graded(args.script, plan, 1))
    best, result = min(ours, key=lambda o: o[0])
    best_isolated = min(w for w, _ in isolated)
    n = len(plan.positions)
    print(f"{args.script.name}, {plan.source}, --jobs 1, best of {args.repeat}:")
    print(f"  bare subprocess.run loop  {min(bare):6.2f} s  ({min(bare) / n * 1000:.1f} ms per test)")
    print(f"  grader, isolation none    {best:6.2f} s  ({best / n * 1000:.1f} ms per test)"
          f"  {result.total:g}/{result.max_total}")  # fmt: skip
    print(
        f"  ratio grader / bare       {best / min(bare):6.2f}x   (extra {(best - min(bare)) / n * 1000:.1f} ms per test)"
    )
    print(
        f"  grader, isolation auto    {best_isolated:6.2f} s  ({best_isolated / n * 1000:.1f} ms per test, "
        f"{best_isolated / min(bare):.2f}x the bare loop)"
    )

    solver = full.game.solver("plain")
    start = time.perf_counter()
    answers = [Answer.solve(solver, pos) for pos in plan.positions]
    solving = time.perf_counter() - start
    claims = [parse_output(t.run.stdout_tail) for t in result.tests]
    start = time.perf_counter()
    for pos, claim, answer in zip(plan.positions, claims, answers):
        judge(pos, claim, answer, solver)
    judging = time.perf_counter() - start
    script_wall = statistics.median(t.run.wall_seconds for t in result.tests)
    print("  where the grader's time goes, per test:")
    print(f"    exact answers (solved once per board)   {solving / n * 1000:6.2f} ms")
    print(f"    judging (line checks on a warm table)    {judging / n * 1000:6.2f} ms")
    print(f"    the script's own run, median             {script_wall * 1000:6.2f} ms")
    print(
        f"    the rest (pool, recording, reaping)      {(best - sum(t.run.wall_seconds for t in result.tests)) / n * 1000:6.2f} ms"
    )

    wall, whole = graded(args.script, full, jobs=2)
    print(f"whole standard run at --jobs 2: {wall:.2f} s, {whole.total:g}/{whole.max_total}")
    print(spawn_costs())
    flood(full)
    return 0


FLOOD = (
    "import sys\n"
    "line = ('score 12 34 56 78 90 ' * 10 + '\\n').encode()\n"
    "for _ in range({n} // (len(line) * 500)):\n"
    "    sys.stdout.buffer.write(line * 500)\n"
)
FLOOD_BYTES = 48 << 20
FLOOD_RUNS = 5


def flood(full: Plan) -> None:
    """A flood of output read by the grader and by a bare pipe loop: MB/s of each."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "flood.py"
        script.write_text(FLOOD.format(n=FLOOD_BYTES))
        plan = Plan(full.positions[:1], None, "one board")
        bare, ours = [], []
        for _ in range(FLOOD_RUNS):  # in alternation: a machine's load changes alike for both
            start = time.perf_counter()
            with subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE) as proc:
                assert proc.stdout is not None
                got = 0
                while chunk := os.read(proc.stdout.fileno(), 1 << 16):
                    got += len(chunk)
            bare.append(got / (time.perf_counter() - start))
            (t,) = grade(script, plan, Settings(jobs=1, isolation="none", limits=Limits(wall_seconds=60))).tests
            ours.append(t.run.stdout_bytes / t.run.wall_seconds)
    print(f"a flood of {FLOOD_BYTES / 1e6:.0f} MB of score lines, best of {FLOOD_RUNS}: bare pipe loop "
          f"{max(bare) / 1e6:.0f} MB/s, grader {max(ours) / 1e6:.0f} MB/s ({max(ours) / max(bare):.2f}x); "
          f"medians {statistics.median(bare) / 1e6:.0f} and {statistics.median(ours) / 1e6:.0f} MB/s")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
