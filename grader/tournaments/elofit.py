"""Ratings of many engines from all their games at once: the maximum likelihood Elo of the
Bradley-Terry model, with a standard error per engine.

The model is the logistic one of ``grader.tournaments.ratings``: an engine rated D above
another scores 1 / (1 + 10^(-D/400)) a game on average. A draw counts as half a win and half a
loss, as Ordo counts it. Every game is one observation (the error bars treat games as
independent, as Ordo and BayesElo do; a tournament's pentanomial error in ``ratings`` is wider
or narrower as the openings make the pairs' two games alike or not).

- The prior: virtual draws, as BayesElo's prior (2 there and here). Each engine draws about
  ``prior`` virtual games in all, shared out over the opponents it met: two engines that met,
  of k and m opponents each, draw prior/2 (1/k + 1/m) virtual games. So an engine that won or
  lost all its games still gets a finite rating and error bar (two engines, 10 wins out of 10:
  rated as 11 points out of 12), and the pull towards the others fades as games come in,
  however many opponents an engine meets once. ``prior=0`` is the plain maximum likelihood,
  where such an engine has no finite rating (ValueError).
- The anchor: ratings are only defined up to a shift. By default their mean is 0 (BayesElo's
  and Ordo's default, Ordo's at 2300); or a named engine is rated 0 (Ordo's ``-a``), whose
  error is then 0 and every other error is relative to it.
- The errors: the square roots of the diagonal of the inverse of the Hessian of the negative
  log-likelihood, under the anchor's constraint (BayesElo's Gaussian approximation; Ordo
  simulates instead). For the mean anchor that is the Hessian's pseudo-inverse.
- Engines that no chain of games links to the anchor (or, without a named anchor, to the
  largest group of engines linked by games) have no rating yet: None.

The fit is Newton's method on the concave log-likelihood, halving a step that does not raise it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from operator import mul
from typing import Iterable, Sequence

from .ratings import Z95, Scored

PRIOR_DRAWS = 2.0  # virtual draws of each engine, shared out over its opponents (BayesElo's default prior)
C = math.log(10) / 400  # d ln(odds) / d Elo
TOLERANCE = 1e-9  # Elo: the fit stops when no rating moves more than this
MAX_STEPS = 100


@dataclass(frozen=True)
class Rating:
    """An engine's rating: ``elo`` and its standard error ``error`` (None: not linked to the
    anchor by any games yet); ``games`` and ``points`` are the real games, not the prior's."""

    engine: str
    games: int
    points: float
    elo: float | None
    error: float | None

    @property
    def margin95(self) -> float | None:
        """Half the width of the 95% interval of the rating (normal approximation)."""
        return None if self.error is None else Z95 * self.error

    def to_json(self) -> dict:
        return {"engine": self.engine, "games": self.games, "points": self.points,
                "elo": None if self.elo is None else round(self.elo, 1),
                "error": None if self.error is None else round(self.error, 1),
                "margin95": None if self.margin95 is None else round(self.margin95, 1)}  # fmt: skip


