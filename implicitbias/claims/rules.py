"""Pieces shared by the verdict rules of several claims: trends, Fisher's exact test, exact equality.

- ``trend(steps, tolerance)``: a trend along a grid holds when every step (difference in the
  claimed direction) exceeds ``tolerance``; it is contradicted when some step goes the other way
  by more than ``tolerance``; otherwise the data cannot tell (steps within the tolerance).
  ``trend_verdict`` turns that into agrees / disagrees / inconclusive.
- ``fisher_smaller(hits_a, n_a, hits_b, n_b)``: one-sided Fisher exact p-value that the success
  rate of b is below that of a (``scipy.stats.fisher_exact``).
- ``same_expression(derived, published, symbols)``: exact symbolic equality (sympy) of a derived
  expression, stored as text, and a published one.

This module holds no claim (the claims registry skips it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from implicitbias.claims import Verdict, agrees, disagrees, inconclusive

__all__ = ["HOLDS", "REVERSED", "UNCLEAR", "trend", "trend_verdict", "fisher_smaller", "same_expression"]

HOLDS, REVERSED, UNCLEAR = "holds", "reversed", "unclear"


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
