"""Sequential probability ratio test (SPRT) on game pairs: the pentanomial model.

Games come in pairs (same opening, colours swapped). A finished pair scores 0, 1/2, 1, 3/2
or 2 points for engine A, counted as [LL, LD, DD+WL, WD, WW]. The test weighs H0: Elo = elo0
against H1: Elo = elo1 by the generalized log-likelihood ratio (LLR) of these counts, the
method of fastchess (matchmaking/sprt/sprt.cpp) and fishtest (stats/LLRcalc.py): under each
hypothesis, the distribution over the five pair scores most likely to give the counts
(M. Van den Bergh: a secular equation, iterated for normalized Elo). An empty bin counts as
1/1000 of a pair, as in both tools, so no count divides by zero. The equation is solved to the
last bit (fishtest: Brent's method, same figures; fastchess: an ITP search that stops within
1e-3 for logistic Elo, so its logistic LLRs differ by up to a few thousandths). The test
stops when the LLR reaches a bound, as in fastchess (fishtest also corrects for overshoot).

Two Elo models:
- "normalized": nElo = (score - 1/2) / sigma * 800 / ln 10, sigma the standard deviation of a
  game's score, taken as sqrt(2) times that of a pair's score (a t-value, comparable across
  draw rates). The default of fastchess (its ``model``), and of fishtest for new tests (its
  test form); this module's default.
- "logistic": the plain logistic Elo of ``grader.tournaments.ratings``, score = 1 / (1 + 10^(-Elo/400)).
  The default of fishtest's library functions (``stat_util.SPRT``, ``sprt.sprt``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..errors import SprtError
from .ratings import Z95
from .ratings import elo as logistic_elo

MODELS = ("normalized", "logistic")
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # a pair's points per game, bin by bin
PAIR_NAMES = ("LL", "LD", "DD/WL", "WD", "WW")  # the bins: engine A's results in the pair's two games
EMPTY_BIN = 1e-3  # pairs counted in an empty bin ("regularize" in fastchess and fishtest)
NELO_PER_T = 800 / math.log(10)  # normalized Elo per unit of t-value of one game
MLE_ITERATIONS = 100  # normalized model: fixed-point steps at most (the tools stop at 10)
MLE_TOLERANCE = 1e-12  # ... until no probability moves more than this
GAME_RESULTS = (0, 0.5, 1)


@dataclass(frozen=True)
class Pentanomial:
    """Game pairs counted by engine A's points in the pair: 0, 1/2, 1, 3/2, 2."""

    ll: int = 0
    ld: int = 0
    dd_wl: int = 0  # two draws, or a win and a loss
    wd: int = 0
    ww: int = 0

    def __post_init__(self) -> None:
        for count in self.counts:
            if not isinstance(count, int) or count < 0:
                raise SprtError(f"pair counts must be whole numbers of at least 0; got {self.counts}")

    @property
    def counts(self) -> tuple[int, int, int, int, int]:
        return (self.ll, self.ld, self.dd_wl, self.wd, self.ww)

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def games(self) -> int:
        return 2 * self.pairs

    @property
    def score(self) -> float:
        """Engine A's mean score per game, 0..1 (1/2 with no pairs)."""
        if not self.pairs:
            return 0.5
        return sum(n * s for n, s in zip(self.counts, PAIR_SCORES)) / self.pairs

    def add(self, first: float, second: float) -> Pentanomial:
        """These counts and one more pair, from engine A's result (1, 1/2 or 0) in each game."""
        for result in (first, second):
            if result not in GAME_RESULTS:
                raise SprtError(f"a game's result must be 1, 0.5 or 0 for engine A; got {result!r}")
        counts = list(self.counts)
        counts[round(2 * (first + second))] += 1
        return Pentanomial(*counts)

    def flipped(self) -> Pentanomial:
        """The same pairs from engine B's side."""
        return Pentanomial(*reversed(self.counts))

    def __add__(self, other: Pentanomial) -> Pentanomial:
        return Pentanomial(*(a + b for a, b in zip(self.counts, other.counts)))


class Estimate(NamedTuple):
    """An Elo estimate and its 95% interval (None: not finite)."""

    elo: float | None
    lower: float | None
    upper: float | None

    @property
    def error(self) -> float | None:
        """Half the interval's width: the "+/-" that fastchess prints."""
        if self.lower is None or self.upper is None:
            return None
        return (self.upper - self.lower) / 2


@dataclass(frozen=True)
class SprtResult:
    """The state of a test after some pairs."""

    llr: float
    lower: float  # accept H0 at an LLR at or below this
    upper: float  # accept H1 at an LLR at or above this
    decision: str | None  # "H0", "H1", or None: play on
    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: str
    penta: Pentanomial
    elo: float | None  # estimate in the model's Elo, like elo0 and elo1
    interval: tuple[float | None, float | None]  # its 95% interval


