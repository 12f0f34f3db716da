"""Grading benchmark: the grader against a bare subprocess loop on the same tests, then a whole run.

Run: python bench/grading.py [--script submissions/negamax.py] [--seed 1] [--repeat 3] [--chunk 5] [--flood-only]

The 90 random tests of the standard plan (seed 1) are run at --jobs 1 by the grader (isolation
none, then auto) and by a bare loop of subprocess.run([python, script, board, token]) over the
same positions, interleaved in chunks of --chunk tests (each chunk graded on one executor kept
open, as a class run's is; the order turned each chunk), --repeat times over: a load that comes
and goes on a shared machine falls on all three alike. The ratio grader / bare is what grading
costs beyond running the script: the sums over every chunk, and the median of the chunks'
ratios. Then where the grader's own time goes (solving the exact answers, judging, starting and
cleaning up each run), and the whole 100-test standard run at --jobs 2. Last, the cost of one
spawn from the grader's own process (after the runs: its solver tables and imports in memory):
/bin/true started and reaped by a bare subprocess.run, by the grader's start (the launcher, a
test's limits, in one folder), by a whole runner.run (a work folder made and removed, limits,
cleanup; then on a job slot's thread, as a test's run: its cgroups joined once, its work
folders reused), and by subprocess.run with a preexec_fn, as the grader started scripts before
(a full fork of the grader); as root where bwrap works, a whole runner.run under bwrap on a job
slot (its resident sandbox) and off one (a bwrap per run). Then how fast the grader reads a
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

from grader import Limits, LocalExecutor, Plan, Settings, grade, standard_plan
from grader.engines import isolation, resident, runner, spawn
from grader.engines.parse import parse_output
from grader.engines.sandbox import Sandbox
from grader.grading.judge import Answer, judge

ROOT = Path(__file__).resolve().parents[1]


def bare_loop(script: Path, plan: Plan) -> float:
    start = time.perf_counter()
    for pos in plan.positions:
        subprocess.run([sys.executable, str(script), pos.board_string(), pos.token], capture_output=True, check=False)
    return time.perf_counter() - start


def graded(script: Path, plan: Plan, jobs: int, isolation: str = "auto", executor: LocalExecutor | None = None):
    start = time.perf_counter()
    result = grade(script, plan, Settings(jobs=jobs, isolation=isolation), executor=executor)
    return time.perf_counter() - start, result


def interleaved(script: Path, plan: Plan, chunk: int, repeat: int) -> dict[str, list]:
    """Seconds of each chunk of ``plan`` run bare, graded without isolation and graded with
    the default, in turn (``repeat`` passes); the 'none' chunks' results too."""
    times: dict[str, list] = {"bare": [], "none": [], "auto": [], "results": []}
    with LocalExecutor(1) as plain, LocalExecutor(1) as isolated:
        graded(script, Plan(plan.positions[:1], None, "warm-up"), 1, "none", plain)
        graded(script, Plan(plan.positions[:1], None, "warm-up"), 1, "auto", isolated)
        for n in range(repeat * ((len(plan.positions) + chunk - 1) // chunk)):
            first = (n * chunk) % len(plan.positions)
            part = Plan(plan.positions[first : first + chunk], None, "a chunk")
            order = ["bare", "none", "auto"] if n % 2 == 0 else ["auto", "none", "bare"]
            for name in order:
                if name == "bare":
                    times["bare"].append(bare_loop(script, part))
                    continue
                wall, result = graded(script, part, 1, name, plain if name == "none" else isolated)
                times[name].append(wall)
                if name == "none":
                    times["results"].append(result)
    return times


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
    slot: list[float] = []

    def in_a_slot() -> None:  # as a test's run: a job slot's thread, its work folders reused
        runner.dedicate_this_thread()
        folders = runner.WorkFolders()
        slot.append(median_ms(lambda: runner.run(["/bin/true"], Limits(wall_seconds=5), folders=folders)))
        folders.close()

    thread = threading.Thread(target=in_a_slot)
    thread.start()
    thread.join()
    forked = median_ms(lambda: subprocess.run(["/bin/true"], capture_output=True, preexec_fn=lambda: None), 50)
    return (
        f"one spawn of /bin/true from the grader's process ({rss:.0f} MB resident, {peak:.0f} MB at its peak, {threading.active_count()} "
        f"threads, {os.path.basename(spawn.launcher()[-1])}):\n"
        f"    bare subprocess.run {bare:.2f} ms; the grader's start {ours:.2f} ms ({ours / bare:.2f}x); "
        f"a whole runner.run {whole:.2f} ms ({slot[0]:.2f} ms on a job slot, as a test's); "
        f"subprocess.run with a preexec_fn (the fork before) {forked:.2f} ms"
        f"{bwrap_costs()}"
    )


def bwrap_costs() -> str:
    """As root where bwrap works: a whole runner.run of /bin/true under bwrap as a slot's uid, on
    a job slot (its resident sandbox, reused) and off one (a bwrap per run); '' elsewhere."""
    if os.geteuid() != 0 or isolation.problem("bwrap", sys.executable) is not None:
        return ""
    uid = isolation.claim_uid()
    sandbox, limits = Sandbox("bwrap", uid), Limits(wall_seconds=5, processes=10)
    slot: list[float] = []

    def in_a_slot() -> None:
        runner.dedicate_this_thread()
        runner.run(["/bin/true"], limits, sandbox=sandbox)  # its sandbox started
        slot.append(median_ms(lambda: runner.run(["/bin/true"], limits, sandbox=sandbox)))
        resident.close_this_thread()

    thread = threading.Thread(target=in_a_slot)
    thread.start()
    thread.join()
    per_run = median_ms(lambda: runner.run(["/bin/true"], limits, sandbox=sandbox), 50)
    isolation.release_uid(uid)
    return f"\n    under bwrap, a whole runner.run: {slot[0]:.2f} ms on a job slot (its resident sandbox), {per_run:.2f} ms off one (a bwrap per run)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", type=Path, default=ROOT / "submissions" / "negamax.py")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="passes over the tests (default 3)")
    ap.add_argument("--chunk", type=int, default=5, help="tests per chunk (default 5)")
    ap.add_argument("--flood-only", action="store_true", help="only the flood of output")
    args = ap.parse_args()

    full = standard_plan(args.seed)
    if args.flood_only:
        flood(full)
        return 0
    plan = Plan(full.positions[10:], args.seed, f"the 90 random tests of seed {args.seed}")
    # The bare loop isolates nothing: the grader is measured without isolation (its own cost)
    # and with the default, 'auto' (what isolation adds: see bench/isolation.py).
    times = interleaved(args.script, plan, args.chunk, args.repeat)
    bare, ours, isolated = (sum(times[k]) for k in ("bare", "none", "auto"))
    tests = [t for r in times["results"] for t in r.tests]
    n = len(tests)
    got = sum(r.total for r in times["results"]) / args.repeat
    per_chunk = statistics.median(o / b for o, b in zip(times["none"], times["bare"]))
    per_chunk_isolated = statistics.median(o / b for o, b in zip(times["auto"], times["bare"]))
    print(f"{args.script.name}, {plan.source}, --jobs 1, interleaved in chunks of {args.chunk} tests, "
          f"{args.repeat} passes ({n} tests each way):")  # fmt: skip
    print(f"  bare subprocess.run loop  {bare:6.2f} s  ({bare / n * 1000:.1f} ms per test)")
    print(f"  grader, isolation none    {ours:6.2f} s  ({ours / n * 1000:.1f} ms per test)"
          f"  {got:g}/{len(plan.positions)} a pass")  # fmt: skip
    print(f"  ratio grader / bare       {ours / bare:6.2f}x   (extra {(ours - bare) / n * 1000:.1f} ms per test; "
          f"median of the chunks' ratios {per_chunk:.2f}x)")  # fmt: skip
    print(
        f"  grader, isolation auto    {isolated:6.2f} s  ({isolated / n * 1000:.1f} ms per test, "
        f"{isolated / bare:.2f}x the bare loop; median of the chunks' ratios {per_chunk_isolated:.2f}x)"
    )

    solver = full.game.solver("plain")
    start = time.perf_counter()
    positions = [t.position for t in tests]
    answers = [Answer.solve(solver, pos) for pos in positions]
    solving = time.perf_counter() - start
    claims = [parse_output(t.run.stdout_tail) for t in tests]
    start = time.perf_counter()
    for pos, claim, answer in zip(positions, claims, answers):
        judge(pos, claim, answer, solver)
    judging = time.perf_counter() - start
    script_wall = statistics.median(t.run.wall_seconds for t in tests)
    print("  where the grader's time goes, per test:")
    print(f"    exact answers (solved once per board)   {solving / n * 1000:6.2f} ms")
    print(f"    judging (line checks on a warm table)    {judging / n * 1000:6.2f} ms")
    print(f"    the script's own run, median             {script_wall * 1000:6.2f} ms")
    print(
        f"    the rest (pool, recording, reaping)      {(ours - sum(t.run.wall_seconds for t in tests)) / n * 1000:6.2f} ms"
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
