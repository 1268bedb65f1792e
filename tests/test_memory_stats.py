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


# ---- Pins against independent references at generic points (issue 27 item 6), every branch ----

GENERIC = [[3, 7, 2], [5, 6, 1], [4, 9, 5], [8, 6, 3]]  # 4 seeds x 3 sigma_w, integers: exact in fractions


def test_anova_matches_the_textbook_sums_of_squares_in_exact_fractions():
    """Two-way ANOVA without replication (Scheffe 1959, ch. 4): SS_total = SS_seeds + SS_sigma_w + SS_e,
    computed in exact rationals from the sums of squares about the means (not from residuals)."""
    from fractions import Fraction

    y = [[Fraction(v) for v in row] for row in GENERIC]
    n, k = len(y), len(y[0])
    grand = sum(map(sum, y)) / (n * k)
    rows = [sum(r) / k for r in y]
    cols = [sum(r[j] for r in y) / n for j in range(k)]
    ss_total = sum((v - grand) ** 2 for r in y for v in r)
    ss_cols = n * sum((c - grand) ** 2 for c in cols)
    ss_e = ss_total - k * sum((r - grand) ** 2 for r in rows) - ss_cols
    ms_w, ms_e = ss_cols / (k - 1), ss_e / ((n - 1) * (k - 1))
    a = ms.anova(GENERIC)
    assert a.ms_w == pytest.approx(float(ms_w), rel=1e-12) and a.ms_e == pytest.approx(float(ms_e), rel=1e-12)
    assert a.f == pytest.approx(float(ms_w / ms_e), rel=1e-12)
    assert a.v == pytest.approx(float((ms_w - ms_e) / n), rel=1e-12)
    assert a.m == pytest.approx(math.sqrt(float((ms_w - ms_e) / n)))
    assert a.spread == pytest.approx(float(max(cols) - min(cols)))
    assert ms_w > ms_e > 0  # a generic table: memory above the noise, and noise
    single = ms.anova(np.asarray(GENERIC, dtype=np.float32))  # the simulations' float32 branch stays float32
    assert single.ms_w.dtype == np.float32 and single.ms_w == pytest.approx(float(ms_w), rel=1e-5)
    no_memory = ms.anova([[1.0, 2.0, 4.0], [4.0, 1.0, 2.0], [2.0, 4.0, 1.0]])  # a Latin square: equal column means
    assert no_memory.ms_w == 0 and no_memory.m == 0 and no_memory.v < 0


def _noncentral_end(f, df1, df2, n, target):
    """The s whose lambda = n df1 s^2 solves ncf.cdf(f; lambda) = target, by Brent's method (0 when
    even lambda = 0 gives a cdf at or below the target)."""
    from scipy.optimize import brentq
    from scipy.stats import f as central_f

    if central_f.cdf(f, df1, df2) <= target:
        return 0.0
    top = 1.0
    while ncf.cdf(f, df1, df2, top) > target:  # bracket by doubling (the cdf falls with lambda)
        top *= 2
    lam = brentq(lambda x: ncf.cdf(f, df1, df2, x) - target, 0.0, top, xtol=1e-12, rtol=1e-12)
    return math.sqrt(lam / (n * df1))


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_the_interval_of_s_agrees_with_brent_roots_of_the_noncentral_cdf(level):
    """A generic design (7 seeds x 4 sigma_w) and several F at once: both ends against scipy's ncf
    solved by brentq; F = 1.4 lies between the central F's quantiles (lower end 0, upper end a root);
    F = 0.05 lies below the central lower quantile (both ends 0)."""
    from scipy.stats import f as central_f

    n, k = 7, 4
    df1, df2 = k - 1, (n - 1) * (k - 1)
    tail = (1 - level) / 2
    fs = [0.05, 1.4, 4.2, 11.3]
    lo, hi = ms.snr_interval(fs, df1, df2, n, level)
    for f, l_, h_ in zip(fs, lo, hi):
        assert l_ == pytest.approx(_noncentral_end(f, df1, df2, n, 1 - tail), rel=1e-6, abs=1e-9)
        assert h_ == pytest.approx(_noncentral_end(f, df1, df2, n, tail), rel=1e-6, abs=1e-9)
    assert central_f.cdf(0.05, df1, df2) < tail and lo[0] == hi[0] == 0.0
    assert tail < central_f.cdf(1.4, df1, df2) < 1 - tail and lo[1] == 0.0 < hi[1]
    assert 0 < lo[2] < hi[2] and lo[2] < lo[3] < hi[3] and hi[2] < hi[3]  # both ends rise with F