def fit_ratings(games: Iterable[Scored], engines: Sequence[str] = (), *, prior: float = PRIOR_DRAWS,
                anchor: str | None = None) -> list[Rating]:  # fmt: skip
    """The rating of each engine of ``engines`` (and of every other engine that played), in
    that order (then by first game). ``anchor``: the engine rated 0; None: the mean of the
    rated engines is 0. ValueError for an anchor that is not among them, a negative prior, or
    (``prior=0`` only) an engine whose results have no finite rating."""
    if prior < 0:
        raise ValueError(f"the prior is a number of virtual draws, at least 0; got {prior:g}")
    names = dict.fromkeys(engines)  # in order: those given, then the others as they first play
    n_games: dict[tuple[str, str], float] = defaultdict(float)  # (a, b) with a < b -> games
    points: dict[tuple[str, str], float] = defaultdict(float)  # (a, b) -> a's points against b
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for g in games:
        names.setdefault(g.black)
        names.setdefault(g.white)
        a, b = sorted((g.black, g.white))
        score = g.black_score if a == g.black else 1 - g.black_score
        n_games[(a, b)] += 1
        points[(a, b)] += score
        totals[g.black][0] += 1
        totals[g.black][1] += g.black_score
        totals[g.white][0] += 1
        totals[g.white][1] += 1 - g.black_score
    if anchor is not None and anchor not in names:
        raise ValueError(f"the anchor {anchor!r} is not among the engines: name one of them, or anchor the mean")
    group = _group(list(names), n_games, anchor)
    index = {e: i for i, e in enumerate(group)}
    met: dict[str, int] = defaultdict(int)  # opponents each engine met
    for a, b in n_games:
        met[a] += 1
        met[b] += 1
    pairs = []
    for (a, b), n in n_games.items():
        if a in index:
            draws = prior / 2 * (1 / met[a] + 1 / met[b])
            pairs.append((index[a], index[b], n + draws, points[(a, b)] + draws / 2))
    if prior == 0:
        _check_finite(group, n_games, points)
    elo = _fit(len(group), pairs) if len(group) > 1 else [0.0] * len(group)
    errors = _errors(len(group), pairs, elo, None if anchor is None else index[anchor])
    shift = elo[index[anchor]] if anchor is not None else sum(elo) / len(elo) if elo else 0.0
    out = []
    for e in names:
        played, scored = totals[e] if e in totals else (0, 0.0)
        i = index.get(e)
        rated = i is not None and len(group) > 1
        out.append(Rating(e, int(played), scored, elo[i] - shift if rated and i is not None else None,
                          errors[i] if rated and i is not None else None))  # fmt: skip
    return out


def _group(names: list[str], n_games: dict[tuple[str, str], float], anchor: str | None) -> list[str]:
    """The engines linked by games to the anchor (None: to the largest such group; the first
    named wins a tie), in the order named."""
    parent = {e: e for e in names}

    def root(e: str) -> str:
        while parent[e] != e:
            parent[e] = parent[parent[e]]
            e = parent[e]
        return e

    for a, b in n_games:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = defaultdict(list)
    for e in names:
        groups[root(e)].append(e)
    if anchor is not None:
        return groups[root(anchor)]
    return max(groups.values(), key=len, default=[])


def _check_finite(group: list[str], n_games: dict[tuple[str, str], float],
                  points: dict[tuple[str, str], float]) -> None:  # fmt: skip
    """ValueError unless every engine of the group both scored against and conceded to a chain
    of the others (the games' graph of 'scored a point or half against' is strongly connected:
    Zermelo's condition for finite maximum likelihood ratings)."""
    scored: dict[str, set[str]] = defaultdict(set)
    conceded: dict[str, set[str]] = defaultdict(set)
    for (a, b), n in n_games.items():
        if a in group and points[(a, b)] > 0:
            scored[a].add(b)
            conceded[b].add(a)
        if a in group and points[(a, b)] < n:
            scored[b].add(a)
            conceded[a].add(b)
    for graph in (scored, conceded):
        seen, todo = {group[0]}, [group[0]]
        while todo:
            for e in graph[todo.pop()] - seen:
                seen.add(e)
                todo.append(e)
        if len(seen) < len(group):
            lost = sorted(set(group) - seen)[0]
            raise ValueError(f"{lost!r} has no finite rating without a prior (it, or its group, won or lost "
                             "every game against the others): give a prior of virtual draws")  # fmt: skip


def _log_likelihood(pairs: list[tuple[int, int, float, float]], elo: list[float]) -> float:
    total = 0.0
    for i, j, n, s in pairs:
        x = C * (elo[i] - elo[j])  # log-odds of i against j
        total += s * -_softplus(-x) + (n - s) * -_softplus(x)
    return total


