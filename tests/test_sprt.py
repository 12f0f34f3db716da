"""SPRT on game pairs: LLR and Elo against the published figures of fastchess and fishtest,
each also recomputed here by a second route (the dual of the likelihood maximization), and
properties of the test."""

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.errors import GraderError, SprtError
from grader.tournaments.ratings import elo_interval
from grader.tournaments.sprt import (
    Pentanomial,
    SprtResult,
    elo_estimate,
    llr,
    normalized_elo_estimate,
    sprt,
    sprt_bounds,
)

# --- A second route to the LLR -------------------------------------------------------------
# The most likely distribution p over the pair scores a_i, given frequencies q_i, under a
# constraint E_p[g] = 0, has sum q log p = sum q log q - max_x sum q log(1 + x g): the maximum
# of a concave function, found here by golden-section search (logistic: g = a - s, one
# constraint) and by damped Newton steps on two constraints (normalized: for each mean m, the
# mean m and the variance ((m - 1/2) / t)^2 fixed; then the best m, by golden section). The
# module instead solves the secular equation (and iterates it for normalized Elo), as
# fastchess and fishtest do.

A = (0.0, 0.25, 0.5, 0.75, 1.0)
GOLDEN = (math.sqrt(5) - 1) / 2


def frequencies(counts):
    regular = [n or 1e-3 for n in counts]  # an empty bin counts 1/1000 of a pair
    return sum(regular), [n / sum(regular) for n in regular]


def golden_max(f, lo, hi):
    c, d = hi - GOLDEN * (hi - lo), lo + GOLDEN * (hi - lo)
    fc, fd = f(c), f(d)
    while hi - lo > 1e-13 * (1 + abs(lo) + abs(hi)):
        if fc > fd:
            hi, d, fd = d, c, fc
            c = hi - GOLDEN * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + GOLDEN * (hi - lo)
            fd = f(d)
    return max(fc, fd)


def deficit_1(q, g):
    """max_x sum q log(1 + x g)."""
    return golden_max(lambda x: sum(qi * math.log(1 + x * gi) for qi, gi in zip(q, g)), -1 / max(g), -1 / min(g))


def deficit_2(q, g1, g2):
    """max_(x, y) sum q log(1 + x g1 + y g2); inf when no distribution meets both constraints."""

    def h(x, y):
        d = [1 + x * a + y * b for a, b in zip(g1, g2)]
        return sum(qi * math.log(di) for qi, di in zip(q, d)) if min(d) > 0 else -math.inf

    x = y = value = 0.0
    for _ in range(200):
        d = [1 + x * a + y * b for a, b in zip(g1, g2)]
        gx, gy = (sum(qi * gi / di for qi, gi, di in zip(q, g, d)) for g in (g1, g2))
        hxx, hxy, hyy = (
            sum(qi * u * v / di**2 for qi, u, v, di in zip(q, gu, gv, d)) for gu, gv in ((g1, g1), (g1, g2), (g2, g2))
        )  # minus the Hessian
        det = hxx * hyy - hxy * hxy
        if not det > 0:
            return math.inf
        dx, dy = (hyy * gx - hxy * gy) / det, (hxx * gy - hxy * gx) / det
        step = 1.0
        while h(x + step * dx, y + step * dy) < value and step > 1e-12:
            step /= 2
        new = h(x + step * dx, y + step * dy)
        if new > 1e6:
            return math.inf
        if new - value < 1e-15:
            return max(new, value)
        x, y, value = x + step * dx, y + step * dy, new
    return value


def best_deficit_t(q, t):
    if abs(t) < 1e-12:  # the mean alone is fixed
        return deficit_1(q, [a - 0.5 for a in A])
    # Means whose variance ((m - 1/2) / t)^2 some distribution with every p_i > 0 has: below
    # m (1 - m), above that of the two nearest pair scores, (m - 1/2) (3/4 - m) (t small).
    near, far = 0.25 * t * t / (1 + t * t), 0.5 * abs(t) / math.sqrt(1 + t * t)
    lo, hi = (0.5 + near, 0.5 + far) if t > 0 else (0.5 - far, 0.5 - near)

    def at_mean(m):
        v = ((m - 0.5) / t) ** 2
        return -deficit_2(q, [a - m for a in A], [(a - m) ** 2 - v for a in A])

    return -golden_max(at_mean, lo, hi)


def llr_by_hand(model, counts, elo0, elo1):
    total, q = frequencies(counts)
    if model == "logistic":
        s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
        return total * (deficit_1(q, [a - s0 for a in A]) - deficit_1(q, [a - s1 for a in A]))
    t0, t1 = (math.sqrt(2) * e * math.log(10) / 800 for e in (elo0, elo1))
    return total * (best_deficit_t(q, t0) - best_deficit_t(q, t1))


