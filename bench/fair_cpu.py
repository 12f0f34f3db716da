"""Fair CPU benchmark: how much a hog (tests/attacks/cpu_hog.py: 60 busy children, each in a
session of its own) slows the programs beside it, and the grader's peak memory under the
long-line attack (tests/attacks/long_line.py).

Run: python bench/fair_cpu.py [--rounds 1] [--repeat 3] [--skip-memory]

  opponent   a victim engine (tests/nboard/engine.py 'thinker': 0.05 s of CPU a move) against
             the hog, and against an honest engine making the same moves; --tc 10+0.1, --jobs 1
  bystander  two victims' games in a round-robin with the hog, and without it; --jobs 1
  classmate  negamax.py on 3 endgames of 10 empties in a class run with --jobs 2, beside the
             hog's script, and alone
  memory     two long-line engines, 4 games at --jobs 2: the grader's peak RSS, and the same
             with the line buffer unbounded (what the grader did before)

Each scenario runs alone and with the hog in turn, --repeat times; a ratio is the victim's
median move (or test) time with the hog over its median alone, the best run of each (the one
least disturbed by the rest of the machine). Fair CPU aims at 1.2 or less. Figures from a
loaded machine are noisy: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.engines import fairness
from grader.engines.programs import PYTHON, ProtocolEngine
from grader.limits import Limits
from grader.tournaments.tournament import Engine, TournamentSettings, run_tournament

ROOT = Path(__file__).resolve().parents[1]
HOG = ROOT / "tests" / "attacks" / "cpu_hog.py"
LONG_LINE = ROOT / "tests" / "attacks" / "long_line.py"
ENGINE = ROOT / "tests" / "nboard" / "engine.py"
NEAR_END = "f5f6e6f4g6d7c3c5d3g4c6c4e8g7f3c7h4b2g5h3"
HEAVY = [
    "ooooooo.xoxo..o.x.oxxoox.xxooxooooxoxxo.ox.ooxoooxxxxxo.ooooxxo.",
    "xo.oo.o..oooooooooxooo.oooxxxxooxoooxoxoxooxxo.oxo.xxo.oxooooo..",
    "..ox..xoxx.ooooo.xxoooooxoxxoo.oooxxxxxxxxooxx.xxxxxxxxx.oxo.oox",
]


def engine(folder: Path, source: Path, mode: str, name: str) -> Engine:
    copy = folder / f"{name}_{secrets.token_hex(4)}.py"
    shutil.copy(source, copy)
    return Engine(name, protocol=ProtocolEngine.from_command(f"{PYTHON} {copy} {mode}"))


def move_times(result, names: set[str], of: set[str]) -> list[float]:
    """The wall seconds of the moves of engines ``of`` in the games between ``names``."""
    out = []
    for g in result.games:
        if {g.black, g.white} != names:
            continue
        for i, (wall, _) in enumerate(g.move_times):
            if (g.black if i % 2 == 0 else g.white) in of:
                out.append(wall)
    return out


def settings() -> TournamentSettings:
    return TournamentSettings(limits=Limits(wall_seconds=5), jobs=1, tc=(10.0, 0.1))


def fresh(work: Path, name: str) -> Path:
    return work / f"{name}-{secrets.token_hex(4)}"


def opponent(work: Path, rounds: int) -> tuple[float, float, int]:
    victim = engine(work, ENGINE, "thinker", "victim")
    alone = run_tournament([victim, engine(work, ENGINE, "good", "hog")], settings=settings(), rounds=rounds,
                           openings=[NEAR_END] * rounds, out=fresh(work, "opponent-alone"))  # fmt: skip
    hogged = run_tournament([victim, engine(work, HOG, "nboard", "hog")], settings=settings(), rounds=rounds,
                            openings=[NEAR_END] * rounds, out=fresh(work, "opponent-hog"))  # fmt: skip
    a = move_times(alone, {"victim", "hog"}, {"victim"})
    h = move_times(hogged, {"victim", "hog"}, {"victim"})
    lost = sum(1 for g in hogged.games if g.forfeit == "victim")
    return statistics.median(a), statistics.median(h), lost


def bystander(work: Path, rounds: int) -> tuple[float, float, int]:
    a, b = engine(work, ENGINE, "thinker", "a"), engine(work, ENGINE, "thinker", "b")
    alone = run_tournament([a, b], settings=settings(), rounds=rounds, openings=[NEAR_END] * rounds,
                           out=fresh(work, "bystander-alone"))  # fmt: skip
    hogged = run_tournament([engine(work, HOG, "nboard", "hog"), a, b], settings=settings(), rounds=rounds,
                            openings=[NEAR_END] * rounds, out=fresh(work, "bystander-hog"))  # fmt: skip
    x = move_times(alone, {"a", "b"}, {"a", "b"})
    y = move_times(hogged, {"a", "b"}, {"a", "b"})
    lost = sum(1 for g in hogged.games if {g.black, g.white} == {"a", "b"} and g.forfeit)
    return statistics.median(x), statistics.median(y), lost


def classmate(work: Path) -> tuple[float, float, int]:
    boards = work / "b.txt"
    boards.write_text("".join(f"{b} x\n" for b in HEAVY))
    times = {}
    for name, with_hog in (("alone", False), ("beside", True)):
        folder = fresh(work, f"class-{name}")
        (folder / "victim").mkdir(parents=True)
        shutil.copy(ROOT / "submissions" / "negamax.py", folder / "victim" / "victim.py")
        if with_hog:
            (folder / "hog").mkdir()
            shutil.copy(HOG, folder / "hog" / "hog.py")
        run = fresh(work, f"run-{name}")
        subprocess.run([sys.executable, "-m", "grader", "grade", str(folder), "--boards", str(boards), "--out", str(run),
                        "--jobs", "2", "--time-limit", "10"], check=True, capture_output=True)  # fmt: skip
        records = [json.loads(line) for line in (run / "tests.jsonl").read_text().splitlines()]
        times[name] = [r for r in records if r["student"] == "victim"]
    wrong = sum(1 for r in times["beside"] if r["symbol"] != "+")
    return (statistics.median(r["seconds"] for r in times["alone"]),
            statistics.median(r["seconds"] for r in times["beside"]), wrong)  # fmt: skip


PEAK = """
import resource, sys
from grader.engines import runner
if sys.argv[1] == "unbounded":
    runner.LINE_BYTES = 2**62