def test_the_interval_of_s_at_and_beyond_the_cap_and_for_nan():
    """F above F_CAP (or infinite: no residual noise): the lower end is the one at F_CAP, the upper end
    inf; just below the cap both ends are roots; NaN gives NaN without touching its neighbours."""
    n, k = 5, 4
    df1, df2 = k - 1, (n - 1) * (k - 1)
    lo, hi = ms.snr_interval([2 * ms.F_CAP, math.inf, 0.9 * ms.F_CAP, math.nan, 3.1], df1, df2, n)
    at_cap = _noncentral_end(ms.F_CAP, df1, df2, n, 0.975)
    assert lo[0] == pytest.approx(at_cap, rel=1e-6) and lo[1] == pytest.approx(at_cap, rel=1e-6)
    assert hi[0] == hi[1] == math.inf
    assert lo[2] == pytest.approx(_noncentral_end(0.9 * ms.F_CAP, df1, df2, n, 0.975), rel=1e-6) and lo[2] < at_cap
    assert hi[2] == pytest.approx(_noncentral_end(0.9 * ms.F_CAP, df1, df2, n, 0.025), rel=1e-6) and hi[2] < math.inf
    assert math.isnan(lo[3]) and math.isnan(hi[3])
    assert hi[4] == pytest.approx(_noncentral_end(3.1, df1, df2, n, 0.025), rel=1e-6)


def _enumerated_permutation_p(y):
    """Exact one-sided p of F: the fraction of all within-seed relabellings (itertools) whose F is at
    least the observed one (ties included)."""
    y = np.asarray(y, dtype=float)
    n, k = y.shape
    orders = np.array(list(itertools.permutations(range(k))))
    picks = np.array(list(itertools.product(range(len(orders)), repeat=n)))  # (relabellings, n)
    tables = y[np.arange(n)[None, :, None], orders[picks]]  # (relabellings, n, k)
    f = ms.anova(tables).f
    return float(np.mean(f >= ms.anova(y).f * (1 - 1e-12)))


def test_permutation_p_exact_branch_matches_enumeration_on_a_generic_table():
    y = [[1.3, 0.2, 2.9, 1.1], [0.4, 0.9, 2.2, 1.7]]  # 4!^2 = 576 relabellings
    p, count, exact = ms.permutation_p(y)
    assert exact and count == 576
    assert p == pytest.approx(_enumerated_permutation_p(y), abs=1e-12)
    assert 0.05 < p < 0.5  # a generic point: neither extreme


def test_permutation_p_monte_carlo_branch_matches_the_exact_enumeration_beyond_the_limit():
    """6 seeds x 3 sigma_w: 3!^6 = 46,656 > 8! relabellings, so Monte Carlo (9,999 draws); the exact p
    by enumerating all 46,656 here; within four binomial standard errors."""
    y = np.array([[2.1, 1.0, 0.7], [1.5, 1.9, 0.2], [0.9, 1.1, 1.3], [2.4, 0.8, 1.2], [1.2, 1.6, 0.1],
                  [0.5, 0.6, 0.9]])
    exact_p = _enumerated_permutation_p(y)
    p, count, exact = ms.permutation_p(y, seed=4)
    assert not exact and count == 9999
    assert 0.02 < exact_p < 0.3  # generic: a wrong tail lands far away
    assert abs(p - exact_p) < 4 * math.sqrt(exact_p * (1 - exact_p) / 9999) + 1e-4


def test_permutation_p_monte_carlo_branch_matches_an_independent_monte_carlo():
    """4 seeds x 5 sigma_w (5!^4 relabellings): against 20,000 within-seed shuffles drawn here with
    numpy's own generator, p = (1 + hits) / (1 + draws) on both sides."""
    y = np.random.default_rng(12).normal(size=(4, 5)) + np.array([0.6, 0.0, -0.3, 0.4, -0.7])
    p, count, exact = ms.permutation_p(y, seed=5)
    rng = np.random.default_rng(99)
    shuffled = rng.permuted(np.broadcast_to(y, (20000, 4, 5)), axis=-1)
    reference = (1 + np.sum(ms.anova(shuffled).f >= ms.anova(y).f)) / (1 + 20000)
    assert not exact and 0.02 < reference < 0.5
    sd = math.sqrt(reference * (1 - reference) * (1 / 9999 + 1 / 20000))
    assert abs(p - reference) < 4 * sd