# --- Published figures ---------------------------------------------------------------------
# Pentanomial counts are [LL, LD, DD+WL, WD, WW]. fastchess's Stats(ll, ld, wl, dd, wd, ww)
# keeps WL and DD apart: they are summed here.
PUBLISHED_LLR = [
    # fastchess app/tests/sprt_test.cpp (Disservin/fastchess, commit 74deac23), printed to 2 decimals
    ("normalized", [365, 16618, 36029 + 200, 16974, 390], 0, 2, 2.25),  # "normalized pentanomial 1"
    ("normalized", [127, 4883, 10311 + 401, 5150, 104], -1.75, 0.25, 3.01),  # "normalized pentanomial 2"
    ("logistic", [223, 9863, 20279 + 1000, 10037, 246], 0.5, 2.5, -3.07),  # "logistic pentanomial 1"
    ("logistic", [871, 26175, 55003 + 980, 26678, 821], 0, 2, -4.98),  # "logistic pentanomial 2"
    # fishtest results quoted in official-stockfish/Stockfish commit messages: "LLR: x (-2.94,2.94)
    # <elo0,elo1>" (normalized Elo) or "{elo0,elo1}" (logistic Elo), then "Ptnml(0-2): ..."
    ("normalized", [1721, 77704, 208246, 77189, 1732], -1.75, 0.25, 3.19),  # b52f01471b24
    ("normalized", [20, 1334, 3810, 1569, 35], 0, 2, 2.95),  # d077f9a8154d
    ("normalized", [39, 11353, 31686, 11822, 33], 0.5, 2.5, 2.96),  # 218c74ec4d97
    ("normalized", [521, 17154, 37050, 17170, 489], 0, 2, -2.94),  # f4bcd40409f9
    ("normalized", [390, 91902, 261789, 90790, 389], -1.75, 0.25, -2.97),  # 1eff8b0389d7
    ("logistic", [406, 8728, 41933, 8848, 493], -0.2, 1.1, 2.94),  # 6ad4f485d375
    ("logistic", [2, 245, 4962, 291, 4], -0.7, 0.2, 2.95),  # 6ad4f485d375
    ("logistic", [13, 1176, 17184, 1178, 21], 0.25, 1.25, -3.00),  # 50890616591443
    ("logistic", [87, 6272, 81610, 6175, 108], -0.7, 0.2, 2.98),  # 32d781769db9
    ("logistic", [71, 1427, 7558, 1518, 66], -1.25, 0.25, 2.93),  # ec42154ef256
]

# The same LLRs and a few degenerate ones in full, from running fishtest's own code
# (server/fishtest/stats/LLRcalc.py, LLR_normalized and LLR_logistic: scipy's brentq on the
# secular equation) and fastchess's (sprt.cpp's getLLR, built from commit 74deac23; its
# logistic root search stops within 1e-3 of theta, so its logistic LLRs are off by up to 1e-3).
TOOLS_LLR = [
    # model, counts, elo0, elo1, fishtest, fastchess
    ("normalized", [365, 16618, 36229, 16974, 390], 0, 2, 2.250367703548933, 2.250367703546),
    ("normalized", [127, 4883, 10712, 5150, 104], -1.75, 0.25, 3.010154196606051, 3.010154204802),
    ("normalized", [0, 0, 0, 0, 5550], 0, 5, 111.79755508671465, 111.797555086714),
    ("logistic", [223, 9863, 21279, 10037, 246], 0.5, 2.5, -3.0741264395890813, -3.074422859737),
    ("logistic", [871, 26175, 55983, 26678, 821], 0, 2, -4.978672863444156, -4.979611872017),
    ("normalized", [1721, 77704, 208246, 77189, 1732], -1.75, 0.25, 3.1944805804435465, 3.194480534244),
    ("normalized", [521, 17154, 37050, 17170, 489], 0, 2, -2.9352652597228595, -2.935265259725),
    ("logistic", [406, 8728, 41933, 8848, 493], -0.2, 1.1, 2.936952001408947, 2.937135559104),
    ("logistic", [87, 6272, 81610, 6175, 108], -0.7, 0.2, 2.97648809836471, 2.976476616290),
    ("normalized", [0, 0, 0, 0, 0], 0, 2, -1.656807473997572e-07, -0.000000165681),
    ("logistic", [0, 0, 0, 0, 0], 0, 2, -1.6568230290702967e-07, -0.000000165658),
    ("normalized", [0, 0, 10, 0, 0], 0, 2, -0.0003500705369270819, -0.000350099203),
    ("logistic", [0, 0, 10, 0, 0], 0, 2, -0.05310252714475069, -0.053102527145),
    ("normalized", [3, 0, 0, 0, 0], -5, 5, -0.12212486851539223, -0.122124868532),
    ("logistic", [0, 0, 0, 0, 1], 0, 5, 0.014315849412829656, 0.014315849415),
]

