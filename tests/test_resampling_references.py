"""Resampling statistics pinned against independent references at generic points, every branch
(issue 27 item 6): the percentile bootstrap of ``numerics.metrics.resampling`` against the exact
bootstrap distribution (all n^n equally likely resamples enumerated with itertools) and against
``scipy.stats.bootstrap`` on the same resamples; the stratified rank test of
``numerics.metrics.memory_stats`` against ``scipy.stats.permutation_test`` (exact pairings) and, in
its Monte Carlo branch, against the enumeration of all 9! orderings and the formula
p = (1 + hits) / (1 + draws).  Skewed data throughout, so that a basic (reflected) interval, a
wrong tail or a wrong level lands far from the reference."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import bootstrap as scipy_bootstrap
from scipy.stats import pearsonr, permutation_test, rankdata, spearmanr

from implicitbias.numerics.metrics import memory_stats as ms
from implicitbias.numerics.metrics import resampling as rs

SKEWED = np.array([0.1, 0.3, 0.35, 1.9, 4.2, 0.7])  # a long right tail: percentile and basic intervals differ


def _exact_bootstrap(values, statistic=np.mean):
    """The statistic over all n^n resamples with replacement (each equally likely)."""
    v = np.asarray(values)
    picks = np.array(list(itertools.product(range(len(v)), repeat=len(v))))
    return statistic(v[picks], axis=-1)


def _tolerance(tail, resamples=1999):
    """Four binomial standard errors of a tail fraction estimated from ``resamples`` draws, plus one draw."""
    return 4 * math.sqrt(tail * (1 - tail) / resamples) + 1 / resamples


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_mean_ci_ends_are_the_tail_quantiles_of_the_exact_bootstrap_distribution(level):
    exact = _exact_bootstrap(SKEWED)
    r = rs.mean_ci(SKEWED.tolist(), level=level)
    tail = (1 - level) / 2
    assert abs(np.mean(exact < r.lo) - tail) < _tolerance(tail)
    assert abs(np.mean(exact > r.hi) - tail) < _tolerance(tail)
    assert r.estimate == pytest.approx(SKEWED.mean())


def test_mean_ci_is_scipys_percentile_bootstrap_on_the_same_resamples():
    ci = scipy_bootstrap((SKEWED,), np.mean, n_resamples=1999, method="percentile", vectorized=True, batch=100,
                         rng=np.random.default_rng(0)).confidence_interval
    r = rs.mean_ci(SKEWED.tolist())
    assert (r.lo, r.hi) == pytest.approx((ci.low, ci.high), rel=1e-12)


def test_mean_ci_rows_ends_are_the_tail_quantiles_of_each_rows_exact_bootstrap():
    rows = np.array([SKEWED, -SKEWED[::-1] * 0.5, [2.0, 2.1, 1.7, 2.6, 0.4, 2.2]])
    levels = (0.95, 0.7)
    exact = [_exact_bootstrap(row) for row in rows]
    for level, (lo, hi) in zip(levels, rs.mean_ci_rows(rows, levels, seed=3)):
        tail = (1 - level) / 2
        for i, distribution in enumerate(exact):
            assert abs(np.mean(distribution < lo[i]) - tail) < _tolerance(tail)
            assert abs(np.mean(distribution > hi[i]) - tail) < _tolerance(tail)


def test_bootstrap_of_two_independent_samples_matches_their_exact_joint_bootstrap():
    """Two samples of 4 and 5 seeds resampled independently (4^4 x 5^5 = 800,000 equally likely pairs,
    enumerated as the outer sum of their exact bootstrap distributions): the difference of means."""
    a, b = np.array([0.2, 1.5, 0.4, 0.9]), np.array([2.5, 0.3, 1.1, 3.8, 1.6])
    exact = np.subtract.outer(_exact_bootstrap(b), _exact_bootstrap(a)).ravel()
    r = rs.bootstrap([a, b], lambda x, y: y.mean(axis=-1) - x.mean(axis=-1), level=0.9)
    assert r.estimate == pytest.approx(b.mean() - a.mean()) and r.n == 4
    assert abs(np.mean(exact < r.lo) - 0.05) < _tolerance(0.05)
    assert abs(np.mean(exact > r.hi) - 0.05) < _tolerance(0.05)


X7 = [0.3, 1.2, 0.8, 2.5, 1.9, 0.1, 1.4]
Y7 = [2.0, 1.1, 1.1, 0.4, 0.9, 2.6, 0.7]  # a tie in y: average ranks


def test_one_stratum_exact_p_values_match_scipys_exact_permutation_test_of_spearmans_rho():
    r = ms.stratified_rank_test([(X7, Y7)])
    def rho(y, axis=-1):  # Spearman's rho: Pearson's r of the ranks (scipy's definition), vectorised
        rx = np.broadcast_to(rankdata(X7), np.shape(y))
        return pearsonr(rx, rankdata(y, axis=axis), axis=axis).statistic

    reference = {alt: permutation_test((Y7,), rho, permutation_type="pairings", vectorized=True, alternative=alt,
                                       n_resamples=math.inf).pvalue for alt in ("less", "greater")}
    assert r["exact"] and r["orderings"] == 5040 and r["n"] == 7
    assert r["statistic"] == pytest.approx(spearmanr(X7, Y7).statistic)
    assert r["p_less"] == pytest.approx(reference["less"]) and r["p_greater"] == pytest.approx(reference["greater"])
    assert 0 < r["p_less"] < 0.05 < r["p_greater"]


def _rho_of_orderings(x, y):
    """Spearman's rho of x with every ordering of y (all n! of them), from rank vectors."""
    rx, ry = rankdata(x), rankdata(y)
    orders = np.array(list(itertools.permutations(range(len(y)))))
    cx = rx - rx.mean()
    cy = ry[orders] - ry.mean()
    return (cy @ cx) / math.sqrt((cx**2).sum() * (cy[0] ** 2).sum())