def test_permutation_p_monte_carlo_counts_the_observed_table_among_the_draws():
    """An extreme table (large sigma_w effects, small noise, 5!^4 relabellings): no random relabelling
    reaches its F, so p = (1 + 0) / (1 + 9999) exactly (not 0, not 1 / 999); a Latin-square table (F = 0)
    is reached by every relabelling: p = 1."""
    y = np.array([[9.0, 6.1, 3.0, 0.1, -3.0], [9.1, 6.0, 2.9, 0.0, -2.9], [8.9, 5.9, 3.1, -0.1, -3.1],
                  [9.0, 6.0, 3.0, 0.0, -3.0]])
    assert ms.permutation_p(y, seed=2) == (pytest.approx(1 / 10000), 9999, False)
    square = np.array([[(i + j) % 5 for j in range(5)] for i in range(5)], dtype=float)
    assert ms.permutation_p(square, seed=2)[0] == pytest.approx(1.0)


def test_t_interval_matches_scipy_at_another_level_and_size():
    from scipy.stats import t

    v = [0.512, 0.47, 0.533, 0.498, 0.541, 0.483]
    i = ms.t_interval(v, level=0.9)
    assert (i.lo, i.hi) == pytest.approx(t.interval(0.9, 5, loc=np.mean(v), scale=np.std(v, ddof=1) / math.sqrt(6)))
    assert i.estimate == pytest.approx(np.mean(v)) and i.level == 0.9


def test_complete_keeps_a_column_missing_in_exactly_half_the_seeds_and_drops_one_missing_in_more():
    nan = math.nan
    y = [[1.0, 2.0, nan, nan], [1.5, 2.5, 3.0, nan], [0.5, 3.0, nan, 4.0], [0.7, 2.2, 3.3, nan]]
    table, rows, cols = ms.complete(y)
    assert tuple(cols) == (0, 1, 2) and tuple(rows) == (1, 3)  # column 2 (2 of 4 missing) kept, column 3 dropped
    assert table.tolist() == [[1.5, 2.5, 3.0], [0.7, 2.2, 3.3]]


def test_percentiles_are_the_outward_order_statistics_and_an_infinite_draw_never_mixes_in():
    """numpy's definitions (Hyndman & Fan 1996): the lower end is the floor(t (N - 1))-th order statistic,
    the upper end the ceil((1 - t)(N - 1))-th, here from a sort, at N = 12 where t (N - 1) is not integer."""
    draws = np.array([0.9, 0.1, 0.45, 2.2, 0.3, 0.75, 1.4, 0.6, 0.2, 1.1, 0.35, 3.7])
    s = np.sort(draws)
    for t in (0.1, 0.025, 0.3):
        lo, hi = ms._percentiles(draws, t)
        assert lo == s[math.floor(t * 11)] and hi == s[math.ceil((1 - t) * 11)]
    with_inf = np.where(draws == 3.7, math.inf, draws)  # the largest draw infinite: the 10% ends are finite
    assert ms._percentiles(with_inf, 0.1) == (s[1], s[10])
    many = np.where(draws > 1.0, math.inf, draws)  # four infinite draws: the upper end is inf, the lower not
    lo, hi = ms._percentiles(many, 0.1)
    assert lo == s[1] and hi == math.inf
    batch = ms._percentiles(np.stack([draws, -draws]), 0.1)  # along the last axis
    assert tuple(batch[0]) == (s[1], -s[10]) and tuple(batch[1]) == (s[10], -s[1])


def _hand_memories(effects, sigma, n, draws, rng):
    """Memories sqrt(max(V_hat, 0)) of normal tables drawn here, from the textbook sums of squares."""
    y = effects + sigma * rng.standard_normal((draws, n, len(effects)))
    k = len(effects)
    grand = y.mean((-2, -1), keepdims=True)
    ss_total = ((y - grand) ** 2).sum((-2, -1))
    ss_rows = k * ((y.mean(-1, keepdims=True) - grand) ** 2).sum((-2, -1))
    ss_cols = n * ((y.mean(-2, keepdims=True) - grand) ** 2).sum((-2, -1))
    ms_w, ms_e = ss_cols / (k - 1), (ss_total - ss_rows - ss_cols) / ((n - 1) * (k - 1))
    return np.sqrt(np.maximum((ms_w - ms_e) / n, 0.0))


