"""Resampling statistics over seeds: bootstrap CIs and permutation tests (Spec B verdicts).

Spec B's verdicts state n, seeds and CIs, and use exact or permutation p-values on small samples
(never asymptotic p-values on a handful of points):

    bootstrap           any statistic of per-seed records with a percentile bootstrap CI over the
                        seeds (scipy.stats.bootstrap; several samples resampled independently)
    mean_ci             the mean of per-seed values with that CI
    mean_ci_rows        the same for many rows at once (simulated experiments), at several levels
    slope_ci            least-squares slope of per-level values (e.g. a spread per batch size)
                        against a covariate, with a CI resampling every level's seeds
    trend_test          that slope's permutation p-value: exact over all n! pairings of the
                        levels with the means for n <= 8 levels, else 9999 random pairings
                        (scipy.stats.permutation_test)

Spearman's and the stratified rank test, and the memory statistics of Spec B's verdicts, are in
``numerics.metrics.memory_stats``.

Source of the procedures: Efron & Tibshirani (1993), ch. 13 (percentile interval); Good (2005),
"Permutation, Parametric and Bootstrap Tests of Hypotheses", ch. 3 (exact permutation tests).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from implicitbias.theory import params

__all__ = ["CONFIDENCE", "Interval", "TrendTest", "bootstrap", "mean_ci", "mean_ci_rows", "slope_ci", "trend_test"]

CONFIDENCE = 0.95
_RESAMPLES = 9999  # Monte Carlo permutations
_BOOTSTRAP = 1999  # bootstrap resamples (a handful of seeds has few distinct resamples anyway)
_EXACT = 40320  # 8!: orderings enumerated exactly up to this many; beyond, Monte Carlo


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval: ``level`` the nominal two-sided level, ``coverage`` the measured
    one (NaN: not measured), ``method`` how it was drawn, ``n`` the units it was drawn from (seeds,
    levels; None where the method does not count them).  Every interval of the package is one."""

    estimate: float
    lo: float
    hi: float
    level: float = CONFIDENCE
    coverage: float = math.nan
    method: str = ""
    n: int | None = None


@dataclass(frozen=True)
class TrendTest:
    """``trend_test``'s result: the least-squares slope, its permutation p-value, n levels, the pairings
    drawn (all n! when ``exact``, else Monte Carlo)."""

    slope: float
    p: float
    n: int
    pairings: int
    exact: bool


def _interval(low: float, high: float, estimate: float, n: int, level: float) -> Interval:
    return Interval(float(estimate), float(low), float(high), level, method="percentile bootstrap over seeds", n=int(n))


def bootstrap(samples: Sequence[Sequence], statistic: Callable[..., np.ndarray], level: float = CONFIDENCE,
              seed: int = 0) -> Interval:
    """``statistic`` of the rows of ``samples`` with a percentile bootstrap CI (scipy.stats.bootstrap).

    ``samples[i]`` is an array whose rows (axis 0) are the resampled units, e.g. seeds (a row may
    hold a seed's accuracy at every sigma_w, NaN where missing); each sample is resampled with
    replacement independently of the others.  ``statistic(*batches)`` must be vectorised: it gets
    arrays of shape (B, n_i, ...) (B resamples of sample i's rows) and returns B values.
    An ``Interval`` with ``n`` the size of the smallest sample; the
    interval is widened, if needed, to contain the estimate (percentile intervals of biased
    statistics such as a range can miss it); with fewer than two rows in every sample it is the
    estimate itself; an empty sample or a NaN estimate gives NaN.
    """
    from scipy.stats import bootstrap as scipy_bootstrap

    arrays = [np.asarray(s, dtype=float) for s in samples]
    if not arrays or any(len(a) == 0 for a in arrays):
        return _interval(math.nan, math.nan, math.nan, 0, level)
    n = min(len(a) for a in arrays)
    estimate = float(np.asarray(statistic(*(a[None] for a in arrays)))[0])
    if math.isnan(estimate) or all(len(a) < 2 for a in arrays):
        return _interval(estimate, estimate, estimate, n, level)

    # a one-row sample resampled with replacement is always that row: it is held fixed (scipy
    # refuses samples of fewer than two observations) and only the others are resampled
    varying = [i for i, a in enumerate(arrays) if len(a) >= 2]

    def resampled(*indices, axis=-1):
        picks = [np.zeros((*indices[0].shape[:-1], 1), dtype=int)] * len(arrays)
        for i, idx in zip(varying, indices):
            picks[i] = idx.astype(int)
        return statistic(*(a[i] for a, i in zip(arrays, picks)))

    with np.errstate(all="ignore"):
        ci = scipy_bootstrap(tuple(np.arange(len(arrays[i]), dtype=float) for i in varying), resampled, vectorized=True,
                             paired=False, confidence_level=level, n_resamples=_BOOTSTRAP, method="percentile",
                             rng=np.random.default_rng(seed)).confidence_interval
    lo, hi = (estimate, estimate) if math.isnan(ci.low) else (min(ci.low, estimate), max(ci.high, estimate))
    return _interval(lo, hi, estimate, n, level)


