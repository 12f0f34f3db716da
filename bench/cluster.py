"""Cluster benchmark: a class of copies of submissions/negamax.py on the standard plan, graded
locally with --jobs 2 and on a `local:2` Dask cluster (2 worker processes of 1 thread), in one run.

Run: pip install "grader[cluster]"; python bench/cluster.py [--copies 20] [--seed 1] [--scaling]
Prints each run's wall time and the scripts' own time, the cluster's extra cost per test
(worker time not spent running scripts, cluster minus local: the goal is under 15 ms), the
client's CPU per test (it judges and records every test), with --scaling the speedup of
local:2 over local:1, and a paper estimate for 500 students on 10 workers of 8 cores.
The cluster's start (about 2-5 s) is not counted: it happens once per run, not per test.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader import Settings, grade_class, standard_plan  # noqa: E402
from grader.grading.plans import Plan  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(klass: Path, out: Path, plan: Plan, executor=None) -> dict[str, float]:
    settings = Settings(jobs=2)
    cpu0, start = cpu(), time.perf_counter()
    results = grade_class([klass], plan, settings, out=out, executor=executor, exports=False).results
    wall = time.perf_counter() - start
    tests = sum(len(r.tests) for r in results)
    assert all(r.total == len(plan.positions) for r in results), "negamax.py lost points"
    return {"wall": wall, "scripts": sum(r.script_seconds for r in results), "tests": tests, "cpu": cpu() - cpu0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tests", type=int, default=100, help="the first N tests of the standard plan")
    ap.add_argument("--scaling", action="store_true", help="also run on local:1, for the speedup of 2 workers")
    args = ap.parse_args()
    from grader.execution.cluster import DaskExecutor, quiet

    full = standard_plan(args.seed)
    plan = Plan(full.positions[: args.tests], full.seed, full.source)
    work = Path(tempfile.mkdtemp(prefix="grader-bench-"))
    try:
        (work / "class").mkdir()
        for i in range(args.copies):
            shutil.copy(ROOT / "submissions" / "negamax.py", work / "class" / f"student{i:02d}.py")
        figures = {"local --jobs 2": run(work / "class", work / "local", plan)}
        for n in [1, 2] if args.scaling else [2]:
            ex = DaskExecutor.connect(f"local:{n}")
            quiet()
            figures[f"local:{n} cluster"] = run(work / "class", work / f"cluster{n}", plan, ex)
        for name, f in figures.items():
            print(f"{name:>16}: {f['tests']:.0f} tests in {f['wall']:.1f} s wall, scripts {f['scripts']:.1f} s, "
                  f"client CPU {f['cpu'] / f['tests'] * 1000:.2f} ms per test")  # fmt: skip
        local, cluster = figures["local --jobs 2"], figures["local:2 cluster"]
        per_test_local = (local["wall"] * 2 - local["scripts"]) / local["tests"]
        per_test_cluster = (cluster["wall"] * 2 - cluster["scripts"]) / cluster["tests"]
        extra = per_test_cluster - per_test_local
        print(f"overhead per test (worker time not running scripts): local {per_test_local * 1000:.1f} ms, "
              f"cluster {per_test_cluster * 1000:.1f} ms: the cluster's extra cost {extra * 1000:.1f} ms per test "
              f"(goal < 15 ms)")  # fmt: skip
        if args.scaling:
            one = figures["local:1 cluster"]
            print(f"scaling: local:1 {one['wall']:.1f} s, local:2 {cluster['wall']:.1f} s: "
                  f"speedup {one['wall'] / cluster['wall']:.2f} with 2 workers (2 cores, shared)")  # fmt: skip
        script = cluster["scripts"] / cluster["tests"]
        client = cluster["cpu"] / cluster["tests"]
        tests, cores = 500 * 100, 10 * 8
        workers_bound = tests * (script + max(per_test_cluster, 0)) / cores
        client_bound = tests * client
        print(f"paper estimate, 500 students x 100 tests on 10 workers x 8 cores: {tests * script / 3600:.1f} h of "
              f"scripts ({script * 1000:.0f} ms a test) over {cores} cores = {workers_bound / 60:.1f} min; the "
              f"client judges and records at {client * 1000:.2f} ms a test = {client_bound / 60:.1f} min of one core; "
              f"about {max(workers_bound, client_bound) / 60:.0f} min in all")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