@pytest.mark.parametrize("m_group, seed", [(0.8, 9), (1.6, 13)])
def test_ratio_interval_ends_are_the_quantiles_of_an_independent_parametric_bootstrap(m_group, seed):
    """The fitted models of both groups (sigma_w effects shrunk to V_hat, own noise) redrawn here, 40,000
    times, with numpy's generator and hand-written sums of squares: below the lower end lies at most the
    tail of these r*, at or below it at least the tail (r* has an atom at 0, where V_hat < 0), the same
    for the upper end, within the binomial error of the interval's own 2,000 draws."""
    rng = np.random.default_rng(seed)
    g = ms.memory(ms.simulate_tables(SHAPE, m_group, 1.0, 8, 1, rng)[0].astype(float), permute=False)
    r = ms.memory(ms.simulate_tables(SHAPE, 2.5, 1.2, 8, 1, rng)[0].astype(float), permute=False)
    i = ms.ratio_interval(g, r)
    tail = float(i.method.split("per-tail ")[1]) if "per-tail" in i.method else ms.TAILS[0]
    rng = np.random.default_rng(77)

    def fitted(mem):
        a = np.asarray(mem.shape)
        return a * mem.m / math.sqrt((a**2).sum() / (len(a) - 1))

    star = _hand_memories(fitted(g), g.sigma, g.n, 40000, rng) / _hand_memories(fitted(r), r.sigma, r.n, 40000, rng)
    sd = 4 * math.sqrt(tail * (1 - tail) / (ms.BOOTSTRAP * 10)) + 1 / (ms.BOOTSTRAP * 10)
    assert np.mean(star < i.lo) - sd < tail < np.mean(star <= i.lo) + sd
    assert np.mean(star > i.hi) - sd < tail < np.mean(star >= i.hi) + sd
    assert i.estimate == pytest.approx(g.m / r.m) and i.lo < i.estimate < i.hi


def test_ratio_interval_without_reference_memory_is_nan():
    g, _ = _ratio_case(8, 9)
    flat = ms.memory([[1.0, 2.0, 3.0], [3.0, 1.0, 2.0], [2.0, 3.0, 1.0]], permute=False)  # m = 0
    for i in (ms.ratio_interval(g, flat), ms.ratio_interval(g, ms.memory([[1.0, 2.0]], permute=False))):
        assert math.isnan(i.estimate) and math.isnan(i.lo) and i.method == "no reference memory"


