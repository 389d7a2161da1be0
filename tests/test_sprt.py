"""The SPRT over game pairs (chess_endgame.sprt): its LLR against independent computations and published
values, its bounds, its symmetry, and its error rates on simulated matches."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from chess_endgame.play import elo
from chess_endgame.play.sprt import NELO_PER_T, Pentanomial, Sprt, SprtBounds, llr, normalized_elo, simulate

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def frequencies(counts):
    """(pairs, frequencies), with an empty cell counting 1e-3 pairs as fishtest's LLRcalc.regularize does."""
    cells = [c if c else 1e-3 for c in counts]
    return sum(cells), [c / sum(cells) for c in cells]


def loglik_mean(p, s):
    """max sum p log q over distributions q on SCORES with mean s. The maximum is q_i = p_i / (1 + x (a_i - s))
    where sum p_i (a_i - s) / (1 + x (a_i - s)) = 0 (Van den Bergh, support_MLE_multinomial.pdf, Prop. 1.1);
    that sum falls from +inf to -inf on (-1 / (1 - s), 1 / s), and plain bisection finds its root."""
    lo, hi = -1 / (1 - s), 1 / s
    for _ in range(200):
        x = (lo + hi) / 2
        if sum(pi * (a - s) / (1 + x * (a - s)) for pi, a in zip(p, SCORES, strict=True)) > 0:
            lo = x
        else:
            hi = x
    return sum(pi * math.log(pi / (1 + x * (a - s))) for pi, a in zip(p, SCORES, strict=True))


def loglik_moments(p, mean, var):
    """max sum p log q over q on SCORES with the given mean and variance (-inf when no such q is near p): by
    duality, sum p log p - max over (x, y) of the concave sum p log(1 + x u + y w), u = a - mean,
    w = u^2 - var; a damped two-dimensional Newton ascent."""
    p, a = np.array(p), np.array(SCORES)
    rows = np.array([a - mean, (a - mean) ** 2 - var])

    def height(y):
        d = 1 + y @ rows
        return float(p @ np.log(d)) if (d > 0).all() else -math.inf

    y, top = np.zeros(2), 0.0
    for _ in range(200):
        d = 1 + y @ rows
        step = np.linalg.solve((rows * (p / d ** 2)) @ rows.T, rows @ (p / d))
        while (new := height(y + step)) < top and np.abs(step).max() > 1e-16:
            step /= 2
        y, top = y + step, max(top, new)
        if top > 50:  # unbounded: no distribution has these moments
            return -math.inf
        if np.abs(step).max() < 1e-14:
            break
    return float(p @ np.log(p)) - top


def loglik_t(p, t):
    """max sum p log q over q on SCORES with (mean - 1/2) / sd = t, as a profile: the best distribution with
    each mean m and the standard deviation (m - 1/2) / t that the constraint then demands, maximized over m by
    golden section. For 0 < t < 1 / sqrt(3) (nElo below 114, all these tests use) such moments exist when
    m - 1/2 lies between t^2 / (4 (1 + t^2)) (the least variance of a mean in (1/2, 3/4)) and t / (2 sqrt(1 + t^2))
    (the largest variance, m (1 - m))."""
    if t == 0:
        return loglik_mean(p, 0.5)
    if t < 0:
        return loglik_t(p[::-1], -t)
    lo, hi = 0.5 + t * t / (4 * (1 + t * t)), 0.5 + t / (2 * math.sqrt(1 + t * t))
    g = (math.sqrt(5) - 1) / 2
    for _ in range(80):
        m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
        f1, f2 = (loglik_moments(p, m, ((m - 0.5) / t) ** 2) for m in (m1, m2))
        lo, hi = (lo, m2) if f1 > f2 else (m1, hi)
    return max(f1, f2)


def llr_by_hand(counts, elo0, elo1, model):
    n, p = frequencies(counts)
    if model == "logistic":
        s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
        return n * (loglik_mean(p, s1) - loglik_mean(p, s0))
    # nElo per game -> t-value of the pair score (the per-game sd is sqrt(2) times the pair's): fishtest's
    # LLRcalc.LLR_normalized
    t0, t1 = (e / (800 / math.log(10)) * math.sqrt(2) for e in (elo0, elo1))
    return n * (loglik_t(p, t1) - loglik_t(p, t0))


VECTORS = [
    (0, 0, 1, 0, 0),
    (5, 0, 0, 0, 0),
    (1, 1, 10, 11, 7),
    (3, 40, 100, 45, 2),
    (30, 200, 400, 210, 25),
    (0, 120, 700, 150, 0),
    (10789, 19328, 33806, 19402, 10543),  # fishtest's stat_util.py self-test pentanomial
    (365, 16618, 36229, 16974, 390),
]


