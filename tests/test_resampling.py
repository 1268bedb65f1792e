"""Resampling statistics (``numerics.metrics.resampling``) against brute force and plain numpy.

Routes compared: the exact permutation p-values against an enumeration written here with
``itertools.permutations`` and ``numpy.polyfit`` / ``scipy.stats.spearmanr``; the Monte Carlo
p-values against that enumeration within their sampling error; the bootstrap estimates against
numpy's mean and least-squares slope, and its interval against a percentile bootstrap drawn here.
Generic points: unequal level spacings, unsorted means, ties in neither x nor y.
"""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import spearmanr

from implicitbias.numerics.metrics import memory_stats
from implicitbias.numerics.metrics import resampling as rs
from implicitbias.theory.params import ParameterError

LEVELS = (1.0, 2.0, 4.0, 7.0, 11.0)
MEANS = (0.3, 0.1, 0.9, 0.5, 1.2)


def _slope(x, y):
    return np.polyfit(x, y, 1)[0]


def _enumerated_trend_p(x, y):
    observed = _slope(x, y)
    slopes = np.array([_slope(x, np.asarray(y)[list(o)]) for o in itertools.permutations(range(len(y)))])
    return (slopes >= observed - 1e-12).mean(), (slopes <= observed + 1e-12).mean()


def test_trend_test_exact_p_values_match_enumeration():
    greater, less = _enumerated_trend_p(LEVELS, MEANS)
    up = rs.trend_test(LEVELS, MEANS, "greater")
    down = rs.trend_test(LEVELS, MEANS, "less")
    assert up.slope == pytest.approx(_slope(LEVELS, MEANS))
    assert up.p == pytest.approx(greater) and down.p == pytest.approx(less)
    assert up.exact and up.pairings == 120 and up.n == 5
    assert 0 < greater < 0.2 < less  # an increasing trend, not a perfect one


def test_trend_test_enumerates_exactly_at_eight_levels_and_samples_beyond():
    eight = rs.trend_test(range(8), range(8))
    assert eight.exact and eight.pairings == 40320 and eight.p == pytest.approx(1 / 40320)
    nine = rs.trend_test(range(9), range(9))  # one in 9! pairings is as steep: (1 + 0) / (1 + 9999) by Monte Carlo
    assert not nine.exact and nine.pairings == 9999 and nine.p == pytest.approx(1e-4)


@pytest.mark.parametrize("levels, means", [((1, 2), (1, 2)), ((1, 1, 1), (1, 2, 3)), ((1, 2, 3), (1, 2))])
def test_trend_test_refuses_too_few_or_mismatched_levels(levels, means):
    with pytest.raises(ParameterError, match="levels"):
        rs.trend_test(levels, means)


def _enumerated_stratified_p(strata):
    kept = [(np.asarray(x), np.asarray(y)) for x, y in strata if len(x) >= 3]
    observed = sum(spearmanr(x, y)[0] for x, y in kept)
    per_stratum = [[spearmanr(x, y[list(o)])[0] for o in itertools.permutations(range(len(y)))] for x, y in kept]
    sums = np.array([sum(c) for c in itertools.product(*per_stratum)])
    return observed, (sums <= observed + 1e-12).mean(), (sums >= observed - 1e-12).mean()


STRATA = [([0.5, 1.5, 0.2, 3.0], [2.0, 1.1, 3.3, 0.4]),  # strongly decreasing
          ([10.0, 30.0, 20.0], [0.7, 0.9, 0.1]),  # mixed
          ([1.0, 2.0], [5.0, 1.0])]  # two points: left out


def test_stratified_rank_test_exact_p_values_match_enumeration():
    observed, less, greater = _enumerated_stratified_p(STRATA)
    r = memory_stats.stratified_rank_test(STRATA)
    assert r["statistic"] == pytest.approx(observed)
    assert r["rho"] == pytest.approx([spearmanr(x, y)[0] for x, y in STRATA[:2]])
    assert r["p_less"] == pytest.approx(less) and r["p_greater"] == pytest.approx(greater)
    assert r["exact"] and r["orderings"] == 24 * 6 and r["n"] == 7
    assert less < 0.5 < greater


