"""The pieces the verdict rules share (``implicitbias.claims.rules``): the trend at its tolerance
exactly (strict on both sides), against the definitions in its docstring, and Fisher's one-sided
test against the hypergeometric tail computed here."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from implicitbias.claims.rules import HOLDS, REVERSED, UNCLEAR, fisher_smaller, trend


@pytest.mark.parametrize("steps, expected", [
    ([0.75, 1.0], HOLDS), ([0.5, 0.75], UNCLEAR), ([0.75, -0.5], UNCLEAR), ([0.75, -0.75], REVERSED),
    ([], UNCLEAR), ([0.75, math.nan], UNCLEAR),
])
def test_a_step_equal_to_the_tolerance_decides_nothing(steps, expected):
    """Steps exactly at +-0.5 (exact in binary) with tolerance 0.5: neither holds nor reversed."""
    assert trend(steps, 0.5) == expected


@given(st.lists(st.floats(-4, 4), min_size=1, max_size=6), st.floats(0, 2))
def test_trend_is_its_definition(steps, tol):
    expected = HOLDS if all(s > tol for s in steps) else REVERSED if any(s < -tol for s in steps) else UNCLEAR
    assert trend(steps, tol) == expected


@pytest.mark.parametrize("a, n_a, b, n_b", [(5, 5, 0, 5), (3, 5, 2, 5), (0, 4, 4, 4), (2, 6, 1, 3)])
def test_fisher_smaller_is_the_hypergeometric_upper_tail(a, n_a, b, n_b):
    """P(X >= a) for X the hits of the first group given the margins (hypergeometric), summed here."""
    hits, n = a + b, n_a + n_b
    tail = sum(math.comb(hits, x) * math.comb(n - hits, n_a - x) for x in range(a, min(hits, n_a) + 1)) / math.comb(n, n_a)
    assert fisher_smaller(a, n_a, b, n_b) == pytest.approx(tail, rel=1e-12)
