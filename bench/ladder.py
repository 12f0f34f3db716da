"""Ladder benchmark: the maximum likelihood ratings of a class's ladder and the planner's choice.

Run: python bench/ladder.py [--engines 30 60 100 150] [--games 40] [--seed 1]
Each engine plays about --games games against random others, results drawn from known Elos
(spread over 800 points, a quarter of the games drawn where the score allows). Prints, per
class size, the time of elofit.fit_ratings (fit and error bars), the largest error of a
rating against the truth in standard errors, and the time of ladder.plan_pairs picking the
next 10 pairs from those games.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from grader.tournaments.elofit import fit_ratings
from grader.tournaments.ladder import plan_pairs


@dataclass(frozen=True)
class Game:
    black: str
    white: str
    black_score: float


def games_of(true: dict[str, float], per_engine: int, rand: random.Random) -> list[Game]:
    names = list(true)
    out = []
    for _ in range(len(names) * per_engine // 2):
        a, b = rand.sample(names, 2)
        p = 1 / (1 + 10 ** ((true[b] - true[a]) / 400))
        draw = min(0.25, 2 * p, 2 * (1 - p))
        u = rand.random()
        out.append(Game(a, b, 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", type=int, nargs="+", default=[30, 60, 100, 150])
    ap.add_argument("--games", type=int, default=40, help="games each engine plays, about")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"{'engines':>8} {'games':>6} {'fit (s)':>8} {'worst |z|':>10} {'plan 10 (s)':>12}")
    for n in args.engines:
        rand = random.Random(f"{args.seed}:{n}")
        true = {f"e{i}": rand.uniform(-400, 400) for i in range(n)}
        played = games_of(true, args.games, rand)
        start = time.perf_counter()
        fitted = fit_ratings(played, list(true))
        fit = time.perf_counter() - start
        mean = sum(true.values()) / n
        worst = max(abs(r.elo - (true[r.engine] - mean)) / r.error for r in fitted if r.elo is not None and r.error)
        rated = {r.engine: r.elo for r in fitted}
        start = time.perf_counter()
        plan_pairs(list(true), played, rated, [f"o{i}" for i in range(50)], 10, args.seed)
        plan = time.perf_counter() - start
        print(f"{n:>8} {len(played):>6} {fit:>8.2f} {worst:>10.2f} {plan:>12.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