def test_stratified_rank_test_samples_beyond_8_factorial_orderings():
    """5! x 5! x 3! = 86400 orderings > 8!: Monte Carlo, within its binomial error of the enumeration."""
    strata = [([1.0, 2.0, 3.5, 4.0, 6.0], [0.2, 0.1, 0.5, 0.3, 0.9]), ([1.0, 3.0, 2.0, 5.0, 4.0], [4.0, 3.0, 5.0, 1.0, 2.0]),
              ([0.1, 0.2, 0.3], [3.0, 1.0, 2.0])]
    observed, less, greater = _enumerated_stratified_p(strata)
    r = memory_stats.stratified_rank_test(strata, seed=3)
    assert not r["exact"] and r["orderings"] == 9999 and r["statistic"] == pytest.approx(observed)
    sd = math.sqrt(0.25 / 9999)
    assert abs(r["p_less"] - less) < 5 * sd and abs(r["p_greater"] - greater) < 5 * sd


def test_stratified_rank_test_enumerates_exactly_at_8_factorial():
    x = [0.3, 1.0, 0.2, 5.0, 4.0, 2.5, 7.0, 6.0]
    r = memory_stats.stratified_rank_test([(x, x)])
    assert r["exact"] and r["orderings"] == 40320
    assert r["p_greater"] == pytest.approx(1 / 40320) and r["p_less"] == pytest.approx(1.0)


def test_stratified_rank_test_constant_stratum_has_zero_rho_and_no_stratum_is_refused():
    r = memory_stats.stratified_rank_test([([1.0, 2.0, 3.0], [4.0, 4.0, 4.0])])
    assert r["rho"] == [0.0] and r["p_less"] == 1.0 and r["p_greater"] == 1.0
    with pytest.raises(ParameterError, match="strata"):
        memory_stats.stratified_rank_test([([1.0, 2.0], [2.0, 1.0])])


def _percentile_bootstrap(values, level, draws=20000, seed=11):
    rng = np.random.default_rng(seed)
    v = np.asarray(values)
    means = v[rng.integers(0, len(v), size=(draws, len(v)))].mean(axis=1)
    return np.quantile(means, [(1 - level) / 2, (1 + level) / 2])


@pytest.mark.parametrize("level", [0.95, 0.6])
def test_mean_ci_against_a_percentile_bootstrap_drawn_here(level):
    values = np.random.default_rng(5).normal(2.0, 1.5, size=12)
    r = rs.mean_ci(list(values) + [None, math.nan, math.inf], level=level)
    lo, hi = _percentile_bootstrap(values, level)
    assert r.estimate == pytest.approx(values.mean()) and r.n == 12 and r.level == level
    assert r.lo == pytest.approx(lo, abs=0.08) and r.hi == pytest.approx(hi, abs=0.08)


def test_mean_ci_rows_is_mean_ci_row_by_row_and_nests_its_levels():
    rows = np.random.default_rng(8).normal(size=(5, 9))
    (lo, hi), (wlo, whi) = rs.mean_ci_rows(rows, (0.95, 0.99), seed=2)
    for i, row in enumerate(rows):
        one = rs.mean_ci(row.tolist(), seed=2)
        assert (one.lo, one.hi) == pytest.approx((lo[i], hi[i]), abs=1e-12)
        lo_, hi_ = _percentile_bootstrap(row, 0.95)
        assert lo[i] == pytest.approx(lo_, abs=0.1) and hi[i] == pytest.approx(hi_, abs=0.1)
    assert np.all(wlo <= lo) and np.all(hi <= whi) and np.all(wlo < whi)


def test_bootstrap_edge_cases():
    two = rs.mean_ci([1.0, 3.0])  # two seeds already resample: a real interval
    assert two.lo < two.estimate == 2.0 < two.hi
    one = rs.mean_ci([1.5])
    assert one.lo == one.hi == one.estimate == 1.5 and one.n == 1
    assert math.isnan(rs.mean_ci([]).estimate) and rs.mean_ci([]).n == 0
    pair = rs.bootstrap([[1.0, 2.0], [2.0, 4.0, 9.0]], lambda a, b: b.mean(axis=-1) - a.mean(axis=-1))
    assert pair.n == 2 and pair.estimate == pytest.approx(3.5) and pair.lo < 3.5 < pair.hi


