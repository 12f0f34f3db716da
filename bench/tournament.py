"""Tournament benchmark: a round-robin of the three bundled engines.

Run: python bench/tournament.py [--rounds 4] [--jobs 2] [--seed 1]
Prints games per minute and the harness's own overhead per move: the worker time (wall x
jobs) not spent inside engine runs, divided by the engine moves played.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from grader import Limits, Settings, TournamentSettings, run_tournament

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    engines = [str(ROOT / "submissions" / f"{n}.py") for n in ("negamax", "greedy", "random_mover")]
    settings = TournamentSettings(Settings(limits=Limits(wall_seconds=10), jobs=args.jobs))
    with tempfile.TemporaryDirectory() as work:
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        result = run_tournament(engines, settings=settings, rounds=args.rounds, seed=args.seed, out=Path(work) / "t")
        wall = time.perf_counter() - start
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    played = result.games
    moves = sum(len(g.move_times) for g in played)
    engine_wall = sum(w for g in played for w, _ in g.move_times)
    own_cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    print(f"{len(played)} games ({args.rounds} rounds, 3 engines) at --jobs {args.jobs}: {wall:.1f} s, "
          f"{len(played) / wall * 60:.1f} games per minute, {moves} engine moves")  # fmt: skip
    print(f"harness overhead {(wall * args.jobs - engine_wall) / moves * 1000:.2f} ms per move of worker time; "
          f"harness CPU {own_cpu / moves * 1000:.2f} ms per move")
    for s in result.standings:
        elo = "n/a" if s.elo is None else f"{s.elo:+.0f}"
        print(f"  {s.engine:<13} {s.points:>4g}/{s.games}  Elo {elo}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