# fastchess app/tests/elo_test.cpp ("EloPentanomial 1" to "3", commit 74deac23): Elo +/- error,
# nElo +/- error, score; Stats(ll, ld, wl, dd, wd, ww) with wl + dd summed.
PUBLISHED_ELO = [
    ([34, 54, 31 + 32, 64, 75], 55.58, 27.65, 57.94, 28.28, 0.579),
    ([332, 433, 457 + 41, 333, 334], -8.64, 10.33, -9.17, 10.96, 0.488),
    ([7895, 8757, 5485 + 200, 568, 9999], -21.04, 2.95, -19.01, 2.65, 0.470),
]


@pytest.mark.parametrize("model, counts, elo0, elo1, published", PUBLISHED_LLR)
def test_llr_as_published(model, counts, elo0, elo1, published):
    value = llr(Pentanomial(*counts), elo0, elo1, model)
    assert value == pytest.approx(published, abs=0.005)
    assert value == pytest.approx(llr_by_hand(model, counts, elo0, elo1), abs=1e-7)


def test_llr_of_all_wins_as_published():
    # fastchess "normalized pentanomial 3": 111.82 within doctest's 1% (fastchess itself gives 111.7976)
    value = llr(Pentanomial(ww=5550), 0, 5)
    assert value == pytest.approx(111.82, rel=0.01)
    assert value == pytest.approx(llr_by_hand("normalized", [0, 0, 0, 0, 5550], 0, 5), rel=1e-9)


@pytest.mark.parametrize("model, counts, elo0, elo1, fishtest, fastchess", TOOLS_LLR)
def test_llr_as_the_tools_compute_it(model, counts, elo0, elo1, fishtest, fastchess):
    value = llr(Pentanomial(*counts), elo0, elo1, model)
    assert value == pytest.approx(fishtest, rel=1e-8, abs=1e-11)
    assert value == pytest.approx(fastchess, abs=1e-7 if model == "normalized" else 1e-3)
    assert value == pytest.approx(llr_by_hand(model, counts, elo0, elo1), rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("counts, elo, error, nelo, nerror, score", PUBLISHED_ELO)
def test_elo_as_published(counts, elo, error, nelo, nerror, score):
    penta = Pentanomial(*counts)
    logistic, normalized = elo_estimate(penta), normalized_elo_estimate(penta)
    assert (logistic.elo, logistic.error) == pytest.approx((elo, error), abs=0.005)
    assert (normalized.elo, normalized.error) == pytest.approx((nelo, nerror), abs=0.005)
    assert penta.score == pytest.approx(score, abs=0.0005)
    # By hand: the pair scores one by one, their mean and variance, the formulas of the docstrings.
    scores = [a for n, a in zip(counts, A) for _ in range(n)]
    mean, variance = statistics.fmean(scores), statistics.pvariance(scores)
    margin = 1.959963984540054 * math.sqrt(variance / len(scores))
    to_elo = lambda s: -400 * math.log10(1 / s - 1)  # noqa: E731
    to_nelo = lambda s: (s - 0.5) / math.sqrt(2 * variance) * 800 / math.log(10)  # noqa: E731
    assert logistic == pytest.approx((to_elo(mean), to_elo(mean - margin), to_elo(mean + margin)), rel=1e-9)
    assert normalized == pytest.approx((to_nelo(mean), to_nelo(mean - margin), to_nelo(mean + margin)), rel=1e-9)
    assert (logistic.elo, logistic.error) == pytest.approx(
        elo_interval(scores), rel=1e-9
    )  # grader.tournaments.ratings agrees


def test_elo_of_degenerate_counts():
    assert elo_estimate(Pentanomial()) == (None, None, None)
    assert normalized_elo_estimate(Pentanomial()) == (None, None, None)
    assert elo_estimate(Pentanomial(ww=3)) == (None, None, None)  # a score of 1: no finite Elo
    assert elo_estimate(Pentanomial(dd_wl=10)) == (0.0, 0.0, 0.0)  # no variance: no width
    assert normalized_elo_estimate(Pentanomial(dd_wl=10)) == (None, None, None)  # 0 / 0
    assert elo_estimate(Pentanomial(ll=1, ww=1)).lower is None  # the interval leaves (0, 1)
    assert elo_estimate(Pentanomial(ll=1, ww=1)).error is None


# --- Properties ----------------------------------------------------------------------------
counts = st.lists(st.integers(0, 2000), min_size=5, max_size=5)
bounds = st.tuples(st.floats(-20, 20), st.floats(0.5, 20)).map(lambda b: (b[0], b[0] + b[1]))
models = st.sampled_from(["normalized", "logistic"])


def test_bounds():
    lower, upper = sprt_bounds(0.05, 0.05)
    assert (lower, upper) == pytest.approx((-2.944, 2.944), abs=0.001)
    assert lower == -upper == -math.log(19)
    assert sprt_bounds(0.05, 0.1) == pytest.approx((math.log(0.1 / 0.95), math.log(0.9 / 0.05)))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3000), st.integers(0, 3000), st.integers(0, 3000), st.floats(0.1, 20), models)
