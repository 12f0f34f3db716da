"""Fits the native solver's move-ordering evaluation (grader/_native/eval_weights.h).

Run: python bench/fit_eval.py [--sample 10-15:60000 --sample 16-18:8000] [--eval-sample 10-15:60000]
     [--seed 1] [--cache FILE.npz] [--merge FILE.npz] [--out grader/_native/eval_weights.h]
Each position comes from its own game, played from the start to a number of empties drawn
uniformly from a range. --sample LO-HI:COUNT takes COUNT positions with LO..HI empties from
uniformly random games; a ridge regression of their exact values on the evaluation's features
(grader._othello_native._features: patterns at each corner of the 8 symmetric images, mobility
and potential mobility) gives a first set of weights. --eval-sample LO-HI:COUNT then takes COUNT
positions from games nearer to real play: the first --random-plies moves at random, each later
one drawn by a softmax (--temperature, in discs) over the first weights' evaluation of each
move (1 ply); those first weights are fitted with --play-damp as the ridge penalty. Every
position is solved exactly by the native solver (plain disc difference), and the final
weights, a ridge regression (--damp) on all the positions, are written as a C header. The
evaluation only orders moves: its weights change the speed of the exact search, never its
results.
--cache keeps the positions this run solves (its --sample and --eval-sample specs are not stored:
an existing cache is read instead of solving anything); --merge adds another run's cache to
both fits, so that a new sample can be added to positions already solved.

The shipped weights (about 900 CPU s in all):
  python bench/fit_eval.py --sample 10-15:120000 --sample 16-18:8000 --eval-sample 10-15:60000 \
      --seed 1 --damp 5.0 --play-damp 4.0 --cache base.npz
  python bench/fit_eval.py --sample 10-15:0 --eval-sample 10-15:30000 --merge base.npz \
      --seed 4 --damp 8.0 --play-damp 4.0
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path
from typing import Callable

import numpy as np

from grader import _othello_native as N  # type: ignore[attr-defined]
from grader.games.othello import Position

ROOT = Path(__file__).resolve().parents[1]
N_WEIGHTS = 65820  # N_WEIGHTS in othello.c: 2 * 3**9 + 4 * 3**8 + 81 + 129
SCALE = 32  # EVAL_SCALE in othello.c: weights per disc

Chooser = Callable[[Position, list[int]], int]


def sample(rng: random.Random, lo: int, hi: int, choose: Chooser) -> Position | None:
    """One position with lo..hi empties from a game whose moves `choose` picks (None if the game
    ended before)."""
    target = rng.randint(lo, hi)
    pos = Position.start()
    while pos.empties > target:
        if pos.is_game_over():
            return None
        moves = pos.moves()
        pos = pos.play(choose(pos, moves)) if moves else pos.pass_turn()
    if not pos.moves():
        return None if pos.is_game_over() else pos.pass_turn()
    return pos


def evaluation_player(rng: random.Random, w: np.ndarray, temperature: float, random_plies: int) -> Chooser:
    """Moves at random for the first random_plies moves, then by a softmax over the weights'
    evaluation (discs) of the position after each move."""
    weights = w.tolist()

    def choose(pos: Position, moves: list[int]) -> int:
        if pos.empties > 60 - random_plies:
            return rng.choice(moves)
        values = []
        for x in moves:
            f = N.flips(x, pos.player, pos.opponent)
            values.append(-sum([weights[i] for i in N._features(pos.opponent ^ f, pos.player | f | 1 << x)]))
        top = max(values)
        return rng.choices(moves, [math.exp((v - top) / temperature) for v in values])[0]

    return choose


def ridge(idx: np.ndarray, y: np.ndarray, damp: float, steps: int = 300) -> np.ndarray:
    """Least squares with a ridge penalty, by conjugate gradients on the normal equations; each
    row of the design matrix is the sum of the one-hot vectors of its feature indices."""
    width = idx.shape[1]

    def normal(w: np.ndarray) -> np.ndarray:  # (A^T A + damp^2 I) w
        r = w[idx].sum(axis=1)
        return np.bincount(idx.ravel(), weights=np.repeat(r, width), minlength=N_WEIGHTS) + damp**2 * w

    w = np.zeros(N_WEIGHTS)
    r = np.bincount(idx.ravel(), weights=np.repeat(y, width), minlength=N_WEIGHTS).astype(float)
    d, rr = r.copy(), r @ r
    for _ in range(steps):
        q = normal(d)
        step = rr / (d @ q)
        w += step * d
        r -= step * q
        rr, old = r @ r, rr
        if rr < 1e-12:
            break
        d = r + (rr / old) * d
    return w


def fit(players: list[int], opponents: list[int], values: list[int], damp: float) -> np.ndarray:
    """Weights (in discs) fitted on the positions, after a check on a held-out tenth."""
    idx, y = np.array([N._features(p, o) for p, o in zip(players, opponents)]), np.array(values, dtype=float)
    assert idx.max() < N_WEIGHTS, "the feature layout changed: update N_WEIGHTS"
    held = np.arange(len(y)) % 10 == 9  # every tenth position checks the fit made on the rest
    w = ridge(idx[~held], y[~held], damp)
    error = np.sqrt(np.mean((w[idx[held]].sum(axis=1) - y[held]) ** 2))
    print(f"{len(y)} positions: held-out rms error {error:.2f} discs (values' rms {np.sqrt(np.mean(y**2)):.2f})")
    return ridge(idx, y, damp)


def load(cache: Path) -> tuple[list[int], list[int], list[int]]:
    """The players, opponents and values of a --cache file."""
    data = np.load(cache)
    return [int(v) for v in data["players"]], [int(v) for v in data["opponents"]], [int(v) for v in data["values"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", action="append", metavar="LO-HI:COUNT",
                    help="COUNT positions with LO..HI empties from random games (repeatable; default 10-15:60000)")  # fmt: skip
    ap.add_argument("--eval-sample", action="append", default=[], metavar="LO-HI:COUNT",
                    help="COUNT positions with LO..HI empties from games played by the first fit (repeatable)")  # fmt: skip
    ap.add_argument("--temperature", type=float, default=2.0, help="softmax temperature (discs) of --eval-sample play")
    ap.add_argument("--random-plies", type=int, default=6, help="first moves of --eval-sample games played at random")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--damp", type=float, default=4.0)
    ap.add_argument("--play-damp", type=float, default=4.0, help="--damp of the first fit, which plays --eval-sample")
    ap.add_argument("--cache", type=Path, help="an .npz of solved positions: read if it exists, else written")
    ap.add_argument("--merge", action="append", default=[], type=Path, metavar="FILE.npz",
                    help="another run's --cache, whose positions join both fits (repeatable)")  # fmt: skip
    ap.add_argument("--out", type=Path, default=ROOT / "grader" / "_native" / "eval_weights.h")
    args = ap.parse_args()
    for f in args.merge:
        if not f.is_file():
            ap.error(f"--merge {f}: no such file (give the --cache file of an earlier run)")
    samples = args.sample or ["10-15:60000"]
    rng = random.Random(args.seed)
    solver = N.Solver(False, 20)
    start = time.process_time()
    players: list[int] = []
    opponents: list[int] = []
    values: list[int] = []
    cached = bool(args.cache and args.cache.exists())
    if cached:
        players, opponents, values = load(args.cache)
    merged = [load(f) for f in args.merge]

    def everything() -> tuple[list[int], list[int], list[int]]:
        """This run's positions, then the merged ones."""
        ps, qs, vs = players, opponents, values
        for p, o, v in merged:
            ps, qs, vs = ps + p, qs + o, vs + v
        return ps, qs, vs

    def solve(specs: list[str], choose: Chooser) -> None:
        for spec in specs:
            span, count = spec.split(":")
            lo, hi = (int(v) for v in span.split("-")) if "-" in span else (int(span), int(span))
            for done in range(1, int(count) + 1):
                pos = None
                while pos is None:
                    pos = sample(rng, lo, hi, choose)
                values.append(solver.search(pos.player, pos.opponent))
                players.append(pos.player)
                opponents.append(pos.opponent)
                if done % 5000 == 0 or done == int(count):
                    print(f"{spec}: {done} positions solved, {time.process_time() - start:.0f} CPU s", flush=True)

    if not cached:
        solve(samples, lambda pos, moves: rng.choice(moves))
        if args.eval_sample:
            w = fit(*everything(), args.play_damp)
            solve(args.eval_sample, evaluation_player(rng, w, args.temperature, args.random_plies))
    if args.cache and not cached:
        np.savez(args.cache, players=np.array(players, dtype=np.uint64),
                 opponents=np.array(opponents, dtype=np.uint64), values=np.array(values))  # fmt: skip
    w = fit(*everything(), args.damp)
    ints = np.clip(np.rint(w * SCALE), -32767, 32767).astype(int)
    lines = [",".join(str(v) for v in ints[i : i + 24]) + "," for i in range(0, len(ints), 24)]
    command = " ".join([*(f"--sample {s}" for s in samples), *(f"--eval-sample {s}" for s in args.eval_sample)])
    command += "".join(f" --merge {f.name}" for f in args.merge)
    if args.eval_sample:
        command += f" --temperature {args.temperature} --random-plies {args.random_plies} --play-damp {args.play_damp}"
    header = (
        f"/* Weights of the move-ordering evaluation ({SCALE} per disc), written by bench/fit_eval.py\n"
        f" * ({command} --seed {args.seed} --damp {args.damp}). */\n"
        "static const int16_t EVAL_WEIGHTS[N_WEIGHTS] = {\n" + "\n".join(lines) + "};\n"
    )
    args.out.write_text(header)
    print(f"wrote {args.out} ({time.process_time() - start:.0f} CPU s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
