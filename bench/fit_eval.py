"""Fits the native solver's move-ordering evaluation (grader/_native/eval_weights.h).

Run: python bench/fit_eval.py [--positions 40000] [--seed 1] [--out grader/_native/eval_weights.h]
Positions with 10-18 empties are taken from random games, solved exactly by the native solver
(plain disc difference), and a ridge regression of those values on the evaluation's features
(grader._othello_native._features: patterns at each corner of the 8 symmetric images, mobility
and potential mobility) gives the weights, written as a C header. The evaluation only orders
moves: its weights change the speed of the exact search, never its results.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np

from grader import _othello_native as N  # type: ignore[attr-defined]
from grader.games.othello import Position

ROOT = Path(__file__).resolve().parents[1]
N_WEIGHTS = 65820  # N_WEIGHTS in othello.c: 2 * 3**9 + 4 * 3**8 + 81 + 129
SCALE = 32  # EVAL_SCALE in othello.c: weights per disc


def sample(rng: random.Random, lo: int, hi: int) -> Position | None:
    """One position with lo..hi empties from a random game (None if the game ended before)."""
    target = rng.randint(lo, hi)
    pos = Position.start()
    while pos.empties > target:
        if pos.is_game_over():
            return None
        moves = pos.moves()
        pos = pos.play(rng.choice(moves)) if moves else pos.pass_turn()
    if not pos.moves():
        return None if pos.is_game_over() else pos.pass_turn()
    return pos


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=40000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lo", type=int, default=10)
    ap.add_argument("--hi", type=int, default=18)
    ap.add_argument("--damp", type=float, default=2.0)
    ap.add_argument("--cache", type=Path, help="an .npz of solved positions: read if it exists, else written")
    ap.add_argument("--out", type=Path, default=ROOT / "grader" / "_native" / "eval_weights.h")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    solver = N.Solver(False, 20)
    rows: list[tuple[int, ...]] = []
    values: list[int] = []
    start = time.process_time()
    if args.cache and args.cache.exists():
        data = np.load(args.cache)
        rows, values = [tuple(r) for r in data["rows"]], list(data["values"])
    while len(rows) < args.positions:
        pos = sample(rng, args.lo, args.hi)
        if pos is None:
            continue
        values.append(solver.search(pos.player, pos.opponent))
        rows.append(N._features(pos.player, pos.opponent))
        if len(rows) % 5000 == 0:
            print(f"{len(rows)} positions solved, {time.process_time() - start:.0f} CPU s", flush=True)
    idx, y = np.array(rows), np.array(values, dtype=float)
    assert idx.max() < N_WEIGHTS, "the feature layout changed: update N_WEIGHTS"
    if args.cache and not args.cache.exists():
        np.savez(args.cache, rows=idx, values=y)
    held = len(y) // 10  # the last tenth checks the fit made on the rest
    w = ridge(idx[:-held], y[:-held], args.damp)
    error = np.sqrt(np.mean((w[idx[-held:]].sum(axis=1) - y[-held:]) ** 2))
    print(f"held-out rms error {error:.2f} discs (values' rms {np.sqrt(np.mean(y**2)):.2f}); refit on all")
    w = ridge(idx, y, args.damp)
    ints = np.clip(np.rint(w * SCALE), -32767, 32767).astype(int)
    lines = [",".join(str(v) for v in ints[i : i + 24]) + "," for i in range(0, len(ints), 24)]
    header = (
        f"/* Weights of the move-ordering evaluation ({SCALE} per disc), written by bench/fit_eval.py\n"
        f" * (--positions {args.positions} --seed {args.seed} --lo {args.lo} --hi {args.hi} --damp {args.damp}). */\n"
        "static const int16_t EVAL_WEIGHTS[N_WEIGHTS] = {\n" + "\n".join(lines) + "};\n"
    )
    args.out.write_text(header)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