def test_llr_is_zero_for_symmetric_counts_and_bounds(outer, inner, middle, e, model):
    assert llr(Pentanomial(outer, inner, middle, inner, outer), -e, e, model) == pytest.approx(0, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(counts, bounds, models)
def test_llr_from_the_other_side(c, b, model):
    penta = Pentanomial(*c)
    assert llr(penta.flipped(), -b[1], -b[0], model) == pytest.approx(-llr(penta, *b, model), rel=1e-7, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(counts, bounds, models)
def test_llr_grows_with_a_won_pair(c, b, model):
    penta = Pentanomial(*c)
    assert llr(penta + Pentanomial(ww=1), *b, model) > llr(penta, *b, model)
    if penta.ll:
        lost_turned_won = Pentanomial(c[0] - 1, *c[1:4], c[4] + 1)
        assert llr(lost_turned_won, *b, model) > llr(penta, *b, model)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(10, 2000), min_size=5, max_size=5), bounds, models, st.integers(0, 3))
def test_llr_grows_when_a_pair_scores_half_a_point_more(c, b, model, i):
    better = list(c)
    better[i] -= 1
    better[i + 1] += 1
    assert llr(Pentanomial(*better), *b, model) > llr(Pentanomial(*c), *b, model)


# Bounds as users give them, to hundredths of an Elo: the second route finds the best mean
# m by a search on m - 1/2 = t sigma, which loses digits to cancellation when 0 < |t| < 1e-6.
hundredths = bounds.map(lambda b: (round(b[0], 2), round(b[0], 2) + max(round(b[1] - b[0], 2), 0.5)))


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(5, 2000), min_size=5, max_size=5), hundredths, models)
def test_llr_by_hand_random(c, b, model):
    # Every bin holds a few pairs: with bins nearly empty, the normalized model's fixed-point
    # iteration (the tools' and this module's) can settle on a lesser stationary point than the
    # best distribution that the second route finds.
    assert llr(Pentanomial(*c), *b, model) == pytest.approx(llr_by_hand(model, c, *b), rel=1e-7, abs=1e-8)


def test_llr_of_degenerate_counts_is_finite():
    for penta in (Pentanomial(), Pentanomial(ll=1), Pentanomial(ww=10**6), Pentanomial(dd_wl=7)):
        for model in ("normalized", "logistic"):
            assert math.isfinite(llr(penta, -3, 3, model))


def test_sprt_decisions():
    accepted = sprt(Pentanomial(20, 1334, 3810, 1569, 35), 0, 2)  # fishtest: LLR 2.95, passed
    assert accepted.decision == "H1" and accepted.llr >= accepted.upper
    rejected = sprt(Pentanomial(390, 91902, 261789, 90790, 389), -1.75, 0.25)  # fishtest: LLR -2.97, failed
    assert rejected.decision == "H0" and rejected.llr <= rejected.lower
    # fishtest stopped this one at -2.935, within its correction for overshoot; fastchess plays on.
    assert sprt(Pentanomial(521, 17154, 37050, 17170, 489), 0, 2).decision is None
    going_on = sprt(Pentanomial(372, 17511, 39320, 17934, 399), 0, 2, alpha=0.01, beta=0.01)
    assert going_on.decision is None and going_on.lower < going_on.llr < going_on.upper


def test_sprt_result_fields():
    penta = Pentanomial(34, 54, 63, 64, 75)
    result = sprt(penta, 0, 10)
    assert isinstance(result, SprtResult)
    assert (result.model, result.alpha, result.beta, result.elo0, result.elo1, result.penta) == (
        "normalized", 0.05, 0.05, 0, 10, penta,
    )  # fmt: skip
    assert (result.elo, *result.interval) == normalized_elo_estimate(penta)  # in the model's Elo
    logistic = sprt(penta, 0, 10, model="logistic")
    assert (logistic.elo, *logistic.interval) == elo_estimate(penta)
    assert logistic.llr == llr(penta, 0, 10, "logistic")