@pytest.mark.parametrize("counts", VECTORS)
@pytest.mark.parametrize("elo0, elo1", [(0, 5), (-3, 1), (0.5, 2.5), (-10, 20)])
def test_llr_logistic_equals_the_independent_mle(counts, elo0, elo1):
    assert llr(counts, SprtBounds(elo0, elo1, model="logistic")) == pytest.approx(
        llr_by_hand(counts, elo0, elo1, "logistic"), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("counts", VECTORS)
@pytest.mark.parametrize("elo0, elo1", [(0, 2), (-1.75, 0.25), (1, 5), (-10, 20)])
def test_llr_normalized_equals_the_profile_likelihood(counts, elo0, elo1):
    assert llr(counts, SprtBounds(elo0, elo1, model="normalized")) == pytest.approx(
        llr_by_hand(counts, elo0, elo1, "normalized"), rel=1e-7, abs=1e-9)


# fastchess's published SPRT cases (app/tests/sprt_test.cpp in Disservin/fastchess, checked there to 1%): its
# Stats(LL, LD, WL, DD, WD, WW) pools WL and DD into the middle cell.
@pytest.mark.parametrize("counts, elo0, elo1, model, expected", [
    ((365, 16618, 36029 + 200, 16974, 390), 0, 2, "normalized", 2.25),
    ((127, 4883, 10311 + 401, 5150, 104), -1.75, 0.25, "normalized", 3.01),
    ((0, 0, 0, 0, 5550), 0, 5, "normalized", 111.82),
    ((223, 9863, 20279 + 1000, 10037, 246), 0.5, 2.5, "logistic", -3.07),
    ((871, 26175, 55003 + 980, 26678, 821), 0, 2, "logistic", -4.98),
])
def test_llr_matches_fastchess(counts, elo0, elo1, model, expected):
    assert llr(counts, SprtBounds(elo0, elo1, model=model)) == pytest.approx(expected, rel=0.01)


def test_no_pairs_give_zero():
    assert llr((0, 0, 0, 0, 0), SprtBounds(0, 5)) == 0.0
    state = Sprt(SprtBounds(0, 5)).state()
    assert (state.llr, state.pairs, state.decision, state.elo_margin) == (0.0, 0, None, math.inf)
    assert math.isnan(state.elo) and math.isnan(state.nelo)


def test_bounds():
    bounds = SprtBounds.parse("elo0=0 elo1=5 alpha=0.05 beta=0.05")
    assert bounds == SprtBounds(0, 5, 0.05, 0.05, "normalized")
    assert bounds.lower == pytest.approx(-math.log(19)) and bounds.upper == pytest.approx(math.log(19))
    assert round(bounds.upper, 3) == 2.944
    assert SprtBounds.parse(["model=logistic", "elo1=2.5", "elo0=-1"]) == SprtBounds(-1, 2.5, model="logistic")
    uneven = SprtBounds.parse("beta=0.1 elo1=5 elo0=0 alpha=0.01")
    assert (uneven.lower, uneven.upper) == (pytest.approx(math.log(0.1 / 0.99)), pytest.approx(math.log(90)))
    assert SprtBounds.parse(str(uneven)) == uneven


@pytest.mark.parametrize("counts", VECTORS + [(0, 2, 3, 9, 4)])
@pytest.mark.parametrize("model", ["normalized", "logistic"])
def test_swapping_the_engines_negates_the_llr(counts, model):
    """Swapping the engines turns a pair score a into 1 - a, so the counts reverse; the hypotheses
    "elo0" < "elo1" become "-elo1" < "-elo0", H0 and H1 trade places, and the LLR of the one test is exactly
    minus the other's. Reversing the counts alone does not negate it (the bounds are not symmetric about 0)."""
    reversed_counts = counts[::-1]
    value = llr(counts, SprtBounds(-2, 6, model=model))
    assert llr(reversed_counts, SprtBounds(-6, 2, model=model)) == pytest.approx(-value, rel=1e-9, abs=1e-12)
    assert llr(reversed_counts, SprtBounds(-2, 6, model=model)) != pytest.approx(-value, rel=1e-3)
    # and with alpha and beta swapped too, the stopping bounds swap and change sign: H0 <-> H1
    bounds, swapped = SprtBounds(-2, 6, 0.01, 0.1, model), SprtBounds(-6, 2, 0.1, 0.01, model)
    assert (swapped.lower, swapped.upper) == (pytest.approx(-bounds.upper), pytest.approx(-bounds.lower))


def test_pentanomial_and_pairs():
    assert [Pentanomial.pair_points(a, b) for a, b in [(1, 1), (1, 0.5), (0, 1), (0.5, 0.5), (0, 0)]] == [
        2, 1.5, 1, 1, 0]
    counts = Pentanomial()
    for points in (2, 1.5, 1, 1, 0, 1.5):
        counts.add(points)
    assert counts.counts == (1, 0, 2, 2, 1) and counts.pairs == 6


def test_sprt_accumulates_and_its_first_decision_stands():
    sprt = Sprt(SprtBounds(0, 10, model="logistic"))
    points = [2, 1.5, 1, 1, 0.5, 2, 1.5, 1] * 3
    for p in points:
        sprt.add_pair(p)
    state = sprt.state()
    assert state.counts == (0, 3, 9, 6, 6) and state.pairs == 24 and not sprt.done
    assert state.llr == pytest.approx(llr(state.counts, sprt.bounds))
    assert (state.elo, state.elo_margin) == elo.pentanomial(points)
    assert state.nelo > 0 and 0 < state.nelo_margin < math.inf
    while not sprt.done:
        sprt.add_pair(2)
    assert sprt.decision == "H1" and sprt.llr >= sprt.bounds.upper
    while sprt.llr > sprt.bounds.lower and sprt.pentanomial.pairs < 1000:  # pairs in play when the test stopped
        sprt.add_pair(0)
    assert sprt.llr <= sprt.bounds.lower and sprt.state().decision == "H1"


def test_normalized_elo():
    """nElo = (score - 1/2) / sd per game * 800 / ln 10, the sd per game being sqrt(2) times the pair score's."""
    counts = (30, 200, 400, 210, 25)
    x = [a for a, c in zip(SCORES, counts, strict=True) for _ in range(c)]
    value, margin = normalized_elo(counts)
    assert value == pytest.approx((np.mean(x) - 0.5) / (np.std(x) * math.sqrt(2)) * NELO_PER_T)
    assert margin == pytest.approx(1.96 * NELO_PER_T / math.sqrt(2 * len(x)), rel=0.01)  # ~ 1.96 / sqrt(games)


def rates(elo_diff, bounds, runs, seed):
    rng = random.Random(seed)
    decisions = [simulate(elo_diff, 0.5, bounds, rng, max_pairs=20_000) for _ in range(runs)]
    return decisions.count("H1") / runs, decisions.count("H0") / runs


# Each game is drawn half the time, so 20 logistic Elo are about 28 nElo. Fixed seeds make every rate below one
# fixed number; the limits leave room for the binomial spread a change of seed would bring (at 5% errors over
# 200 runs: 1.5%), and a wrong LLR or wrong stopping bounds fails them.
@pytest.mark.slow
@pytest.mark.parametrize("bounds", [SprtBounds(0, 20, model="logistic"), SprtBounds(0, 40, model="normalized")])
def test_simulated_match_at_elo0_fails(bounds):
    passed, failed = rates(0, bounds, 200, seed=1)
    assert failed >= 0.9 and passed + failed == 1  # 0.935 and 0.95 with these seeds


@pytest.mark.slow
@pytest.mark.parametrize("bounds, true_elo", [
    (SprtBounds(0, 20, model="logistic"), 45),
    (SprtBounds(0, 40, model="normalized"), 60),  # about 87 nElo
])
def test_simulated_match_well_above_elo1_passes(bounds, true_elo):
    passed, failed = rates(true_elo, bounds, 200, seed=2)
    assert passed >= 0.95 and passed + failed == 1  # 1.0 with these seeds


def test_simulated_match_between_the_bounds_goes_both_ways():
    passed, failed = rates(10, SprtBounds(0, 20, model="logistic"), 100, seed=3)
    assert 0.25 <= passed <= 0.75 and passed + failed == 1


@pytest.mark.parametrize("text, message", [
    ("elo0=0 elo1=5 gamma=1", "unknown key 'gamma'"),
    ("elo0=zero elo1=5", "elo0 must be a number, got 'zero'"),
    ("elo0=0 elo1=nan", "elo1 must be a finite number"),
    ("elo0=5 elo1=0", r"elo1 \(0\) must be greater than elo0 \(5\)"),
    ("elo0=0 elo1=0", "must be greater than elo0"),
    ("elo0=0 elo1=5 alpha=0.5", r"alpha must be in \(0, 0.5\), got 0.5"),
    ("elo0=0 elo1=5 beta=0", r"beta must be in \(0, 0.5\)"),
    ("elo0=0 elo1=5 beta=-0.1", r"beta must be in \(0, 0.5\)"),
    ("elo0=0 elo1=5 model=bayesian", "unknown model 'bayesian'"),
    ("elo0=-200000 elo1=0 model=logistic", r"elo0 must be within -1000..1000, got -200000"),
    ("elo0=0 elo1=1e6", r"elo1 must be within -1000..1000"),
    ("elo0=0", "elo0 and elo1 are required"),
    ("elo0=0 elo1=5 elo0=1", "elo0 is given twice"),
    ("elo0 0 elo1 5", "expected key=value, got 'elo0'"),
    ("elo0= elo1=5", "expected key=value"),
])
def test_bad_bounds_are_refused_in_one_line(text, message):
    with pytest.raises(ValueError, match=message) as error:
        SprtBounds.parse(text)
    assert str(error.value).startswith("SPRT: ") and "\n" not in str(error.value)


def test_other_bad_input():
    with pytest.raises(ValueError, match="greater than elo0"):
        SprtBounds(3, 1)
    with pytest.raises(ValueError, match="five non-negative"):
        llr((1, 2, 3), SprtBounds(0, 5))
    with pytest.raises(ValueError, match="five non-negative"):
        llr((1, 2, 3, -1, 0), SprtBounds(0, 5))
    with pytest.raises(ValueError, match="pair points must be"):
        Pentanomial().add(0.25)
    with pytest.raises(ValueError, match="game result must be"):
        Pentanomial.pair_points(1, 2)
    with pytest.raises(ValueError, match="draw ratio"):
        simulate(300, 0.9, SprtBounds(0, 5), random.Random(0))
