"""Swiss pairing benchmark: random tournaments of 64 engines x 7 rounds with random results.

Run: python bench/swiss.py [--tournaments 200] [--engines 64] [--rounds 7] [--seed 1]
Prints the worst and mean time pair_round took for one round, per round number, over all
tournaments, and the slowest round overall. Then, as a stress test, a few tournaments played
on until no round can be paired (up to 63 rounds for 64 engines: the last rounds are as
constrained as rounds get), with the slowest round and the round each ended at.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from grader.tournaments.swiss import BYE_POINTS, NoPairing, pair_round, pairing_state

PAIR_RESULTS = [(0.0, 2.0), (0.5, 1.5), (1.0, 1.0), (1.5, 0.5), (2.0, 0.0)]


def tournament(rng: random.Random, engines: int, rounds: int | None) -> list[float]:
    """Seconds pair_round took for each round of one tournament, until ``rounds`` or until a
    round cannot be paired (that last, failed round included)."""
    seeds = [f"engine{i:02d}" for i in range(engines)]
    results: list = []
    times: list[float] = []
    while rounds is None or len(times) < rounds:
        standings, played, had_bye = pairing_state(results, seeds)
        start = time.perf_counter()
        try:
            paired = pair_round(standings, played, had_bye)
        except NoPairing:
            times.append(time.perf_counter() - start)
            return times
        times.append(time.perf_counter() - start)
        results += [(a, b, *rng.choice(PAIR_RESULTS)) for a, b in paired.pairs]
        if paired.bye:
            results.append((paired.bye, None, BYE_POINTS, 0.0))
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tournaments", type=int, default=200)
    ap.add_argument("--engines", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--exhaust", type=int, default=5, help="tournaments to play until no pairing")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    per_round = [tournament(rng, args.engines, args.rounds) for _ in range(args.tournaments)]
    print(f"{args.tournaments} tournaments of {args.engines} engines x {args.rounds} rounds, random results")
    for r in range(args.rounds):
        column = [t[r] for t in per_round]
        print(f"  round {r + 1}: worst {max(column) * 1000:6.1f} ms, mean {sum(column) / len(column) * 1000:6.1f} ms")
    print(f"worst round overall: {max(max(t) for t in per_round) * 1000:.1f} ms")

    long = [tournament(rng, args.engines, None) for _ in range(args.exhaust)]
    if long:
        print(
            f"{args.exhaust} tournaments of {args.engines} engines played until a round cannot be paired: "
            f"that round was {min(map(len, long))}..{max(map(len, long))}; "
            f"worst round {max(max(t) for t in long) * 1000:.1f} ms (failed pairings included)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