@pytest.mark.parametrize("kwargs, message", [
    ({"elo0": 2, "elo1": 0}, "elo0 must be less than elo1 (H0: Elo = elo0, H1: Elo = elo1); got 2 and 0"),
    ({"elo0": 1, "elo1": 1}, "elo0 must be less than elo1 (H0: Elo = elo0, H1: Elo = elo1); got 1 and 1"),
    ({"elo1": math.inf}, "elo0 and elo1 must be finite numbers; got 0 and inf"),
    ({"alpha": 0}, "alpha must be between 0 and 1 (exclusive), like 0.05; got 0"),
    ({"beta": 1.5}, "beta must be between 0 and 1 (exclusive), like 0.05; got 1.5"),
    ({"alpha": 0.5, "beta": 0.5}, "alpha + beta must be less than 1, like 0.05 + 0.05; got 0.5 + 0.5"),
    ({"model": "bayesian"}, "model must be 'normalized' or 'logistic'; got 'bayesian'"),
])  # fmt: skip
def test_bad_settings(kwargs, message):
    settings_ = {"elo0": 0, "elo1": 2, **kwargs}
    with pytest.raises(SprtError) as e:
        sprt(Pentanomial(1, 2, 3, 2, 1), **settings_)
    assert str(e.value) == message
    assert isinstance(e.value, ValueError) and isinstance(e.value, GraderError)


def test_bounds_too_far_out():
    with pytest.raises(SprtError, match="use Elo bounds between -4000 and 4000"):
        llr(Pentanomial(1, 2, 3, 2, 1), 0, 10**6, "logistic")
    with pytest.raises(SprtError, match="too far from 0"):
        llr(Pentanomial(1, 2, 3, 2, 1), 0, 1000, "normalized")


def test_pentanomial():
    penta = Pentanomial()
    for first, second in [(0, 0), (0, 0.5), (0.5, 0), (0.5, 0.5), (1, 0), (0, 1), (1, 0.5), (0.5, 1), (1, 1)]:
        penta = penta.add(first, second)
    assert penta == Pentanomial(ll=1, ld=2, dd_wl=3, wd=2, ww=1)
    assert (penta.pairs, penta.games, penta.score) == (9, 18, 0.5)
    assert Pentanomial(ww=1, ld=1).score == 0.625
    assert Pentanomial().score == 0.5
    assert Pentanomial(1, 2, 3, 4, 5).flipped() == Pentanomial(5, 4, 3, 2, 1)
    assert Pentanomial(1, 2, 3, 4, 5) + Pentanomial(ww=1) == Pentanomial(1, 2, 3, 4, 6)
    with pytest.raises(SprtError, match="a game's result must be 1, 0.5 or 0 for engine A; got 2"):
        penta.add(2, 0)
    with pytest.raises(SprtError, match="pair counts must be whole numbers"):
        Pentanomial(-1)


def test_elo_is_labelled_and_a_test_without_one_says_why():
    """The SPRT's Elo names its model; identical engines (every pair DD/WL) get the reason there
    is no normalized Elo, not 'n/a'; an LLR that rounds to zero prints as 0, never -0."""
    from grader.tournaments.sprt import SprtState, no_elo_reason
    from grader.tournaments.tables import sprt_text

    alike = sprt(Pentanomial(dd_wl=200), 0, 10)
    state = SprtState(*(getattr(alike, f) for f in SprtResult.__dataclass_fields__), ("v2", "v1"), 400)
    text = sprt_text(state)
    assert "Elo (normalized) none: every pair ended alike (200 of 200 DD/WL, as between identical engines)" in text
    assert "n/a" not in text
    tiny = sprt(Pentanomial(ll=1, ld=3, dd_wl=10, wd=3, ww=1), 0, 10)
    state = SprtState(*(getattr(tiny, f) for f in SprtResult.__dataclass_fields__), ("v2", "v1"), 400)
    state = SprtState(**{**{f: getattr(state, f) for f in state.__dataclass_fields__}, "llr": -0.0001})
    assert "LLR 0.00 (" in sprt_text(state) and "Elo (normalized) +0.0" in sprt_text(state)
    assert no_elo_reason(Pentanomial()) == "no game pair counted yet"
    assert "won every game" in no_elo_reason(Pentanomial(ww=3), "logistic")