def test_bootstrap_interval_is_widened_to_hold_a_biased_estimate():
    """The range of resampled rows is never above the sample's range: the percentile interval sits
    at or below the estimate, and the interval returned is widened up to it."""
    values = [0.0, 0.1, 0.5, 2.0, 2.2]
    r = rs.bootstrap([values], lambda a: a.max(axis=-1) - a.min(axis=-1))
    assert r.estimate == pytest.approx(2.2) and r.hi == pytest.approx(2.2) and r.lo < 2.2


def test_slope_ci_estimate_is_the_least_squares_slope_of_the_means():
    rng = np.random.default_rng(2)
    levels = [16.0, 32.0, 64.0, 256.0]
    samples = [rng.normal(0.01 * b, 0.3, size=5) for b in levels]
    r = rs.slope_ci(levels, samples)
    assert r.estimate == pytest.approx(_slope(levels, [s.mean() for s in samples]))
    assert r.n == 4 and r.lo < r.estimate < r.hi
    exact = rs.slope_ci([1.0, 2.0, 5.0], [[1.0, 1.0, 1.0], [3.0, 3.0], [2.0, 2.0, 2.0, 2.0]])  # no seed noise
    assert exact.lo == pytest.approx(exact.hi) == pytest.approx(_slope([1, 2, 5], [1, 3, 2]))


@pytest.mark.parametrize("levels, samples", [((1.0,), [[1.0]]), ((2.0, 2.0), [[1.0], [2.0]]), ((1.0, 2.0), [[1.0]])])
def test_slope_ci_refuses_too_few_levels(levels, samples):
    with pytest.raises(ParameterError, match="levels"):
        rs.slope_ci(levels, samples)


def test_smallest_designs_each_function_accepts():
    two = rs.slope_ci([1.0, 3.0], [[1.0, 2.0], [4.0, 5.0, 6.0]])
    assert two.estimate == pytest.approx((5.0 - 1.5) / 2) and two.n == 2
    three = rs.trend_test([1.0, 2.0, 3.0], [0.5, 0.1, 0.9])
    assert three.p == pytest.approx(_enumerated_trend_p([1, 2, 3], [0.5, 0.1, 0.9])[0]) and three.n == 3
    tied = rs.trend_test([1.0, 1.0, 2.0], [0.2, 0.4, 0.9])  # three points, two distinct levels
    assert tied.p == pytest.approx(_enumerated_trend_p([1, 1, 2], [0.2, 0.4, 0.9])[0])
    assert math.isnan(rs.bootstrap([], lambda a: a.mean(axis=-1)).estimate)


def test_default_seed_is_zero():
    """Every resampled result is reproducible: the default seed is 0 (documented), another seed differs."""
    values = [0.3, 0.9, 0.1, 0.5, 0.7, 0.2]
    assert rs.mean_ci(values) == rs.mean_ci(values, seed=0) != rs.mean_ci(values, seed=1)
    mean = lambda a: a.mean(axis=-1)  # noqa: E731
    assert rs.bootstrap([values], mean) == rs.bootstrap([values], mean, seed=0) != rs.bootstrap([values], mean, seed=1)
    nine = (range(9), [0.1, 0.5, 0.2, 0.9, 0.4, 0.3, 0.8, 0.6, 0.7])
    assert rs.trend_test(*nine) == rs.trend_test(*nine, seed=0) != rs.trend_test(*nine, seed=1)
    big = [([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], [0.1, 0.5, 0.2, 0.9, 0.4, 0.3, 0.8, 0.6, 0.7])]
    assert memory_stats.stratified_rank_test(big) == memory_stats.stratified_rank_test(big, seed=0) != memory_stats.stratified_rank_test(big, seed=1)


def test_a_one_row_sample_beside_larger_ones_is_held_fixed():
    """Resampling one row with replacement always gives that row: the CI equals the one with the row
    repeated (a constant sample), and scipy's refusal of one-observation samples never surfaces."""
    from implicitbias.numerics.metrics.resampling import slope_ci

    single = slope_ci([1, 2, 5], [[1.0], [3.0, 3.5, 2.5], [2.0, 2.2]])
    repeated = slope_ci([1, 2, 5], [[1.0, 1.0], [3.0, 3.5, 2.5], [2.0, 2.2]])
    assert (single.lo, single.estimate, single.hi) == (repeated.lo, repeated.estimate, repeated.hi)
    assert single.lo < single.estimate < single.hi