from grader.cli import main
try:
    main(sys.argv[2:], standalone_mode=False)
finally:
    print("peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, file=sys.stderr)
"""


def memory(work: Path, bounded: bool) -> int:
    folder = work / ("mem-bounded" if bounded else "mem-unbounded")
    folder.mkdir()
    a, b = folder / "long_a.py", folder / "long_b.py"
    shutil.copy(LONG_LINE, a)
    shutil.copy(LONG_LINE, b)
    done = subprocess.run([sys.executable, "-c", PEAK, "bounded" if bounded else "unbounded", "tournament",
                           f"nboard:{PYTHON} {a}", f"nboard:{PYTHON} {b}", "--rounds", "2", "--jobs", "2",
                           "--time-limit", "30", "--out", str(folder / "t")], capture_output=True, text=True)  # fmt: skip
    peak = [line for line in done.stderr.splitlines() if line.startswith("peak ")]
    if not peak:
        raise SystemExit(f"the memory run failed: {done.stderr[-500:]}")
    return int(peak[-1].split()[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=1, help="openings per tournament (2 games each)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each scenario, alone and with the hog in turn")
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    print("fair CPU here:")
    for line in fairness.support().lines():
        print(f"  {line}")
    work = Path(tempfile.mkdtemp(prefix="grader-bench-fair-"))
    try:
        scenarios = {
            "opponent": lambda: opponent(work, args.rounds),
            "bystander": lambda: bystander(work, args.rounds),
            "classmate": lambda: classmate(work),
        }
        for name, scenario in scenarios.items():
            runs = [scenario() for _ in range(args.repeat)]
            alone, hogged = min(r[0] for r in runs), min(r[1] for r in runs)
            lost = sum(r[2] for r in runs)
            what = "tests not right" if name == "classmate" else "games lost by a victim"
            print(f"{name:<10} victim's median {alone:.3f} s alone, {hogged:.3f} s with the hog (best of "
                  f"{args.repeat}): {hogged / alone:.2f}x; {lost} {what} in all")  # fmt: skip
        if not args.skip_memory:
            print(f"memory     the grader's peak RSS, 2 long-line engines at --jobs 2: {memory(work, True)} MB "
                  f"(unbounded line buffer: {memory(work, False)} MB)")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
