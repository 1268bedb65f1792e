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

from implicitbias.numerics.metrics.resampling import mean_ci
from implicitbias.theory import params

__all__ = ["MonotoneLaw", "fit_monotone", "explained_variance", "half_splits", "held_out_errors", "collapse",
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


def held_out_errors(x: Sequence[float], y: Sequence[float],
                    masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group, the means over the splits holding it out of |f(log x_g) - y_g| and of f(log x_g),
    f fitted on the split's fitting half; and every (split, held-out group) absolute error."""
    u = np.log(np.asarray(x, dtype=float))
    y = np.asarray(y, dtype=float)
    error = np.zeros(len(y))
    predicted = np.zeros(len(y))
    count = np.zeros(len(y))
    every = []
    for mask in masks:
        law = fit_monotone(u[mask], y[mask])
        guess = law(u[~mask])
        error[~mask] += np.abs(guess - y[~mask])
        predicted[~mask] += guess
        count[~mask] += 1
        every.append(np.abs(guess - y[~mask]))
    count = np.maximum(count, 1)
    return error / count, predicted / count, np.concatenate(every)


def collapse(predictors: Mapping[str, Sequence[float]], y: Sequence[float], *, reference: str = "epochs",
             max_splits: int = MAX_SPLITS, seed: int = 0) -> dict:
    """The collapse test of one family (module docstring) for every predictor against ``reference``.

    ``predictors``: name -> positive values per group (e.g. clock, epochs, steps).  Returns
    ``{"n", "splits", "exact", "predictors": {name: {"r2", "error" (mean_ci of e_g), "per_group" (e_g),
    "predicted" (mean held-out prediction per group), "band" (the BAND_QUANTILE quantile of the
    held-out absolute errors)}}, "difference": {name: mean_ci of e_g(name) - e_g(reference)} for
    every other predictor}``.
    """
    y = np.asarray(y, dtype=float)
    if reference not in predictors:
        raise params.ParameterError(f"reference must be one of {', '.join(predictors)}, got {reference!r}")
    for name, x in predictors.items():
        x = np.asarray(x, dtype=float)
        if x.shape != y.shape or not np.all(x > 0) or not np.all(np.isfinite(x)):
            raise params.ParameterError(f"{name} must hold one positive finite value per group")
    masks, exact = half_splits(len(y), max_splits, seed)
    out: dict = {"n": len(y), "splits": len(masks), "exact": exact, "predictors": {}, "difference": {}}
    for name, x in predictors.items():
        per_group, predicted, every = held_out_errors(x, y, masks)
        out["predictors"][name] = {"r2": explained_variance(x, y), "error": mean_ci(per_group.tolist(), seed=seed),
                                   "per_group": per_group.tolist(), "predicted": predicted.tolist(),
                                   "band": float(np.quantile(every, BAND_QUANTILE))}
    ref = np.asarray(out["predictors"][reference]["per_group"])
    for name in predictors:
        if name != reference:
            d = np.asarray(out["predictors"][name]["per_group"]) - ref
            out["difference"][name] = mean_ci(d.tolist(), seed=seed)
    return out