def test_one_stratum_monte_carlo_p_values_match_the_enumeration_of_all_nine_factorial_orderings():
    """9! = 362,880 > 8! orderings: Monte Carlo (9,999 draws), against the exact p-values enumerated here,
    both tails, within four binomial standard errors."""
    x = [0.3, 1.2, 0.8, 2.5, 1.9, 0.1, 1.4, 3.1, 0.6]
    y = [2.0, 1.3, 1.1, 0.4, 0.9, 2.6, 0.7, 1.0, 1.6]
    observed = spearmanr(x, y).statistic
    null = _rho_of_orderings(x, y)
    less, greater = np.mean(null <= observed + 1e-12), np.mean(null >= observed - 1e-12)
    r = ms.stratified_rank_test([(x, y)], seed=6)
    assert not r["exact"] and r["orderings"] == 9999 and r["statistic"] == pytest.approx(observed)
    assert 0.002 < less < 0.1  # generic: a wrong tail or a p of hits / draws lands far away
    assert abs(r["p_less"] - less) < _tolerance(less, 9999) and abs(r["p_greater"] - greater) < _tolerance(greater, 9999)


def test_monte_carlo_p_values_count_the_observed_ordering_among_the_draws():
    """A perfect ordering of nine points is reached by no random ordering: p_greater = (1 + 0) / (1 + 9999),
    not 0; p_less counts every draw: (1 + 9999) / (1 + 9999) = 1 (Davison & Hinkley 1997, s. 4.2.1)."""
    x = [0.3, 1.2, 0.8, 2.5, 1.9, 0.1, 1.4, 3.1, 0.6]
    r = ms.stratified_rank_test([(x, [2 * v + 1 for v in x])], seed=4)
    assert not r["exact"] and r["p_greater"] == pytest.approx(1 / 10000) and r["p_less"] == 1.0
    down = ms.stratified_rank_test([(x, [-v for v in x])], seed=4)
    assert down["p_less"] == pytest.approx(1 / 10000) and down["p_greater"] == 1.0


def _within_tails(exact, lo, hi, tail):
    """The ends of a percentile interval of a discrete distribution: at most ``tail`` strictly beyond each
    end and at least ``tail`` at or beyond it, within the Monte Carlo error of 1,999 resamples."""
    tol = _tolerance(tail)
    assert np.mean(exact < lo) - tol < tail < np.mean(exact <= lo) + tol
    assert np.mean(exact > hi) - tol < tail < np.mean(exact >= hi) + tol


@pytest.mark.parametrize("b", [[1.0, 2.6, 0.3, 1.9], [2.0, 0.5]])
def test_bootstrap_resamples_two_row_samples_too(b):
    """A two-row sample is resampled like any other (2^2 equally likely resamples), also when every
    sample has two rows: against the exact joint bootstrap distribution, atoms included."""
    a, b = np.array([0.4, 1.7]), np.array(b)
    exact = np.subtract.outer(_exact_bootstrap(b), _exact_bootstrap(a)).ravel()
    r = rs.bootstrap([a, b], lambda x, y: y.mean(axis=-1) - x.mean(axis=-1), level=0.8)
    assert r.lo < r.estimate < r.hi and r.n == 2
    _within_tails(exact, r.lo, r.hi, 0.1)


def test_an_empty_sample_gives_nan_with_no_seeds_and_the_default_seed_is_zero_everywhere():
    empty = rs.bootstrap([[], [1.0, 2.0]], lambda x, y: y.mean(axis=-1))
    assert empty.n == 0 and math.isnan(empty.lo) and math.isnan(empty.estimate)
    rows = np.array([SKEWED, SKEWED[::-1] ** 2])
    default, zero, one = rs.mean_ci_rows(rows), rs.mean_ci_rows(rows, seed=0), rs.mean_ci_rows(rows, seed=1)
    assert np.array_equal(default[0][0], zero[0][0]) and not np.array_equal(default[0][0], one[0][0])
    levels, samples = [1.0, 2.0, 5.0], [[1.0, 1.4, 0.7], [3.0, 3.5, 2.5], [2.0, 2.2, 1.1]]
    assert rs.slope_ci(levels, samples) == rs.slope_ci(levels, samples, seed=0) != rs.slope_ci(levels, samples, seed=1)
