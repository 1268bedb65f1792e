"""Effective-rank definitions agree on matrices with equal singular values, and order sensibly."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ortho_group

from implicitbias.numerics.metrics.rank import DEFINITIONS, RANK_RTOL, effective_rank, effective_ranks, numerical_rank


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


def test_every_definition_at_a_generic_spectrum():
    """sigma = (3, 1, 1) embedded by random rotations: closed forms of each definition."""
    rng = np.random.default_rng(4)
    U, V = ortho_group.rvs(4, random_state=rng), ortho_group.rvs(4, random_state=rng)
    A = U @ np.diag([3.0, 1.0, 1.0, 0.0]) @ V.T
    q = np.array([3.0, 1.0, 1.0]) / 5
    q2 = np.array([9.0, 1.0, 1.0]) / 11
    assert effective_rank(A) == pytest.approx(np.exp(-np.sum(q * np.log(q))), rel=1e-10)
    assert effective_rank(A, "roy_vetterli_squared") == pytest.approx(np.exp(-np.sum(q2 * np.log(q2))), rel=1e-10)
    assert effective_rank(A, "stable") == pytest.approx(11 / 9, rel=1e-10)  # ||A||_F^2 / ||A||_2^2
    assert effective_ranks(A)["threshold"] == 3
    assert effective_ranks(0.5 * A)["stable"] == pytest.approx(11 / 9, rel=1e-10)  # a top value below 1


def test_default_threshold_tolerance_and_the_zero_matrix():
    A = np.diag([1.0, 2e-3, 5e-4])
    assert effective_ranks(A)["threshold"] == 2  # 1e-3 relative cut-off
    assert effective_ranks(np.zeros((3, 3))) == {name: 0.0 for name in DEFINITIONS}


def test_numerical_rank_cut_off_at_generic_points():
    assert RANK_RTOL == 1e-6
    assert numerical_rank([3.0, 1e-3, 2.9e-6, 0.0]) == 2  # cut-off 3e-6
    assert numerical_rank([2.0, 2e-6]) == 1  # strictly above rtol * s[0]
    assert numerical_rank([0.5, 0.4], rtol=0.5) == 2  # a top value below 1
    assert numerical_rank([0.0, 0.0]) == 0 and numerical_rank([]) == 0


def test_rank_one_matrices():
    assert numerical_rank([2.0, 0.0]) == 1
    assert effective_rank(np.diag([2.0, 0.0]), "stable") == 1.0
    assert effective_rank(np.diag([2.0, 0.0]), "threshold") == 1.0
