"""Clock collapse: does a cumulative clock predict the spread across sigma_w better than epochs?

Spec B, C7 (Das et al., arXiv 2605.29152): forgetting is governed by cumulative clocks, not epoch
counts, so within one optimiser family the spreads of groups that share the value of their
governing clock should coincide however that value was reached (lr, batch size, schedule,
epochs), and a law spread = f(log clock) fitted on some groups should predict the others.  One
family at a time (the clocks have different units and are never pooled), groups g = 1..n with a
predictor x_g > 0 (the governing clock at the end of training, or the epochs, or the steps) and a
spread y_g (points):

    R^2(x)     = corr(log x, y)^2: the fraction of the spread's variance explained linearly by
                 log x (0 when x or y is constant);
    f          = the monotone least-squares fit of y on u = log x (isotonic regression, pool
                 adjacent violators: ``scipy.optimize.isotonic_regression``), non-increasing or
                 non-decreasing as the sign of Spearman's rho on the fitted groups says (ties in u,
                 values within ``TIE`` = 1e-9 of each other, i.e. clocks equal to 1e-9 relative,
                 are pooled first, weighted by their count); between knots f is interpolated
                 linearly, beyond the end knots it is held at the end values (no extrapolation);
    held-out   over splits of the n groups into a fitting half (floor(n/2) groups) and the rest:
    error        e_g = mean over the splits that hold g out of |f(u_g) - y_g| (points); every
                 split when there are at most ``max_splits`` of them, else ``max_splits`` drawn
                 at random (seeded);
    comparison d_g = e_g(clock) - e_g(epochs): the mean of d over the groups with a percentile
                 bootstrap CI resampling the groups (``resampling.mean_ci``).  Negative: the
                 clock predicts held-out spreads better than epochs do.

The fitted law on all groups of a family, with the band that holds 90% of the held-out absolute
errors, is what ``implicitbias predict`` ships (``MonotoneLaw``).  The CI treats groups as the
units; the errors of groups that share splits are not independent, so it is a descriptive
interval, stated as such where it is reported.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from implicitbias.numerics.metrics.resampling import Interval, mean_ci
from implicitbias.theory import params

__all__ = ["MonotoneLaw", "fit_monotone", "isotonic_rows", "explained_variance", "half_splits", "held_out_errors",
           "linear_errors", "linear_fit", "PredictorFit", "Collapse", "collapse",
           "BAND_QUANTILE", "MAX_SPLITS"]

BAND_QUANTILE = 0.9  # the predicted band holds this fraction of the held-out absolute errors
MAX_SPLITS = 1000  # half splits enumerated up to this many, else drawn at random
TIE = 1e-9  # u = log x closer than this are one value: equal clocks summed in another order differ by rounding


@dataclass(frozen=True)
class MonotoneLaw:
    """A monotone piecewise-linear law y = f(u) on knots ``u`` (increasing) with values ``y``."""

    u: tuple[float, ...]
    y: tuple[float, ...]

    def __call__(self, u) -> np.ndarray:
        """f at ``u``: linear between knots, the end values beyond them."""
        return np.interp(np.asarray(u, dtype=float), self.u, self.y)

    @property
    def decreasing(self) -> bool:
        return self.y[-1] < self.y[0]


def fit_monotone(u: Sequence[float], y: Sequence[float]) -> MonotoneLaw:
    """Least-squares monotone fit of ``y`` on ``u`` (module docstring), direction from Spearman's rho."""
    from scipy.optimize import isotonic_regression
    from scipy.stats import spearmanr

    u = np.asarray(u, dtype=float)
    y = np.asarray(y, dtype=float)
    if u.shape != y.shape or u.ndim != 1 or len(u) == 0:
        raise params.ParameterError(f"u and y must be equal-length non-empty vectors, got {u.shape} and {y.shape}")
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(y))):
        raise params.ParameterError("u and y must be finite")
    order = np.argsort(u, kind="stable")
    tie = np.concatenate([[0], np.cumsum(np.diff(u[order]) > TIE)])  # tie index of each sorted u
    counts = np.bincount(tie)
    knots = np.bincount(tie, weights=u[order]) / counts
    means = np.bincount(tie, weights=y[order]) / counts
    rho = spearmanr(u, y).statistic if len(knots) > 1 and np.ptp(y) > 0 else 0.0
    fitted = isotonic_regression(means, weights=counts.astype(float), increasing=bool(rho >= 0)).x
    return MonotoneLaw(tuple(float(k) for k in knots), tuple(float(v) for v in fitted))


