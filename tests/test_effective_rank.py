"""Effective-rank definitions agree on matrices with equal singular values, and order sensibly."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ortho_group

from implicitbias.numerics.metrics.rank import DEFINITIONS, effective_rank


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12), st.integers(1, 12), st.floats(0.1, 10), st.integers(0, 2**31 - 1))
def test_equal_singular_values_give_the_rank(d, r, scale, seed):
    r = min(r, d)
    rng = np.random.default_rng(seed)
    U = ortho_group.rvs(d, random_state=rng) if d > 1 else np.eye(1)
    V = ortho_group.rvs(d, random_state=rng) if d > 1 else np.eye(1)
    s = np.zeros(d)
    s[:r] = scale
    A = U @ np.diag(s) @ V.T
    for name in DEFINITIONS:
        assert abs(effective_rank(A, name) - r) < 1e-8


def test_unequal_spectrum_is_between_one_and_rank():
    A = np.diag([10.0, 1.0, 0.1, 0.0])
    rv = effective_rank(A)
    assert 1 < rv < 3
    # entropy of squared weights concentrates more on the top value
    assert effective_rank(A, "roy_vetterli_squared") < rv
    assert effective_rank(A, "threshold", tol=0.05) == 2