def test_ratio_coverages_match_an_independent_simulation_of_the_calibration():
    """``_coverages``: tiers drawn at both groups' fitted components, each refitted, shrunk and redrawn
    (200 draws) and its percentile interval checked against the true ratio; redone here with numpy's
    generator and hand-written sums of squares, 400 tiers each: per tail level within four standard
    errors of the difference, and non-decreasing as the tails widen (the same draws, nested intervals)."""
    rng = np.random.default_rng(21)
    g = ms.memory(ms.simulate_tables(SHAPE, 1.2, 1.0, 6, 1, rng)[0].astype(float), permute=False)
    r = ms.memory(ms.simulate_tables(SHAPE, 2.0, 1.3, 6, 1, rng)[0].astype(float), permute=False)
    tails = (0.025, 0.005)
    covered = ms._coverages(g, r, tails, 400, 200, seed=3)
    assert covered[0] <= covered[1]

    def fitted(shape, m):  # the sigma_w effects of a fitted table, rescaled to memory m
        a = np.asarray(shape) - np.mean(shape, axis=-1, keepdims=True)
        scale = np.sqrt((a**2).sum(-1, keepdims=True) / (a.shape[-1] - 1))
        return a * np.where(scale > 0, np.asarray(m)[..., None] / np.where(scale > 0, scale, 1.0), 0.0)

    def refit(y):  # sigma_w effects, memory and noise of tables (..., n, k), textbook sums of squares
        n, k = y.shape[-2:]
        grand = y.mean((-2, -1), keepdims=True)
        cols = y.mean(-2)
        ss_cols = n * ((cols - grand[..., 0]) ** 2).sum(-1)
        ss_e = ((y - grand) ** 2).sum((-2, -1)) - k * ((y.mean(-1) - grand[..., 0]) ** 2).sum(-1) - ss_cols
        ms_e = ss_e / ((n - 1) * (k - 1))
        return cols, np.sqrt(np.maximum((ss_cols / (k - 1) - ms_e) / n, 0.0)), np.sqrt(ms_e)

    truth, own = g.m / r.m, np.random.default_rng(8)
    star = []
    for mem in (g, r):
        tiers = fitted(mem.shape, mem.m) + mem.sigma * own.standard_normal((400, mem.n, mem.k))
        cols, m, sigma = refit(tiers)
        redrawn = fitted(cols, m)[:, None, None, :] + sigma[:, None, None, None] * own.standard_normal(
            (400, 200, mem.n, mem.k))
        star.append(refit(redrawn)[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(star[1] > 0, star[0] / np.where(star[1] > 0, star[1], 1.0), np.inf)
    for tail, cover in zip(tails, covered):
        lo = np.sort(ratio, -1)[:, math.floor(tail * 199)]
        hi = np.sort(ratio, -1)[:, math.ceil((1 - tail) * 199)]
        reference = np.mean((lo <= truth) & (truth <= hi))
        assert abs(cover - reference) < 4 * math.sqrt(2 * 0.95 * 0.05 / 400)


def test_redrawn_memories_have_the_noncentral_f_moments_of_the_fitted_model():
    """``_redraw``: tables from each fitted model (sigma_w effects shrunk to V = m^2, noise sigma^2 = MS_e).
    With V far above the noise, V_hat* = m*^2 (never truncated) has the closed-form moments of the model:
    E V_hat* = V and Var V_hat* = (Var MS_w + Var MS_e) / n^2, with MS_w ~ sigma^2 chi'^2(k - 1, lambda) / (k - 1),
    lambda = n (k - 1) V / sigma^2, and MS_e ~ sigma^2 chi^2(df2) / df2 (Scheffe 1959, ch. 4)."""
    rng = np.random.default_rng(31)
    tables = np.stack([4.0 * SHAPE + 2.5 * rng.standard_normal((6, 5)),
                       3.0 * SHAPE[::-1] + 0.4 * rng.standard_normal((6, 5))])
    a = ms.anova(tables)
    n, k = 6, 5
    df2 = (n - 1) * (k - 1)
    v_star = np.asarray(ms._redraw(a, n, 40000, np.random.default_rng(32)), dtype=float) ** 2
    for i in range(2):
        v, s2 = float(a.m[i]) ** 2, float(a.ms_e[i])
        lam = n * (k - 1) * v / s2
        var = (2 * s2**2 * (k - 1 + 2 * lam) / (k - 1) ** 2 + 2 * s2**2 / df2) / n**2
        assert np.mean(v_star[i] == 0) < 1e-3  # no truncation at 0: m*^2 is V_hat*
        assert abs(v_star[i].mean() - v) < 4 * math.sqrt(var / 40000)
        assert v_star[i].var() == pytest.approx(var, rel=0.05)


ROBUST = np.array([[61.2, 58.4, 57.9, 55.1], [60.1, 59.8, 56.2, 56.9], [62.7, 57.3, 58.8, 54.0],
                   [59.4, 60.2, 55.7, 57.3], [61.9, 58.9, 59.6, 53.8]])  # 5 seeds x 4 sigma_w, generic


def _textbook_log_f(y):
    """log(MS_w / MS_e) of one table by the textbook sums of squares, in loops."""
    n, k = len(y), len(y[0])
    grand = sum(map(sum, y)) / (n * k)
    col = [sum(y[i][j] for i in range(n)) / n for j in range(k)]
    row = [sum(y[i]) / k for i in range(n)]
    ss_w = n * sum((c - grand) ** 2 for c in col)
    ss_e = sum((y[i][j] - row[i] - col[j] + grand) ** 2 for i in range(n) for j in range(k))
    return math.log((ss_w / (k - 1)) / (ss_e / ((n - 1) * (k - 1)))) if ss_e > 1e-12 and ss_w > 0 else math.nan


def _textbook_jackknife(y):
    n = len(y)
    loo = [_textbook_log_f([r for i, r in enumerate(y) if i != j]) for j in range(n)]
    mean = sum(loo) / n
    return math.sqrt((n - 1) / n * sum((v - mean) ** 2 for v in loo))


def test_robust_interval_ends_are_the_bootstrap_t_quantiles_of_the_enumerated_bootstrap_joined_with_the_exact():
    """Every one of the 5^5 ordered resamples of the seed rows enumerated (equally likely), each pivot
    t* = (psi* - psi) / jackknife se* computed by hand; the robust ends (20,000 random resamples) lie
    between the enumerated pivot quantiles 0.5% to either side of the tail, mapped to s and joined with
    the exact interval; and the join contains the exact interval."""
    y = ROBUST.tolist()
    n, k = ROBUST.shape
    psi, se = _textbook_log_f(y), _textbook_jackknife(y)
    pivots = []
    for idx in itertools.product(range(n), repeat=n):
        yb = [y[i] for i in idx]
        lf, sb = _textbook_log_f(yb), _textbook_jackknife(yb)
        if sb > 0 and math.isfinite(lf) and math.isfinite(sb):
            pivots.append((lf - psi) / sb)
    pivots = np.sort(pivots)
    tail = (1 - ms.ROBUST_LEVEL) / 2

    def s_of(p):
        return math.sqrt(max(math.exp(p) - 1, 0) / n)

    exact_lo, exact_hi = (v[0] for v in ms.snr_interval(math.exp(psi), k - 1, (n - 1) * (k - 1), n))
    lo, hi = ms.robust_snr_ends(ROBUST, resamples=20000, seed=4)
    q = lambda t: float(np.quantile(pivots, t))  # noqa: E731
    assert min(exact_lo, s_of(psi - q(1 - tail + 0.005) * se)) <= lo <= min(exact_lo, s_of(psi - q(1 - tail - 0.005) * se))
    assert max(exact_hi, s_of(psi - q(tail + 0.005) * se)) <= hi <= max(exact_hi, s_of(psi - q(tail - 0.005) * se))
    assert lo < exact_lo and hi > exact_hi  # at this point the bootstrap-t decides both ends
    i = ms.robust_snr(np.vstack([ROBUST, np.full(k, np.nan)]), seed=4)  # a failed seed is left out (complete)
    assert i.estimate == pytest.approx(s_of(psi)) and "bootstrap-t" in i.method and i.lo <= exact_lo


def test_robust_interval_is_vectorised_over_tables_and_refuses_too_few_seeds():
    """A batch of tables gives each table's own interval (the same resamples for all), and the level
    widens it; fewer than 3 seeds are refused, and ``robust_snr`` of such a table is NaN."""
    batch = np.stack([ROBUST, ROBUST[:, ::-1] * 1.5, ROBUST + 3.0])
    lo, hi = ms.robust_snr_ends(batch, seed=2)
    one = [ms.robust_snr_ends(t, seed=2) for t in batch]
    assert lo == pytest.approx([o[0] for o in one]) and hi == pytest.approx([o[1] for o in one])
    assert lo[2] == pytest.approx(lo[0]) and hi[2] == pytest.approx(hi[0])  # a shift leaves s unchanged
    wide = ms.robust_snr_ends(ROBUST, boot_level=0.99, seed=2)
    assert wide[0] <= lo[0] and wide[1] >= hi[0]
    with pytest.raises(ParameterError, match="tables"):
        ms.robust_snr_ends(ROBUST[:2])
    assert math.isnan(ms.robust_snr(ROBUST[:2]).lo)


def test_slope_table_values_are_the_per_seed_least_squares_slopes_of_the_present_cells():
    """scipy's linregress per row, over the sigma_w present; a seed with one present cell is left out."""
    from scipy.stats import linregress

    x = np.log([0.25, 0.5, 1.0, 1.5, 2.5])
    y = np.log(ROBUST[:, [0, 1, 2, 3, 3]] / 10) * np.array([1.0, 0.9, 1.1, 1.0, 0.8])
    y[1, 2] = np.nan
    y[3, :4] = np.nan
    table = ms.SlopeTable(tuple(x), tuple(map(tuple, y)))
    ok = [~np.isnan(r) for r in y]
    expected = [linregress(x[o], r[o]).slope for r, o in zip(y, ok) if o.sum() >= 2]
    assert table.values == pytest.approx(expected) and len(expected) == 4
    assert ms.slopes(y[[0, 2, 4]], x) == pytest.approx([expected[0], expected[2], expected[3]])


def test_jackknife_se_from_updated_sums_equals_the_leave_one_seed_out_anovas():
    """The O(n k) jackknife of psi equals n textbook ANOVAs of the table without each seed, on a table
    with large seed effects (the updated sums must drop the left-out row from every term)."""
    y = ROBUST + 40.0 * np.arange(5)[:, None]
    assert ms._jackknife_se(y) == pytest.approx(_textbook_jackknife(y.tolist()), rel=1e-9)
    batch = np.stack([y, ROBUST[:, ::-1], ROBUST[[0, 0, 1, 2, 3]]])  # a repeated seed, as in a resample
    assert ms._jackknife_se(batch) == pytest.approx([_textbook_jackknife(t.tolist()) for t in batch], rel=1e-9)