def explained_variance(x: Sequence[float], y: Sequence[float]) -> float:
    """corr(log x, y)^2 (0 when either is constant)."""
    u = np.log(np.asarray(x, dtype=float))
    y = np.asarray(y, dtype=float)
    if len(u) < 2 or np.ptp(u) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(np.corrcoef(u, y)[0, 1] ** 2)


def half_splits(n: int, max_splits: int = MAX_SPLITS, seed: int = 0) -> tuple[np.ndarray, bool]:
    """Boolean (splits, n) masks of the fitting halves (floor(n/2) groups each) and whether they
    are all of them (True) or ``max_splits`` distinct ones drawn at random (False)."""
    n = params.integer("n", n, minimum=2)
    k = n // 2
    if math.comb(n, k) <= max_splits:
        masks = np.zeros((math.comb(n, k), n), dtype=bool)
        for i, fit in enumerate(itertools.combinations(range(n), k)):
            masks[i, list(fit)] = True
        return masks, True
    rng = np.random.default_rng(seed)
    seen: set[bytes] = set()
    masks = []
    while len(masks) < max_splits:
        mask = np.zeros(n, dtype=bool)
        mask[rng.choice(n, k, replace=False)] = True
        if mask.tobytes() not in seen:
            seen.add(mask.tobytes())
            masks.append(mask)
    return np.array(masks), False


def isotonic_rows(means: np.ndarray, weights: np.ndarray, increasing: np.ndarray) -> np.ndarray:
    """Weighted least-squares monotone fits of every row of ``means`` (S, k) on the same k sorted
    knots with ``weights`` (k,), non-decreasing where ``increasing`` (S,) else non-increasing.

    The max-min formula (Barlow, Bartholomew, Bremner & Brunk 1972, Thm 1.4):
    f_i = max_{j <= i} min_{l >= i} Av(j..l), Av the weighted mean of knots j..l; a decreasing fit
    is minus the increasing fit of -y.  Written here because scipy's ``isotonic_regression`` fits
    one vector per call and the simulated experiments of C7's operating characteristics fit thousands of
    rows per split; O(S k^2) memory, meant for the few knots of a fitting half.  Equal to scipy's
    pool-adjacent-violators to rounding (tests/test_clock_collapse.py).
    """
    means = np.asarray(means, dtype=float)
    w = np.asarray(weights, dtype=float)
    sign = np.where(np.asarray(increasing, dtype=bool), 1.0, -1.0)[:, None]
    y = means * sign
    k = y.shape[1]
    cw = np.concatenate([[0.0], np.cumsum(w)])
    cy = np.concatenate([np.zeros((len(y), 1)), np.cumsum(y * w, axis=1)], axis=1)
    j, l = np.triu_indices(k)
    avg = np.full((len(y), k, k), np.inf)  # avg[s, j, l] = Av(j..l) for j <= l
    avg[:, j, l] = (cy[:, l + 1] - cy[:, j]) / (cw[l + 1] - cw[j])
    suffix_min = np.minimum.accumulate(avg[:, :, ::-1], axis=2)[:, :, ::-1]  # [s, j, i] = min_{l >= i} Av(j..l)
    below_j, below_i = np.tril_indices(k, -1)
    suffix_min[:, below_j, below_i] = -np.inf  # the max runs over j <= i only
    return suffix_min.max(axis=1) * sign


