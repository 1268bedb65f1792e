"""The memory statistics of Spec B (``numerics.metrics.memory_stats``) against independent routes:
least squares for the ANOVA, brute-force enumeration for the permutation test, the noncentral F
distribution for the interval, and simulation with known truth for unbiasedness and coverage."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ncf

from implicitbias.numerics.metrics import memory_stats as ms
from implicitbias.theory.params import ParameterError

SHAPE = np.array([2.0, 1.0, 0.0, -0.5, -2.5])  # a generic, uneven sigma_w profile


def test_anova_mean_squares_match_a_least_squares_fit_with_dummy_variables():
    rng = np.random.default_rng(3)
    y = rng.normal(size=(6, 4)) + np.array([0.0, 1.0, 3.0, 0.5])
    n, k = y.shape
    rows = np.repeat(np.eye(n), k, axis=0)
    cols = np.tile(np.eye(k), (n, 1))
    design = np.hstack([rows, cols[:, 1:]])  # additive model: seed + sigma_w effects
    fit = np.linalg.lstsq(design, y.ravel(), rcond=None)[0]
    rss = ((y.ravel() - design @ fit) ** 2).sum()
    rows_only = np.linalg.lstsq(rows, y.ravel(), rcond=None)[0]
    rss_rows = ((y.ravel() - rows @ rows_only) ** 2).sum()
    a = ms.anova(y)
    assert a.ms_e == pytest.approx(rss / ((n - 1) * (k - 1)))
    assert a.ms_w == pytest.approx((rss_rows - rss) / (k - 1))


def test_anova_is_vectorised_over_leading_axes():
    rng = np.random.default_rng(4)
    y = rng.normal(size=(3, 2, 5, 4))
    batch = ms.anova(y)
    assert batch.ms_w.shape == (3, 2)
    assert batch.ms_w[2, 1] == pytest.approx(ms.anova(y[2, 1]).ms_w)


def test_too_small_a_table_is_refused():
    with pytest.raises(ParameterError, match="y must hold"):
        ms.anova(np.zeros((1, 4)))


def test_the_memory_variance_is_unbiased_and_the_raw_spread_is_not():
    """No memory, 5 sigma_w x 4 seeds, noise 2 points: V_hat averages 0 while the raw spread averages
    the expected range of 5 normal means, 2.326 x 2 / sqrt(4) = 2.33 points (the issue's number)."""
    rng = np.random.default_rng(5)
    a = ms.anova(ms.simulate_tables(SHAPE, 0.0, 2.0, 4, 20000, rng))
    v = np.asarray(a.v, dtype=float)
    assert abs(v.mean()) < 4 * v.std() / math.sqrt(len(v))
    assert np.asarray(a.spread, dtype=float).mean() == pytest.approx(2.326, abs=0.03)
    with_memory = ms.anova(ms.simulate_tables(SHAPE, 1.5, 2.0, 4, 20000, rng))
    assert np.asarray(with_memory.v, dtype=float).mean() == pytest.approx(1.5**2, abs=0.1)


def test_the_interval_ends_solve_the_noncentral_f_equations():
    n, k, f = 6, 5, 4.2
    lo, hi = ms.snr_interval(f, k - 1, (n - 1) * (k - 1), n)
    for s, target in ((lo[0], 0.975), (hi[0], 0.025)):
        assert ncf.cdf(f, k - 1, (n - 1) * (k - 1), n * (k - 1) * s**2) == pytest.approx(target, abs=1e-6)
    zero, _ = ms.snr_interval(0.5, k - 1, (n - 1) * (k - 1), n)  # F below the central 97.5% point: lower end 0
    assert zero[0] == 0.0


def _coverage_of_snr(sims, seed):
    rng = np.random.default_rng(seed)
    n, sigma, m = 8, 1.5, 2.0
    a = ms.anova(ms.simulate_tables(SHAPE, m, sigma, n, sims, rng))
    lo, hi = ms.snr_interval(a.f, 4, (n - 1) * 4, n)
    return np.mean((lo <= m / sigma) & (m / sigma <= hi))


def test_memory_to_noise_interval_covers_at_the_nominal_rate_fast():
    assert abs(_coverage_of_snr(400, 6) - 0.95) < 3 * math.sqrt(0.95 * 0.05 / 400)


@pytest.mark.slow
def test_memory_to_noise_interval_covers_at_the_nominal_rate():
    assert abs(_coverage_of_snr(5000, 7) - 0.95) < 3 * math.sqrt(0.95 * 0.05 / 5000)


def test_permutation_p_is_the_fraction_of_within_seed_relabellings():
    y = np.array([[1.0, 2.5, 0.3], [0.2, 3.0, 1.1], [0.9, 1.8, 0.0]])
    f0 = ms.anova(y).f
    null = [ms.anova(np.array([y[0][list(p0)], y[1][list(p1)], y[2][list(p2)]])).f
            for p0, p1, p2 in itertools.product(itertools.permutations(range(3)), repeat=3)]
    p, count, exact = ms.permutation_p(y)
    assert exact and count == 216
    assert p == pytest.approx(np.mean(np.array(null) >= f0 - 1e-9))


def test_permutation_p_is_monte_carlo_beyond_the_exact_limit_and_seeded():
    rng = np.random.default_rng(8)
    y = rng.normal(size=(4, 5))
    p, count, exact = ms.permutation_p(y, seed=1)
    assert not exact and count == 9999 and 0 < p <= 1
    assert ms.permutation_p(y, seed=1) == (p, count, exact)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.one_of(st.none(), st.floats(0, 100)), min_size=3, max_size=3), min_size=0, max_size=6))