def _softplus(x: float) -> float:
    """ln(1 + e^x), without overflow."""
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _gradient_hessian(n_engines: int, pairs: list[tuple[int, int, float, float]],
                      elo: list[float]) -> tuple[list[float], list[list[float]]]:  # fmt: skip
    """The log-likelihood's gradient, and its negated Hessian (a weighted graph Laplacian)."""
    grad = [0.0] * n_engines
    hess = [[0.0] * n_engines for _ in range(n_engines)]
    for i, j, n, s in pairs:
        p = 1 / (1 + math.exp(-C * (elo[i] - elo[j])))
        g = C * (s - n * p)
        w = C * C * n * p * (1 - p)
        grad[i] += g
        grad[j] -= g
        hess[i][i] += w
        hess[j][j] += w
        hess[i][j] -= w
        hess[j][i] -= w
    return grad, hess


def _fit(n_engines: int, pairs: list[tuple[int, int, float, float]]) -> list[float]:
    """Maximum likelihood ratings, engine 0 held at 0 (a shift changes nothing)."""
    elo = [0.0] * n_engines
    value = _log_likelihood(pairs, elo)
    for _ in range(MAX_STEPS):
        grad, hess = _gradient_hessian(n_engines, pairs, elo)
        step = [0.0, *_solve([row[1:] for row in hess[1:]], grad[1:])]
        while True:  # halve a step that overshoots; the likelihood is concave, so one is found
            trial = [r + d for r, d in zip(elo, step)]
            new = _log_likelihood(pairs, trial)
            if new >= value - 1e-12 or max(map(abs, step)) < TOLERANCE:
                break
            step = [d / 2 for d in step]
        elo, value = trial, new
        if max(map(abs, step)) < TOLERANCE:
            break
    return elo


def _errors(n_engines: int, pairs: list[tuple[int, int, float, float]], elo: list[float],
            anchor: int | None) -> list[float]:  # fmt: skip
    """Standard errors at the fit: from the inverse of the negated Hessian without the
    anchor's row and column (its error 0), or, for the mean anchor, from its pseudo-inverse
    (for a connected graph's Laplacian L: (L + J/n)^-1 - J/n, J all ones)."""
    if n_engines < 2:
        return [0.0] * n_engines
    _, hess = _gradient_hessian(n_engines, pairs, elo)
    if anchor is not None:
        keep = [i for i in range(n_engines) if i != anchor]
        variances = dict(zip(keep, _inverse_diagonal([[hess[i][j] for j in keep] for i in keep])))
        return [math.sqrt(max(variances.get(i, 0.0), 0.0)) for i in range(n_engines)]
    k = 1 / n_engines
    diagonal = _inverse_diagonal([[h + k for h in row] for row in hess])
    return [math.sqrt(max(d - k, 0.0)) for d in diagonal]


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    """The rows of L with L L^T = a, for a symmetric positive definite a."""
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        li, ai = low[i], a[i]
        for j in range(i):
            lj = low[j]
            li[j] = (ai[j] - sum(map(mul, li[:j], lj[:j]))) / lj[j]
        li[i] = math.sqrt(max(ai[i] - sum(map(mul, li[:i], li[:i])), 1e-300))
    return low


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """x with a x = b (a symmetric positive definite)."""
    low = _cholesky(a)
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(map(mul, low[i][:i], y[:i]))) / low[i][i]
    up = [list(column) for column in zip(*low)]  # L^T by rows
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(map(mul, up[i][i + 1 :], x[i + 1 :]))) / low[i][i]
    return x


def _inverse_diagonal(a: list[list[float]]) -> list[float]:
    """The diagonal of a^-1 (a symmetric positive definite): a^-1 = M^T M for M = L^-1, so its
    j-th entry is the sum of squares of M's column j, found from L by forward substitution."""
    low = _cholesky(a)
    n = len(a)
    out = []
    for j in range(n):
        x = [1 / low[j][j]]  # column j of M from row j down
        for i in range(j + 1, n):
            x.append(-sum(map(mul, low[i][j:i], x)) / low[i][i])
        out.append(sum(v * v for v in x))
    return out
