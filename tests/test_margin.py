"""Margins and Schatten objectives (``numerics.maxmargin.margin``) against independent routes.

Routes compared: the Schatten objective against scipy's singular values summed here; the float
exponent 2/(L + 1) against the exact sympy one of ``theory.representation_cost`` (L weight
matrices, N = L + 1 factors); class means against a loop over the columns of each class; margins
against their definition written as a loop.  Generic points: a random non-square-free matrix,
non-integer depths, n = 3 and 4 samples per class.
"""

import numpy as np
import pytest
import scipy.linalg

from implicitbias.numerics.maxmargin import margin
from implicitbias.theory.params import ParameterError
from implicitbias.theory.representation_cost import schatten_exponent as exact_exponent

RNG = np.random.default_rng(8)
Z = RNG.normal(size=(4, 4)) + 3 * np.eye(4)


@pytest.mark.parametrize("L", [1, 2.5, 7])
def test_float_exponent_is_the_exact_one(L):
    assert margin.schatten_exponent(L) == pytest.approx(float(exact_exponent(L)), rel=1e-15)


def test_exponent_at_infinite_depth_is_the_p_to_0_limit():
    assert not margin.schatten_exponent(float("inf")) > 0 and 0 < margin.schatten_exponent(1e6) < 2.1e-6


def test_exponent_refuses_depth_below_one():
    with pytest.raises(ParameterError, match="^L must"):
        margin.schatten_exponent(0.99)


def test_schatten_objective_against_scipy_singular_values():
    s = scipy.linalg.svdvals(Z)
    for p in (0.3, 1.0, 1.7):
        assert margin.schatten_objective(Z, p) == pytest.approx(np.sum(s**p), rel=1e-12)
    low = np.outer(RNG.normal(size=3), RNG.normal(size=3))  # rank 1, up to rounding
    s_low = scipy.linalg.svdvals(low)
    assert margin.schatten_objective(low, 0.2) == pytest.approx(np.sum(s_low[s_low > 0] ** 0.2), rel=1e-9)
    assert margin.schatten_objective(low, 0.2, rtol=3e-15) == pytest.approx(s_low[0] ** 0.2)
    assert margin.schatten_objective(low, 0.2, rtol=1.0) == 0.0


@pytest.mark.parametrize("p, rtol, name", [(0.0, 0.0, "p"), (-1.0, 0.0, "p"), (0.5, 1.5, "rtol"), (0.5, -0.1, "rtol")])
def test_schatten_objective_refuses_bad_exponents_and_tolerances(p, rtol, name):
    with pytest.raises(ParameterError, match=f"^{name} must"):
        margin.schatten_objective(Z, p, rtol=rtol)


def test_labels_and_class_means_against_loops():
    assert margin.labels(3).tolist() == [0, 1, 2]
    assert margin.labels(2, 3).tolist() == [0, 0, 0, 1, 1, 1]
    K, n = 3, 4
    full = RNG.normal(size=(K, K * n))
    y = margin.labels(K, n)
    means = margin.class_means(full, n)
    assert means.shape == (K, K)
    for k in range(K):
        assert means[:, k] == pytest.approx(full[:, y == k].mean(axis=1), rel=1e-12)


def test_margins_against_their_definition():
    y = np.array([2, 0, 1, 1])
    Zr = RNG.normal(size=(3, 4))
    expected = [Zr[y[j], j] - max(Zr[c, j] for c in range(3) if c != y[j]) for j in range(4)]
    assert margin.margins(Zr, y) == pytest.approx(expected)
    assert margin.min_margin(Zr, y) == pytest.approx(min(expected))
    square = margin.margins(Z)
    assert square == pytest.approx([Z[k, k] - max(Z[c, k] for c in range(4) if c != k) for k in range(4)])
    assert margin.min_margin(Z) > 0  # Z = noise + 3 I separates the classes
    assert margin.min_margin(margin.unit_margin(Z)) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="does not separate"):
        margin.unit_margin(-np.eye(3))