def test_complete_keeps_a_table_without_missing_runs(rows):
    y = np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=float).reshape(len(rows), 3)
    table, kept_rows, kept_cols = ms.complete(y)
    assert not np.isnan(table).any()
    assert table.shape == (len(kept_rows), len(kept_cols))
    mem = ms.memory(y, permute=False)
    assert mem.n == (len(kept_rows) if table.size else 0) and mem.k == len(kept_cols)
    assert len(kept_rows) == 0 or len(kept_cols) >= 2


def test_memory_of_a_table_with_a_missing_column_drops_it():
    y = np.array([[1.0, 2.0, np.nan], [1.5, 2.5, np.nan], [0.5, 3.0, 4.0]])
    mem = ms.memory(y)
    assert (mem.n, mem.k, mem.cols) == (3, 2, (0, 1))


def _ratio_case(n, seed):
    rng = np.random.default_rng(seed)
    g = ms.memory(ms.simulate_tables(SHAPE, 0.8, 1.0, n, 1, rng)[0].astype(float))
    r = ms.memory(ms.simulate_tables(SHAPE, 2.5, 1.2, n, 1, rng)[0].astype(float))
    return g, r


def test_ratio_interval_contains_its_estimate_and_states_its_measured_coverage():
    g, r = _ratio_case(8, 9)
    i = ms.ratio_interval(g, r)
    assert i.lo <= i.estimate <= i.hi and i.estimate == pytest.approx(g.m / r.m)
    assert i.coverage >= 0.95 - 2 * math.sqrt(0.95 * 0.05 / 400) or "widened" in i.method


def _ratio_coverage_with_known_truth(sims, seed):
    """Tiers drawn with true ratio 0.32 (memories 0.8 and 2.5 points, noise 1 and 1.2): how often does
    each tier's own interval contain 0.32?"""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        g = ms.memory(ms.simulate_tables(SHAPE, 0.8, 1.0, 8, 1, rng)[0].astype(float), permute=False)
        r = ms.memory(ms.simulate_tables(SHAPE, 2.5, 1.2, 8, 1, rng)[0].astype(float), permute=False)
        i = ms.ratio_interval(g, r, sims=100, seed=int(rng.integers(1 << 30)))
        hits += i.lo <= 0.32 <= i.hi
    return hits / sims


def test_ratio_interval_coverage_on_simulated_tiers_fast():
    """A few dozen tiers (each its own calibrated interval): coverage near 95% (loose: 40 tiers)."""
    assert _ratio_coverage_with_known_truth(40, 10) >= 0.8


@pytest.mark.slow
def test_ratio_interval_coverage_on_simulated_tiers():
    cover = _ratio_coverage_with_known_truth(1000, 11)
    assert cover >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 1000)


def test_t_interval_matches_scipy():
    from scipy.stats import t

    v = [0.5, 0.7, 0.4, 0.65]
    i = ms.t_interval(v + [None, math.nan])
    lo, hi = t.interval(0.95, 3, loc=np.mean(v), scale=np.std(v, ddof=1) / 2)
    assert (i.lo, i.hi) == pytest.approx((lo, hi))
    assert math.isnan(ms.t_interval([1.0]).lo) and math.isnan(ms.t_interval([]).estimate)


def test_a_table_without_residual_noise_gets_an_open_interval_quickly():
    """Purely additive accuracies (seed + sigma_w effects, no interaction): F is infinite; the lower end
    is the capped one, the upper end inf, and no noncentral-F series runs for minutes."""
    y = np.add.outer(np.array([0.0, 0.5, 1.0]), np.array([3.0, 1.0, 0.0, 2.0]))
    mem = ms.memory(y, permute=False)
    assert mem.snr.lo > 1 and mem.snr.hi == math.inf
    lo, hi = ms.snr_interval([math.nan], 3, 6, 3)
    assert math.isnan(lo[0]) and math.isnan(hi[0])


@pytest.mark.parametrize("covered, tail, coverage", [((0.5, 0.9, 0.96, 0.97, 0.98), 0.005, 0.96),
                                                     ((0.96, 0.97, 0.98, 0.99, 0.99), 0.025, 0.96),
                                                     ((0.5, 0.6, 0.7, 0.8, 0.9), 0.001, 0.9)])
def test_ratio_interval_takes_the_narrowest_tail_whose_measured_coverage_reaches_the_level(monkeypatch, covered,
                                                                                           tail, coverage):
    """The choice among TAILS, with the measured coverages given: 0.9 is below 95% minus two Monte Carlo
    standard errors at 400 tiers (0.928), 0.96 above; when none reaches it, the widest tail and its coverage."""
    g, r = _ratio_case(8, 9)
    monkeypatch.setattr(ms, "_coverages", lambda *args, **kwargs: np.array(covered))
    i = ms.ratio_interval(g, r)
    draws = ms.ratio_draws(g, r, ms.BOOTSTRAP * 10, np.random.default_rng(0))
    assert i.coverage == coverage and ("widened" in i.method) == (tail != ms.TAILS[0])
    assert (i.lo, i.hi) == tuple(float(v) for v in ms._percentiles(draws, tail))
