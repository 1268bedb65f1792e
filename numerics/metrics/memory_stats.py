"""Initialisation memory beyond seed noise: the one statistics module of Spec B's verdicts.

Data: one group's test accuracies (points) as a table ``y[i, j]``, seed i = 1..n (rows) x
sigma_w j = 1..k (columns); the seeds are shared across sigma_w, so the table is paired by seed.
Model (two-way, fixed sigma_w effects, one run per cell; Scheffe 1959, ch. 4):

    y_ij = mu + a_j + b_i + e_ij,   sum_j a_j = 0,   e_ij ~ N(0, sigma^2)

    memory variance   V = sum_j a_j^2 / (k - 1)         (variance of the true sigma_w means)
    MS_w = n sum_j (ybar_.j - ybar)^2 / (k - 1)          E MS_w = sigma^2 + n V
    MS_e = sum_ij (y_ij - ybar_i. - ybar_.j + ybar)^2 / ((n - 1)(k - 1))   E MS_e = sigma^2
    V_hat = (MS_w - MS_e) / n   (unbiased);   memory m = sqrt(max(V_hat, 0)) points;  noise sigma = sqrt(MS_e)

The raw spread max_j ybar_.j - min_j ybar_.j is shown beside m: it is biased upwards (with no
memory at all, 5 sigma_w x 4 seeds at sigma = 2 points give a spread of about 2.3 points).

    memory-to-noise   s = sqrt(V) / sigma.  F = MS_w / MS_e ~ noncentral F(k - 1, (n - 1)(k - 1),
                      lambda = n (k - 1) s^2): the interval of s inverts the noncentral F cdf in
                      lambda (exact under the model; ``snr_interval``)
    robust interval   of s (C1; ``robust_snr``): the exact interval joined with a studentised
                      bootstrap over seeds (whole seed rows resampled) of psi = log F at level
                      ``ROBUST_LEVEL``; the exact one covers 74% under heavy-tailed (t3) noise, the
                      joined one at least its nominal level under every noise simulated
                      (benchmarks/RESULTS.md, "C1's interval of s under heavy tails")
    permutation p     H0 "sigma_w does not matter": within every seed the k accuracies are
                      exchangeable across sigma_w.  F's null distribution over those relabellings
                      (scipy.stats.permutation_test, permutation_type="samples", which permutes each
                      seed's values among the sigma_w columns): exact enumeration when (k!)^n is at
                      most 40,320, else 9,999 random relabellings, p = (1 + hits) / (1 + draws)
    ratio of memories r = m_g / m_ref of two groups (a group against the low-lr SGD baseline of
                      the same tier; groups independent): parametric-bootstrap percentile interval
                      (``ratio_interval``): tables drawn from each group's fitted model (its
                      sigma_w shape shrunk to V_hat, its own sigma), r* = m*_g / m*_ref.  Its
                      coverage is measured (``_coverages``) at the groups' own components and
                      the tails are widened, from ``TAILS``, until it reaches the nominal level
    mean of per-seed values (norm slopes): Student t interval (``t_interval``); the per-seed slopes
                      of a seed x sigma_w table of log norms against log sigma_w (``SlopeTable``),
                      with tables drawn at its fitted components for the simulations (``SlopeTable.draw``)

Tables are vectorised over leading axes (..., n, k), which is what the simulations of the
operating characteristics (``implicitbias.claims.forgetting.memory_rules``) run on.  Missing runs (NaN) are
handled by ``complete``: sigma_w missing in more than half the seeds are dropped, then seeds that
lack any remaining sigma_w (the analysis is on complete seed x sigma_w tables; said in the report).

Written by hand where no library does it: the ANOVA mean squares of a batch of tables (one line
of numpy), the vectorised bisection of the noncentral F cdf (scipy.stats.ncf gives the cdf, not
its inverse in lambda) and the parametric bootstrap of a ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from implicitbias.numerics.metrics.resampling import _EXACT as EXACT_UP_TO  # one home for the resampling levels
from implicitbias.numerics.metrics.resampling import _BOOTSTRAP, _RESAMPLES, CONFIDENCE, Interval
from implicitbias.theory import params

__all__ = [
    "CONFIDENCE", "TAILS", "EXACT_UP_TO", "Anova", "Memory", "Interval", "anova", "complete", "memory",
    "snr_interval", "ROBUST_LEVEL", "robust_snr_ends", "robust_snr", "permutation_p", "simulate_tables", "ratio_draws", "ratio_interval",
    "t_interval", "NOISES", "SlopeTable", "slopes", "stratified_rank_test",
]

TAILS = (0.025, 0.0125, 0.005, 0.0025, 0.001)  # per-tail levels tried, narrowest first, until coverage >= nominal
F_CAP = 1e4  # F above this: s > ~45 noise units; the interval's lower end is taken at the cap, its upper end inf
BOOTSTRAP = 200  # parametric-bootstrap tables per interval (the 2.5% tail is the 5th order statistic)
ROBUST_LEVEL = 0.975  # the bootstrap-t level of ``robust_snr``: the narrowest of 0.95, 0.975, 0.99 whose join with
# the exact 95% interval covers within 2 SE of 95% under normal, t3, sigma_w-dependent noise and failed runs at
# the toy tier's 8 x 5 (benchmarks/spec_b_misspecified.py --only tails; RESULTS.md)


@dataclass(frozen=True)
class Anova:
    """Mean squares of tables (..., n, k): ``ms_w`` (sigma_w), ``ms_e`` (residual), ``means`` (..., k)."""

    ms_w: np.ndarray
    ms_e: np.ndarray
    means: np.ndarray
    n: int
    k: int

    @property
    def v(self) -> np.ndarray:
        """V_hat = (MS_w - MS_e) / n, unbiased for the memory variance (may be negative)."""
        return (self.ms_w - self.ms_e) / self.n

    @property
    def m(self) -> np.ndarray:
        """Memory sqrt(max(V_hat, 0)) in the table's units (points)."""
        return np.sqrt(np.maximum(self.v, 0.0))

    @property
    def f(self) -> np.ndarray:
        """F = MS_w / MS_e (inf when the residual vanishes and the sigma_w means differ)."""
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return self.ms_w / np.where(self.ms_e > 0, self.ms_e, np.finfo(float).tiny)

    @property
    def spread(self) -> np.ndarray:
        return self.means.max(-1) - self.means.min(-1)


