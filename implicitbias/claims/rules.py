"""Pieces shared by the verdict rules of several claims: trends, exact tests, exact equality.

- ``trend(steps, tolerance)``: a trend along a grid holds when every step (difference in the
  claimed direction) exceeds ``tolerance``; it is contradicted when some step goes the other way
  by more than ``tolerance``; otherwise the data cannot tell (steps within the tolerance).
  ``trend_verdict`` turns that into agrees / disagrees / inconclusive.
- ``exact_spearman(x, y)``: Spearman's rho with exact permutation p-values (every pairing of the
  n points enumerated by ``scipy.stats.permutation_test`` when n! is small, 10^5 seeded
  resamples beyond n = 8), the test a handful of cells calls for (no asymptotic p-values).
- ``fisher_smaller(hits_a, n_a, hits_b, n_b)``: one-sided Fisher exact p-value that the success
  rate of b is below that of a (``scipy.stats.fisher_exact``).
- ``same_expression(derived, published, symbols)``: exact symbolic equality (sympy) of a derived
  expression, stored as text, and a published one.

This module holds no claim (the claims registry skips it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from implicitbias.claims import Verdict, agrees, disagrees, inconclusive

__all__ = ["HOLDS", "REVERSED", "UNCLEAR", "trend", "trend_verdict", "exact_spearman", "fisher_smaller", "same_expression"]

HOLDS, REVERSED, UNCLEAR = "holds", "reversed", "unclear"
EXACT_UP_TO = 8  # 8! = 40320 pairings: enumerated exactly; beyond that 10^5 seeded resamples


def trend(steps: Sequence[float], tolerance: float) -> str:
    """HOLDS when every step > tolerance, REVERSED when some step < -tolerance, else UNCLEAR."""
    steps = np.asarray(steps, dtype=float)
    if steps.size == 0 or np.isnan(steps).any():
        return UNCLEAR
    if steps.min() > tolerance:
        return HOLDS
    if steps.min() < -tolerance:
        return REVERSED
    return UNCLEAR


def trend_verdict(steps: Sequence[float], tolerance: float, measured: str, *, holds: str, reversed: str,
                  unclear: str, **numbers) -> Verdict:
    """agrees (reason ``holds``), disagrees (``reversed``) or inconclusive (``unclear``) by ``trend``."""
    found = trend(steps, tolerance)
    if found == HOLDS:
        return agrees(holds, measured, **numbers)
    if found == REVERSED:
        return disagrees(reversed, measured, **numbers)
    return inconclusive(unclear, measured, **numbers)


def exact_spearman(x: Sequence[float], y: Sequence[float]) -> dict:
    """{"rho", "p_greater", "p_less", "n", "exact"}: Spearman rho of (x, y) and its permutation p-values.

    p_greater = P(rho* >= rho) and p_less = P(rho* <= rho) over the pairings of x with y.
    """
    from scipy.stats import permutation_test, rankdata

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    ry = rankdata(y) - (n + 1) / 2
    if n < 3 or len(y) != n or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"rho": math.nan, "p_greater": 1.0, "p_less": 1.0, "n": n, "exact": True}

    def rho(a, axis=-1):  # Pearson correlation of the ranks (ties get mean ranks), batched
        ra = rankdata(a, axis=axis)
        ra = ra - ra.mean(axis=axis, keepdims=True)
        return (ra * ry).sum(axis=axis) / np.sqrt((ra**2).sum(axis=axis) * (ry**2).sum())

    exact = n <= EXACT_UP_TO
    out = {"n": n, "exact": exact}
    for side, alternative in (("p_greater", "greater"), ("p_less", "less")):
        res = permutation_test((x,), rho, permutation_type="pairings", vectorized=True,
                               n_resamples=math.inf if exact else 100_000, alternative=alternative, rng=0)
        out[side] = float(res.pvalue)
        out["rho"] = float(res.statistic)
    return out


def fisher_smaller(hits_a: int, n_a: int, hits_b: int, n_b: int) -> float:
    """One-sided Fisher exact p-value for 'the success rate of b is smaller than that of a'."""
    from scipy.stats import fisher_exact

    table = [[hits_a, n_a - hits_a], [hits_b, n_b - hits_b]]
    return float(fisher_exact(table, alternative="greater").pvalue)


def same_expression(derived: str, published, symbols=()) -> bool:
    """True when the text ``derived`` (sympy syntax) equals the sympy expression ``published``.

    ``symbols``: the sympy symbols the text refers to (so their assumptions match).
    """
    import sympy as sp

    expr = sp.sympify(derived, locals={s.name: s for s in symbols})
    return sp.simplify(expr - published) == 0