def mean_ci(values: Sequence[float], level: float = CONFIDENCE, seed: int = 0) -> Interval:
    """Mean of ``values`` (one per seed; None and non-finite left out) with its bootstrap CI (the
    one-row case of ``mean_ci_rows``)."""
    v = np.asarray([float(x) for x in values if x is not None and math.isfinite(x)], dtype=float)
    if len(v) < 2:
        estimate = float(v.mean()) if len(v) else math.nan
        return _interval(estimate, estimate, estimate, len(v), level)
    lo, hi = mean_ci_rows(v[None], (level,), seed)[0]
    return _interval(lo[0], hi[0], v.mean(), len(v), level)


def mean_ci_rows(rows: np.ndarray, levels: Sequence[float] = (CONFIDENCE,), seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Percentile bootstrap CIs of the mean of every row of ``rows`` (S, n), the n columns resampled
    (``scipy.stats.bootstrap`` along the last axis, the same resamples for every row), one ``(lo, hi)``
    pair of (S,) arrays per level in ``levels``, each widened to contain the row's mean."""
    from scipy.stats import bootstrap as scipy_bootstrap

    rows = np.asarray(rows, dtype=float)
    with np.errstate(all="ignore"):
        draws = scipy_bootstrap((rows,), np.mean, axis=-1, vectorized=True, n_resamples=_BOOTSTRAP,
                                method="percentile", batch=100, rng=np.random.default_rng(seed)).bootstrap_distribution
    mean = rows.mean(-1)
    out = []
    for level in levels:
        lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2], axis=-1)
        out.append((np.minimum(lo, mean), np.maximum(hi, mean)))
    return out


def _slope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares slope of y (..., L) against x (L,), vectorised over leading axes."""
    centred = x - x.mean()
    return (np.asarray(y) * centred).sum(-1) / (centred**2).sum()


def slope_ci(levels: Sequence[float], samples: Sequence[Sequence], value: Callable[[np.ndarray], np.ndarray] | None = None,
             level: float = CONFIDENCE, seed: int = 0) -> Interval:
    """Least-squares slope of ``value(samples[i])`` against ``levels[i]``, with a bootstrap CI.

    ``value`` reduces a batch of one level's resampled rows (B, n, ...) to B numbers (default:
    the mean of 1-D rows); the bootstrap resamples every level's rows (seeds) independently;
    ``n`` is the number of levels.
    """
    x = np.asarray(levels, dtype=float)
    if len(x) < 2 or len(np.unique(x)) < 2 or len(samples) != len(x):
        raise params.ParameterError("levels must hold at least two distinct values, one sample each")
    value = value or (lambda a: a.mean(axis=-1))
    out = bootstrap(samples, lambda *batches: _slope(x, np.stack([value(b) for b in batches], axis=-1)), level, seed)
    return dataclasses.replace(out, n=len(x))


def trend_test(levels: Sequence[float], means: Sequence[float], alternative: str = "greater", seed: int = 0) -> TrendTest:
    """Permutation test of the least-squares slope of ``means`` against ``levels``.

    H0: the means are exchangeable across the levels.  Exact over all n! pairings when
    n <= 8, else 9999 random pairings.
    """
    from scipy.stats import permutation_test

    params.choice("alternative", alternative, ("greater", "less", "two-sided"))
    x = np.asarray(levels, dtype=float)
    y = np.asarray(means, dtype=float)
    if len(x) != len(y) or len(x) < 3 or len(np.unique(x)) < 2:
        raise params.ParameterError("levels must hold at least three points, two of them distinct, one mean each")
    exact = math.factorial(len(x)) <= _EXACT
    res = permutation_test((y,), lambda yy: float(_slope(x, yy)), permutation_type="pairings", alternative=alternative,
                           n_resamples=np.inf if exact else _RESAMPLES, rng=np.random.default_rng(seed))
    return TrendTest(float(res.statistic), float(res.pvalue), len(x), math.factorial(len(x)) if exact else _RESAMPLES,
                     exact)