def anova(y) -> Anova:
    """Two-way ANOVA without replication of tables ``y`` (..., n seeds, k sigma_w), complete (no NaN);
    float32 tables (the simulations) stay float32, anything else is float64."""
    y = np.asarray(y)
    y = y if y.dtype == np.float32 else y.astype(float, copy=False)
    n, k = y.shape[-2:]
    if n < 2 or k < 2:
        raise params.ParameterError(f"y must hold at least 2 seeds x 2 sigma_w, got {n} x {k}")
    col = y.mean(-2)
    row = y.mean(-1, keepdims=True)
    grand = col.mean(-1, keepdims=True)
    ms_w = n * ((col - grand) ** 2).sum(-1) / (k - 1)
    resid = y - row - col[..., None, :] + grand[..., None]
    ms_e = (resid**2).sum((-2, -1)) / ((n - 1) * (k - 1))
    return Anova(ms_w, ms_e, col, n, k)


def complete(y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The complete part of a table with NaN (missing runs): ``(table, kept_rows, kept_columns)``.

    Columns (sigma_w) missing in more than half the rows are dropped first, then rows lacking any
    remaining column; with fewer than two columns left no row remains.
    """
    y = np.asarray(y, dtype=float).reshape(len(y), -1) if len(y) else np.zeros((0, 0))
    present = ~np.isnan(y)
    cols = np.flatnonzero(present.sum(0) * 2 >= max(len(y), 1)) if y.size else np.zeros(0, int)
    rows = np.flatnonzero(present[:, cols].all(1)) if y.size and len(cols) >= 2 else np.zeros(0, int)
    return y[np.ix_(rows, cols)], rows, cols


def snr_interval(f, df1: int, df2: int, n: int, level: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Interval of s = sqrt(V) / sigma from F = MS_w / MS_e by inverting the noncentral F cdf in lambda.

    lambda_lo solves ncf.cdf(F; lambda) = 1 - (1 - level)/2 (0 if even lambda = 0 gives less),
    lambda_hi solves it = (1 - level)/2; s = sqrt(lambda / (n (k - 1))).  Vectorised bisection
    (the cdf falls with lambda), 60 halvings.  F above ``F_CAP`` (a table without residual noise):
    the lower end at the cap, the upper end inf; F NaN: NaN.
    """
    from scipy.stats import f as central_f
    from scipy.stats import ncf

    raw = np.atleast_1d(np.asarray(f, dtype=float))
    capped = ~(raw <= F_CAP)  # beyond it (or NaN, inf: no residual noise) the cdf's series is slow: the
    f = np.where(capped, F_CAP, raw)  # lower end is taken at the cap (conservative), the upper end is inf
    tail = (1 - level) / 2
    out = []
    for target in (1 - tail, tail):
        at0 = central_f.cdf(f, df1, df2)
        lo, hi = np.zeros_like(f), 10.0 * (df1 * f + 10.0)
        for _ in range(60):
            mid = (lo + hi) / 2
            above = ncf.cdf(f, df1, df2, mid) > target
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        lam = np.where(at0 <= target, 0.0, (lo + hi) / 2)
        out.append(np.sqrt(lam / (n * df1)))
    lower = np.where(np.isnan(raw), np.nan, out[0])
    return lower, np.where(np.isnan(raw), np.nan, np.where(capped, np.inf, out[1]))


def _log_f(y: np.ndarray) -> np.ndarray:
    """psi = log(MS_w / MS_e) of tables (..., n, k); s = sqrt((exp(psi) - 1) / n) where psi >= 0."""
    a = anova(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(a.ms_w / a.ms_e)


def _jackknife_se(y: np.ndarray) -> np.ndarray:
    """Jackknife standard error of psi over the seeds (rows) of tables (..., n, k) (Efron & Tibshirani
    1993, eq. 11.5): sqrt((n - 1) / n sum_i (psi_(i) - psi_(.))^2), psi_(i) without row i.  Each
    psi_(i) from the full table's sums less row i, O(n k) per table instead of n ANOVAs and no
    (..., n, k) array per left-out row: with m = n - 1 rows left, column totals C_j, row means r_l,
    D_i = sum_j C_j y_ij and Q_i = sum_j y_ij^2, the left-out column means c_ij = (C_j - y_ij) / m
    have sum_j c_ij^2 = (sum_j C_j^2 - 2 D_i + Q_i) / m^2 and grand mean g_i = (sum_j C_j - k r_i) / (m k);
    SS_w = m (sum_j c_ij^2 - k g_i^2) and SS_e = sum y^2 - Q_i - k (sum_l r_l^2 - r_i^2) - m sum_j c_ij^2
    + m k g_i^2."""
    y = np.asarray(y, dtype=float)
    n, k = y.shape[-2:]
    m = n - 1
    y = y - y.mean((-2, -1), keepdims=True)  # centred: the sums of squares below cancel less
    rows = y.mean(-1)  # (..., n)
    totals = y.sum(-2)  # (..., k): C_j
    q = (y * y).sum(-1)  # (..., n): Q_i
    d = np.einsum("...ij,...j->...i", y, totals)  # (..., n): D_i
    c2 = ((totals * totals).sum(-1, keepdims=True) - 2 * d + q) / m**2  # sum_j c_ij^2
    grand = (totals.sum(-1, keepdims=True) - k * rows) / (m * k)
    ss_w = m * (c2 - k * grand**2)
    r2 = rows * rows
    ss_e = q.sum(-1, keepdims=True) - q - k * (r2.sum(-1, keepdims=True) - r2) - m * c2 + m * k * grand**2
    with np.errstate(divide="ignore", invalid="ignore"):
        loo = np.log((ss_w / (k - 1)) / (np.maximum(ss_e, 0.0) / ((m - 1) * (k - 1))))
    return np.sqrt((n - 1) / n * ((loo - loo.mean(-1, keepdims=True)) ** 2).sum(-1))


def robust_snr_ends(tables, level: float = CONFIDENCE, boot_level: float = ROBUST_LEVEL,
                    resamples: int = _BOOTSTRAP, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The robust interval of s of complete tables (..., n, k), vectorised over the leading axes.

    Studentised bootstrap (bootstrap-t; Efron & Tibshirani 1993, ch. 12.5) of psi = log F over the
    seeds: ``resamples`` resamples of whole seed rows (``scipy.stats.bootstrap`` over the row
    indices, as ``resampling.bootstrap`` does; the same resamples for every table), each with
    t* = (psi* - psi) / se*(psi*) (jackknife se); psi's interval [psi - t*_(1-a) se, psi - t*_(a) se]
    with a = (1 - ``boot_level``) / 2 (outward order statistics; resamples whose t* is undefined, with
    too few distinct seeds for a jackknife, left out), mapped to s = sqrt(max(exp(psi) - 1, 0)
    / n) and joined with the exact interval at ``level`` (``snr_interval``): lower end the smaller,
    upper end the larger.  Written by hand around scipy because no library studentises a statistic
    of a seed x sigma_w table; ``resampling.bootstrap`` takes one table, the simulations thousands.
    """
    import warnings

    from scipy.stats import DegenerateDataWarning, bootstrap

    y = np.asarray(tables, dtype=float)
    n, k = y.shape[-2:]
    if n < 3 or k < 2:
        raise params.ParameterError(f"tables must hold at least 3 seeds x 2 sigma_w, got {n} x {k}")
    psi, se = _log_f(y), _jackknife_se(y)

    def pivot(idx, axis=-1):
        yb = y[..., idx.astype(int), :]  # (..., B, n, k), or (..., n, k) for the data themselves
        extra = (None,) * (idx.ndim - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (_log_f(yb) - psi[(..., *extra)]) / _jackknife_se(yb)
        return np.where(np.isfinite(t), t, np.nan)

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)  # scipy's own interval of t* (not used) on NaN
        dist = bootstrap((np.arange(n, dtype=float),), pivot, vectorized=True, n_resamples=resamples, batch=50,
                         method="percentile", rng=np.random.default_rng(seed)).bootstrap_distribution
    tail = (1 - boot_level) / 2
    t_lo, t_hi = np.nanquantile(dist, tail, axis=-1, method="lower"), np.nanquantile(dist, 1 - tail, axis=-1, method="higher")
    with np.errstate(invalid="ignore", over="ignore"):
        b_lo = np.sqrt(np.maximum(np.expm1(psi - t_hi * se), 0.0) / n)
        b_hi = np.sqrt(np.maximum(np.expm1(psi - t_lo * se), 0.0) / n)
    e_lo, e_hi = snr_interval(np.exp(psi), k - 1, (n - 1) * (k - 1), n, level)
    e_lo, e_hi = e_lo.reshape(psi.shape), e_hi.reshape(psi.shape)
    return np.fmin(e_lo, b_lo), np.fmax(e_hi, b_hi)


def robust_snr(y, level: float = CONFIDENCE, seed: int = 0) -> Interval:
    """s = m / sigma of a seed x sigma_w table (NaN = missing run, ``complete``) with the robust interval
    (``robust_snr_ends``); NaN below 3 complete seeds or 2 sigma_w."""
    table, _, _ = complete(y)
    if table.ndim != 2 or table.shape[0] < 3 or table.shape[1] < 2:
        return Interval(math.nan, math.nan, math.nan, level, method="none")
    a = anova(table)
    s = float(a.m / math.sqrt(a.ms_e)) if a.ms_e > 0 else math.inf
    lo, hi = robust_snr_ends(table, level, seed=seed)
    return Interval(s, float(lo), float(hi), level, method=f"exact noncentral F joined with a bootstrap-t over seeds "
                                                            f"at {ROBUST_LEVEL:g}")


def permutation_p(y, seed: int = 0) -> tuple[float, int, bool]:
    """One-sided p-value of F under relabelling sigma_w within seeds: ``(p, relabellings, exact)``."""
    from scipy.stats import permutation_test

    y = np.asarray(y, dtype=float)
    n, k = y.shape
    count = math.factorial(k) ** n
    exact = count <= EXACT_UP_TO

    def statistic(*columns, axis=-1):
        table = np.stack(columns, axis=-1)  # (..., n, k)
        return anova(table).f

    res = permutation_test(tuple(y[:, j] for j in range(k)), statistic, permutation_type="samples", vectorized=True,
                           n_resamples=math.inf if exact else _RESAMPLES, alternative="greater",
                           rng=np.random.default_rng(seed))
    return float(res.pvalue), count if exact else _RESAMPLES, exact


@dataclass(frozen=True)
class Memory:
    """The memory of one group's table: estimates, intervals, null test, and the fitted components."""

    n: int
    k: int
    spread: float  # raw: best minus worst seed-mean accuracy (points)
    v: float  # V_hat (points^2; may be negative)
    m: float  # sqrt(max(V_hat, 0)) (points)
    sigma: float  # seed noise sqrt(MS_e) (points)
    snr: Interval  # s = m / sigma with its exact interval
    p: float  # permutation p-value of F (one-sided)
    relabellings: int
    exact: bool
    shape: tuple[float, ...]  # fitted sigma_w effects a_j = ybar_.j - ybar (points)
    rows: tuple[int, ...] = ()  # kept rows (seed positions) and columns (sigma_w positions) of the input
    cols: tuple[int, ...] = ()

    @property
    def usable(self) -> bool:
        return self.n >= 2 and self.k >= 2


def memory(y, level: float = CONFIDENCE, seed: int = 0, permute: bool = True) -> Memory:
    """Memory of a seed x sigma_w table (NaN = missing run, see ``complete``), module docstring;
    ``permute=False`` leaves out the permutation test (p NaN), for simulations."""
    table, rows, cols = complete(y)
    n, k = table.shape if table.size else (0, len(cols))
    if n < 2 or k < 2:
        nan = math.nan
        return Memory(n, k, nan, nan, nan, nan, Interval(nan, nan, nan, level, method="none"), nan, 0, True, (),
                      tuple(rows), tuple(cols))
    a = anova(table)
    lo, hi = snr_interval(a.f, k - 1, (n - 1) * (k - 1), n, level)
    sigma = float(np.sqrt(a.ms_e))
    snr = float(a.m / sigma) if sigma > 0 else math.inf
    p, count, exact = permutation_p(table, seed) if permute else (math.nan, 0, False)
    shape = tuple(float(x) for x in a.means - a.means.mean())
    return Memory(n, k, float(a.spread), float(a.v), float(a.m), sigma,
                  Interval(snr, float(lo[0]), float(hi[0]), level, method="exact noncentral F inversion"),
                  p, count, exact, shape, tuple(int(r) for r in rows), tuple(int(c) for c in cols))


def simulate_tables(shape, m: float, sigma: float, n: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` tables (draws, n, k) of the model with sigma_w effects ``shape`` rescaled to memory
    ``m`` (sqrt V) and noise ``sigma`` (seed effects cancel in every statistic and are left out)."""
    a = np.asarray(shape, dtype=float)
    a = a - a.mean()
    scale = math.sqrt((a**2).sum() / (len(a) - 1)) if len(a) > 1 else 0.0
    effects = a * (m / scale) if scale > 0 else np.zeros_like(a)
    return (effects + sigma * rng.standard_normal((draws, n, len(a)), dtype=np.float32)).astype(np.float32)


def ratio_draws(group: Memory, ref: Memory, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Parametric-bootstrap draws of r* = m*_g / m*_ref from the two fitted models (inf when m*_ref = 0)."""
    g = anova(simulate_tables(group.shape, group.m, group.sigma, group.n, draws, rng)).m
    r = anova(simulate_tables(ref.shape, ref.m, ref.sigma, ref.n, draws, rng)).m
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r > 0, g / np.where(r > 0, r, 1.0), np.inf)


def _percentiles(draws: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ``tail`` quantiles along the last axis, order statistics without interpolation
    (outward: ``lower`` / ``higher``), so an infinite draw counts as the largest and never mixes in."""
    return np.quantile(draws, tail, axis=-1, method="lower"), np.quantile(draws, 1 - tail, axis=-1, method="higher")


def _coverages(group: Memory, ref: Memory, tails, sims: int, draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = group.m / ref.m
    hits = np.zeros(len(tails))
    for start in range(0, sims, 100):
        b = min(100, sims - start)
        ga = anova(simulate_tables(group.shape, group.m, group.sigma, group.n, b, rng))
        ra = anova(simulate_tables(ref.shape, ref.m, ref.sigma, ref.n, b, rng))
        # each simulated tier's own bootstrap: refit, shrink, redraw
        gd = _redraw(ga, group.n, draws, rng)
        rd = _redraw(ra, ref.n, draws, rng)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(rd > 0, gd / np.where(rd > 0, rd, 1.0), np.inf)
        for i, t in enumerate(tails):
            lo, hi = _percentiles(r, t)
            hits[i] += ((lo <= truth + 1e-12) & (truth <= hi + 1e-12)).sum()
    return hits / sims


def _redraw(a: Anova, n: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap memories (sims, draws) from the fitted models of a batch of ANOVAs (sims,)."""
    shape = a.means - a.means.mean(-1, keepdims=True)
    scale = np.sqrt((shape**2).sum(-1) / (a.k - 1))
    effects = shape * np.where(scale > 0, a.m / np.where(scale > 0, scale, 1.0), 0.0)[:, None]
    sigma = np.sqrt(a.ms_e)
    noise = rng.standard_normal((len(sigma), draws, n, a.k), dtype=np.float32)
    tables = effects[:, None, None, :].astype(np.float32) + sigma[:, None, None, None].astype(np.float32) * noise
    return anova(tables).m


def ratio_interval(group: Memory, ref: Memory, level: float = CONFIDENCE, seed: int = 0,
                   sims: int = 400) -> Interval:
    """r = m_g / m_ref with the narrowest percentile interval from ``TAILS`` whose measured coverage
    at the fitted components reaches ``level`` (the widest one, and its coverage, if none does)."""
    if not (group.usable and ref.usable) or not ref.m > 0:
        return Interval(math.nan, math.nan, math.nan, level, method="no reference memory")
    rng = np.random.default_rng(seed)
    draws = ratio_draws(group, ref, BOOTSTRAP * 10, rng)
    covered = _coverages(group, ref, TAILS, sims, BOOTSTRAP, seed + 1)
    # Monte Carlo tolerance: 2 standard errors of a coverage estimate from ``sims`` simulated experiments
    tol = 2 * math.sqrt(level * (1 - level) / sims)
    i = next((i for i, c in enumerate(covered) if c >= level - tol), len(TAILS) - 1)
    lo, hi = _percentiles(draws, TAILS[i])
    widened = "" if i == 0 else f", widened to per-tail {TAILS[i]:g}"
    return Interval(group.m / ref.m, float(lo), float(hi), level, float(covered[i]),
                    f"parametric bootstrap percentile{widened}")


def t_interval(values, level: float = CONFIDENCE) -> Interval:
    """Mean of per-seed values (non-finite left out) with its Student t interval (NaN below 2 values)."""
    from scipy.stats import t

    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if len(v) == 0:
        return Interval(math.nan, math.nan, math.nan, level, method="t")
    mean = float(v.mean())
    if len(v) < 2:
        return Interval(mean, math.nan, math.nan, level, method="t")
    half = float(t.ppf(1 - (1 - level) / 2, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
    return Interval(mean, mean - half, mean + half, level, method="t")


NOISES = ("normal", "resampled", "student-t")  # how ``SlopeTable.draw`` draws the seed rows


@dataclass(frozen=True)
class SlopeTable:
    """A seed x level table ``y`` (rows: seeds; NaN: a missing run) whose per-seed statistic is the
    least-squares slope of the row against ``x`` (e.g. log final norm against log sigma_w: the norm
    slope), over the row's present cells (seeds with fewer than two are left out)."""

    x: tuple[float, ...]
    y: tuple[tuple[float, ...], ...]

    @property
    def values(self) -> list[float]:
        """The per-seed slopes (``slopes`` of each row's present cells)."""
        x = np.asarray(self.x, dtype=float)
        out = []
        for row in np.asarray(self.y, dtype=float).reshape(len(self.y), len(x)):
            ok = ~np.isnan(row)
            if len(np.unique(x[ok])) >= 2:
                out.append(float(slopes(row[ok], x[ok])))
        return out

    def _complete(self) -> tuple[np.ndarray, np.ndarray]:
        """The complete part of the table (``complete``) and the x of its kept columns."""
        table, _, cols = complete(np.asarray(self.y, dtype=float).reshape(len(self.y), len(self.x)))
        return table, np.asarray(self.x, dtype=float)[cols]

    def simulate(self, slope: float, n: int, sims: int, noise: str, rng: np.random.Generator) -> np.ndarray:
        """The per-seed slopes (sims, n) recomputed from ``draw``'s tables."""
        return slopes(self.draw(slope, n, sims, noise, rng), self._complete()[1])

    def draw(self, slope: float, n: int, sims: int, noise: str, rng: np.random.Generator) -> np.ndarray:
        """``sims`` tables (sims, n, k) at the fitted components (the complete part, ``complete``): the
        column means, with their least-squares slope moved to ``slope`` (a multiple of x - mean x added),
        plus seed rows of noise from the two-way residual rows R (n_0 x k; seed effects cancel in a
        slope and are left out): ``normal`` g R / sqrt(n_0 - 1), g ~ N(0, I) (covariance R'R / (n_0 - 1),
        so each per-seed slope is normal with the measured sd of the slopes); ``resampled`` the rows of
        R sqrt(n_0 / (n_0 - 1)) drawn with replacement (the slopes' own deviations, bootstrapped);
        ``student-t`` the normal row over sqrt(chi^2_3) (a multivariate t with 3 df at the same
        covariance: heavy-tailed seeds, each per-seed slope t_3 at the measured sd)."""
        params.choice("noise", noise, NOISES)
        table, x = self._complete()
        if table.shape[0] < 2:
            raise params.ParameterError("y must hold at least two complete seeds to draw tables from")
        c = x - x.mean()
        means = table.mean(0)
        means = means + (slope - slopes(means, x)) * c
        resid = table - table.mean(1, keepdims=True) - table.mean(0) + table.mean()
        n0 = len(table)
        if noise == "resampled":
            rows = resid * math.sqrt(n0 / (n0 - 1))
            return means + rows[rng.integers(0, n0, (sims, n))]
        rows = rng.standard_normal((sims, n, n0)) @ resid / math.sqrt(n0 - 1)
        if noise == "student-t":
            rows = rows / np.sqrt(rng.chisquare(3, (sims, n, 1)))
        return means + rows


def slopes(tables, x) -> np.ndarray:
    """Least-squares slopes of the rows of complete tables (..., k) against ``x`` (k,), vectorised over
    the leading axes: sum_j (x_j - mean x) y_j / sum_j (x_j - mean x)^2."""
    c = np.asarray(x, dtype=float) - np.mean(x)
    return (np.asarray(tables, dtype=float) * c).sum(-1) / (c**2).sum()


def _rho(rx: np.ndarray, ry: np.ndarray) -> np.ndarray:
    """Pearson correlation of the rank vector ``rx`` with each row of ``ry`` (Spearman's rho; 0 if constant)."""
    cx = rx - rx.mean()
    cy = ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((cx**2).sum() * (cy**2).sum(axis=-1))
    return np.where(den > 0, (cy * cx).sum(axis=-1) / np.where(den > 0, den, 1.0), 0.0)


def stratified_rank_test(strata, seed: int = 0) -> dict:
    """Sum over strata of Spearman's rho(x, y), and its permutation p-value within strata.

    ``strata`` is a list of ``(x, y)`` pairs (e.g. one per optimiser family, never pooled; one
    stratum is Spearman's test with exact p-values); strata with fewer than three points are left
    out.  H0: within each stratum the y are exchangeable.  The null distribution is enumerated
    exactly when the product of n_s! is at most 40,320, else drawn 9,999 times (Monte Carlo,
    p = (1 + hits) / (1 + draws)).  Written by hand because scipy's permutation_test does not
    permute within strata.  Returns ``{"statistic", "rho", "p_less", "p_greater", "n",
    "orderings", "exact"}`` (``rho`` per stratum; the p-values of the two one-sided alternatives).
    """
    import itertools

    from scipy.stats import rankdata

    data = [(rankdata(x), rankdata(y)) for x, y in strata if len(x) >= 3]
    if not data:
        raise params.ParameterError("strata must include at least one stratum of three or more points")
    rho = [float(_rho(rx, ry[None])[0]) for rx, ry in data]
    observed = float(sum(rho))
    count = math.prod(math.factorial(len(ry)) for _, ry in data)
    exact = count <= EXACT_UP_TO
    if exact:  # every within-stratum ordering: the sums over the product of the strata's orderings
        null = np.zeros(1)
        for rx, ry in data:
            orders = np.array(list(itertools.permutations(range(len(ry)))))
            null = np.add.outer(null, _rho(rx, ry[orders])).ravel()
    else:
        rng = np.random.default_rng(seed)
        null = sum(_rho(rx, rng.permuted(np.tile(ry, (_RESAMPLES, 1)), axis=1)) for rx, ry in data)
    tol = 1e-12

    def p(hits: int) -> float:
        return hits / len(null) if exact else (1 + hits) / (1 + len(null))

    return {"statistic": observed, "rho": rho, "p_less": p(int((null <= observed + tol).sum())),
            "p_greater": p(int((null >= observed - tol).sum())), "n": sum(len(ry) for _, ry in data),
            "orderings": count if exact else _RESAMPLES, "exact": exact}