def _fit_rows(u: np.ndarray, Y: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``fit_monotone(u, Y[s])(at)`` for every row s of Y (S, m), by ``isotonic_rows``: the same ties,
    weights and direction (the sign of Spearman's rho of each row)."""
    from scipy.stats import rankdata

    order = np.argsort(u, kind="stable")
    tie = np.concatenate([[0], np.cumsum(np.diff(u[order]) > TIE)])
    counts = np.bincount(tie).astype(float)
    knots = np.bincount(tie, weights=u[order]) / counts
    pool = np.zeros((len(u), len(knots)))
    pool[order, tie] = 1.0 / counts[tie]
    means = Y @ pool
    if len(knots) > 1:
        ru = rankdata(u) - (len(u) + 1) / 2
        rho = (rankdata(Y, axis=1) - (len(u) + 1) / 2) @ ru
        rho[np.ptp(Y, axis=1) == 0] = 0.0
    else:
        rho = np.zeros(len(Y))
    fitted = isotonic_rows(means, counts, rho >= 0)
    basis = np.array([np.interp(at, knots, e) for e in np.eye(len(knots))])  # np.interp is linear in the values
    return fitted @ basis


def held_out_errors(x: Sequence[float], y, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group, the means over the splits holding it out of |f(log x_g) - y_g| and of f(log x_g),
    f the monotone law (``fit_monotone``) fitted on the split's fitting half; and every (split,
    held-out group) absolute error.  ``y`` is one spread per group (n,), or rows of them (S, n)
    (simulated experiments), and then every output has a leading axis S."""
    u = np.log(np.asarray(x, dtype=float))
    Y = np.asarray(y, dtype=float)
    rows = np.atleast_2d(Y)
    error = np.zeros(rows.shape)
    predicted = np.zeros(rows.shape)
    count = np.zeros(rows.shape[1])
    every = []
    for mask in masks:
        guess = _fit_rows(u[mask], rows[:, mask], u[~mask])
        miss = np.abs(guess - rows[:, ~mask])
        error[:, ~mask] += miss
        predicted[:, ~mask] += guess
        count[~mask] += 1
        every.append(miss)
    count = np.maximum(count, 1)
    out = error / count, predicted / count, np.concatenate(every, axis=1)
    return out if Y.ndim == 2 else tuple(a[0] for a in out)


def _design(columns: Sequence[Sequence[float]]) -> np.ndarray:
    """The least-squares design [1, log x_1, log x_2, ...], one row per group."""
    return np.column_stack([np.ones(len(columns[0]))] + [np.log(np.asarray(c, dtype=float)) for c in columns])


def linear_fit(columns: Sequence[Sequence[float]], y: Sequence[float]) -> np.ndarray:
    """The least-squares fit y = a + sum_i b_i log x_i on every group, evaluated at every group."""
    X = _design(columns)
    return X @ np.linalg.lstsq(X, np.asarray(y, dtype=float), rcond=None)[0]


def linear_errors(columns: Sequence[Sequence[float]], y, masks: np.ndarray) -> np.ndarray:
    """Per group, the mean over the half splits holding it out of |y_g - prediction| of the least-squares
    fit y = a + sum_i b_i log x_i on the split's fitting half (``numpy.linalg.lstsq``: minimum-norm when
    columns are collinear); ``y`` (n,) or rows (S, n), as in ``held_out_errors``."""
    X = _design(columns)
    Y = np.asarray(y, dtype=float)
    rows = np.atleast_2d(Y)
    error, count = np.zeros(rows.shape), np.zeros(rows.shape[1])
    for mask in masks:
        coef = np.linalg.lstsq(X[mask], rows[:, mask].T, rcond=None)[0]
        error[:, ~mask] += np.abs((X[~mask] @ coef).T - rows[:, ~mask])
        count[~mask] += 1
    out = error / np.maximum(count, 1)
    return out if Y.ndim == 2 else out[0]


@dataclass(frozen=True)
class PredictorFit:
    """One predictor in ``collapse``: R^2 of the monotone fit, the mean held-out absolute error e_g
    over groups with its CI, e_g and the mean held-out prediction per group, and ``band``, the
    BAND_QUANTILE quantile of every held-out absolute error."""

    r2: float
    error: Interval
    per_group: tuple[float, ...]
    predicted: tuple[float, ...]
    band: float


@dataclass(frozen=True)
class Collapse:
    """``collapse``'s result: n groups, the half splits used (all of them when ``exact``), each
    predictor's fit by name, and for every predictor but the reference the mean of
    e_g(name) - e_g(reference) with its CI."""

    n: int
    splits: int
    exact: bool
    predictors: dict[str, PredictorFit]
    difference: dict[str, Interval]


def collapse(predictors: Mapping[str, Sequence[float]], y: Sequence[float], *, reference: str = "epochs",
             max_splits: int = MAX_SPLITS, seed: int = 0) -> Collapse:
    """The collapse test of one family (module docstring) for every predictor against ``reference``.

    ``predictors``: name -> positive values per group (e.g. clock, epochs, steps).
    """
    y = np.asarray(y, dtype=float)
    if reference not in predictors:
        raise params.ParameterError(f"reference must be one of {', '.join(predictors)}, got {reference!r}")
    for name, x in predictors.items():
        x = np.asarray(x, dtype=float)
        if x.shape != y.shape or not np.all(x > 0) or not np.all(np.isfinite(x)):
            raise params.ParameterError(f"{name} must hold one positive finite value per group")
    masks, exact = half_splits(len(y), max_splits, seed)
    fits = {}
    for name, x in predictors.items():
        per_group, predicted, every = held_out_errors(x, y, masks)
        fits[name] = PredictorFit(explained_variance(x, y), mean_ci(per_group.tolist(), seed=seed),
                                  tuple(per_group.tolist()), tuple(predicted.tolist()),
                                  float(np.quantile(every, BAND_QUANTILE)))
    ref = np.asarray(fits[reference].per_group)
    difference = {name: mean_ci((np.asarray(fits[name].per_group) - ref).tolist(), seed=seed)
                  for name in predictors if name != reference}
    return Collapse(len(y), len(masks), exact, fits, difference)