@dataclass(frozen=True)
class SprtState(SprtResult):
    """A tournament's test of ``engines`` (A first): its state after the pairs counted, and the
    most games it may play. results.json holds it (``to_json``); ``from_json`` reads it back,
    as every version of the grader wrote it."""

    engines: tuple[str, str] = ("", "")
    max_games: int = 0

    @property
    def games(self) -> int:
        """Games counted (those of finished pairs)."""
        return self.penta.games

    def to_json(self) -> dict[str, Any]:
        return {
            "engines": list(self.engines), "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha,
            "beta": self.beta, "model": self.model, "llr": self.llr, "lower": self.lower, "upper": self.upper,
            "decision": self.decision, "elo": self.elo, "elo_interval": list(self.interval),
            "pentanomial": list(self.penta.counts), "games": self.games, "max_games": self.max_games,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SprtState:
        a, b = data["engines"]
        lo, hi = data["elo_interval"]
        return cls(
            data["llr"], data["lower"], data["upper"], data["decision"], data["elo0"], data["elo1"], data["alpha"],
            data["beta"], data["model"], Pentanomial(*data["pentanomial"]), data["elo"], (lo, hi), (a, b),
            data["max_games"],
        )  # fmt: skip


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """LLR bounds (lower, upper): log(beta / (1 - alpha)), log((1 - beta) / alpha)."""
    _check_rates(alpha, beta)
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def llr(penta: Pentanomial, elo0: float, elo1: float, model: str = "normalized") -> float:
    """Generalized log-likelihood ratio of H1 (Elo = elo1) over H0 (Elo = elo0)."""
    _check_finite(elo0, elo1)
    _check_model(model)
    total, probs = _empirical(penta)
    p0, p1 = (_mle(probs, e, model) for e in (elo0, elo1))
    return total * sum(q * (math.log(b) - math.log(a)) for q, a, b in zip(probs, p0, p1))


def elo_estimate(penta: Pentanomial) -> Estimate:
    """Logistic Elo of the mean score, and its 95% interval from the variance of pair scores
    (fastchess's EloPentanomial: it prints elo +/- the interval's half-width; fishtest's
    get_elo gives the same unless a bin is empty, which it counts as 1/1000 of a pair)."""
    stats = _pair_stats(penta)
    if stats is None:
        return Estimate(None, None, None)
    mean, variance = stats
    margin = Z95 * math.sqrt(variance / penta.pairs)
    return Estimate(logistic_elo(mean), logistic_elo(mean - margin), logistic_elo(mean + margin))


def normalized_elo_estimate(penta: Pentanomial) -> Estimate:
    """Normalized Elo and its 95% interval, as fastchess reports them ("nElo")."""
    stats = _pair_stats(penta)
    if stats is None or stats[1] == 0:
        return Estimate(None, None, None)
    mean, variance = stats
    margin = Z95 * math.sqrt(variance / penta.pairs)
    to_nelo = NELO_PER_T / math.sqrt(2 * variance)
    return Estimate((mean - 0.5) * to_nelo, (mean - margin - 0.5) * to_nelo, (mean + margin - 0.5) * to_nelo)


def no_elo_reason(penta: Pentanomial, model: str = "normalized") -> str:
    """Why these pairs give no finite Elo estimate in ``model`` (asked when the estimate is None)."""
    if not penta.pairs:
        return "no game pair counted yet"
    if penta.ll == penta.pairs or penta.ww == penta.pairs:
        who = "lost" if penta.ll else "won"
        return f"engine A {who} every game: its score of {100 * penta.score:.0f}% has no finite Elo"
    bins = [name for name, n in zip(PAIR_NAMES, penta.counts) if n]
    if len(bins) == 1:
        same = ", as between identical engines" if bins == ["DD/WL"] else ""
        return (f"every pair ended alike ({penta.pairs} of {penta.pairs} {bins[0]}{same}): {model} Elo measures "
                "a score against the spread of the pairs' results, and there is no spread")  # fmt: skip
    return f"{model} Elo is not finite for these pairs"


def signed_text(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals and never '-0' ('-0.00' is '0.00')."""
    return f"{round(value, digits) + 0:.{digits}f}"


def sprt(
    penta: Pentanomial, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05, model: str = "normalized"
) -> SprtResult:
    """The test's state after these pairs: LLR, bounds, decision and Elo estimate."""
    _check_test(elo0, elo1, alpha, beta, model)
    lower, upper = sprt_bounds(alpha, beta)
    value = llr(penta, elo0, elo1, model)
    decision = "H1" if value >= upper else "H0" if value <= lower else None
    estimate = normalized_elo_estimate(penta) if model == "normalized" else elo_estimate(penta)
    return SprtResult(
        value, lower, upper, decision, elo0, elo1, alpha, beta, model, penta,
        estimate.elo, (estimate.lower, estimate.upper),
    )  # fmt: skip


def _check_test(elo0: float, elo1: float, alpha: float, beta: float, model: str) -> None:
    _check_finite(elo0, elo1)
    if elo0 >= elo1:
        raise SprtError(f"elo0 must be less than elo1 (H0: Elo = elo0, H1: Elo = elo1); got {elo0:g} and {elo1:g}")
    _check_rates(alpha, beta)
    _check_model(model)


def _check_finite(elo0: float, elo1: float) -> None:
    if not (math.isfinite(elo0) and math.isfinite(elo1)):
        raise SprtError(f"elo0 and elo1 must be finite numbers; got {elo0!r} and {elo1!r}")


def _check_rates(alpha: float, beta: float) -> None:
    for name, rate in (("alpha", alpha), ("beta", beta)):
        if not 0 < rate < 1:
            raise SprtError(f"{name} must be between 0 and 1 (exclusive), like 0.05; got {rate!r}")
    if alpha + beta >= 1:
        raise SprtError(f"alpha + beta must be less than 1, like 0.05 + 0.05; got {alpha:g} + {beta:g}")


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise SprtError(f"model must be 'normalized' or 'logistic'; got {model!r}")


def _empirical(penta: Pentanomial) -> tuple[float, list[float]]:
    """Total pairs and the frequency of each bin, an empty bin counting EMPTY_BIN pairs."""
    counts = [n if n else EMPTY_BIN for n in penta.counts]
    total = sum(counts)
    return total, [n / total for n in counts]


def _pair_stats(penta: Pentanomial) -> tuple[float, float] | None:
    """Mean and variance of the pair scores (None with no pairs)."""
    if not penta.pairs:
        return None
    return _mean_variance([n / penta.pairs for n in penta.counts])


def _mean_variance(probs: list[float]) -> tuple[float, float]:
    mean = sum(p * a for p, a in zip(probs, PAIR_SCORES))
    return mean, sum(p * (a - mean) ** 2 for p, a in zip(probs, PAIR_SCORES))


def _mle(probs: list[float], elo: float, model: str) -> list[float]:
    """The most likely distribution over the bins, given the frequencies, at this Elo."""
    if model == "logistic":
        return _mle_mean(probs, _logistic_score(elo))
    return _mle_t_value(probs, math.sqrt(2) * elo / NELO_PER_T)


def _logistic_score(elo: float) -> float:
    try:
        score = 1 / (1 + 10 ** (-elo / 400))
    except OverflowError:
        score = 0.0
    if not 0 < score < 1:
        raise SprtError(f"logistic Elo {elo:g} has a score of {score:g}: use Elo bounds between -4000 and 4000")
    return score


def _mle_mean(probs: list[float], score: float) -> list[float]:
    """Van den Bergh, Proposition 1.1: p_i = q_i / (1 + x (a_i - s)), with mean s."""
    shifts = [a - score for a in PAIR_SCORES]
    x = _secular_root(shifts, probs)
    return [q / (1 + x * v) for q, v in zip(probs, shifts)]


def _mle_t_value(probs: list[float], t: float) -> list[float]:
    """Van den Bergh, "Comments on normalized Elo", section 4.1: the distribution with
    (mean - 1/2) / sigma = t, by the fixed-point iteration from the uniform distribution. With
    bins nearly empty it can settle, as in the tools, on a less likely one than the best."""
    p = [1 / len(probs)] * len(probs)
    for _ in range(MLE_ITERATIONS):
        mean, variance = _mean_variance(p)
        sigma = math.sqrt(variance)
        phi = [a - 0.5 - t * sigma * (1 + ((a - mean) / sigma) ** 2) / 2 for a in PAIR_SCORES]
        x = _secular_root(phi, probs)
        new = [q / (1 + x * f) for q, f in zip(probs, phi)]
        moved = max(abs(a - b) for a, b in zip(new, p))
        p = new
        if moved < MLE_TOLERANCE:
            break
    return p


def _secular_root(values: list[float], weights: list[float]) -> float:
    """The root x of sum w_i v_i / (1 + x v_i) = 0 with every 1 + x v_i > 0, by bisection to
    the last bit (the sum falls from +inf to -inf on that interval)."""
    if not min(values) < 0 < max(values):
        raise SprtError(
            "too far from 0 for the model to fit a distribution of pair scores to them "
            "(normalized Elo: keep them within about -230 and 230)"
        )
    lo, hi = -1 / max(values), -1 / min(values)
    while True:
        mid = (lo + hi) / 2
        if not lo < mid < hi:
            return mid
        if sum(w * v / (1 + mid * v) for w, v in zip(weights, values)) > 0:
            lo = mid
        else:
            hi = mid
