"""Helpers of ``numerics.maxmargin.codes``: factors, margin constraints and bounds, by other routes.

Routes compared: the hand-written Jacobian of the pair-margin constraints against central finite
differences of the constraint function, and that function against the margins of W H^T computed
by ``margin.margins``; the balanced factors against W H^T = Zbar and W W^T = (Zbar Zbar^T)^(1/2)
from scipy's matrix square root; the smallest and largest K each code accepts.  Generic points:
random W, H of rank r = 3 at K = 5, a random rank-3 matrix.
"""

import numpy as np
import pytest
import scipy.linalg

from implicitbias.numerics.maxmargin import codes
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.theory.params import ParameterError

RNG = np.random.default_rng(21)


@pytest.mark.parametrize("extra", [0, 2])
def test_pair_margin_jacobian_against_finite_differences(extra):
    K, r = 5, 3
    fun, jac = codes.pair_margin_constraint(K, r, extra) if extra else codes.pair_margin_constraint(K, r)
    x = RNG.normal(size=2 * K * r + extra)
    J = jac(x)
    assert J.shape == (K * (K - 1), 2 * K * r + extra)
    h = 1e-6
    numeric = np.stack([(fun(x + h * e) - fun(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=1)
    assert np.allclose(J, numeric, atol=1e-7)
    W, H = x[: K * r].reshape(K, r), x[K * r : 2 * K * r].reshape(K, r)
    Z = W @ H.T  # column k: logits of class k; its margins are the minimum of its pair margins
    assert np.allclose(fun(x).reshape(K, K - 1).min(axis=1), margins(Z))


def test_class_vectors_are_balanced_factors():
    Z = RNG.normal(size=(5, 3)) @ RNG.normal(size=(3, 5))
    W, H = codes.class_vectors(Z)
    assert W.shape == H.shape == (5, 3)
    assert np.allclose(W @ H.T, Z)
    assert np.allclose(W @ W.T, np.real(scipy.linalg.sqrtm(Z @ Z.T)), atol=1e-7)
    assert np.allclose(H @ H.T, np.real(scipy.linalg.sqrtm(Z.T @ Z)), atol=1e-7)


def test_smallest_and_largest_k_of_each_code():
    nc2 = codes.simplex_etf(2)
    assert np.allclose(nc2, [[0.5, -0.5], [-0.5, 0.5]]) and margins(nc2).min() == pytest.approx(1.0)
    assert margins(codes.kgon_code(2)).min() == pytest.approx(1.0)
    assert codes.cross_polytope_code(3).shape == (3, 3)
    for make in (codes.simplex_etf, codes.kgon_code, codes.cross_polytope_code):
        with pytest.raises(ParameterError, match=r"^K must be an integer in \[\d, 4096\]"):
            make(4097)
    with pytest.raises(ParameterError, match=r"^K must be an integer in \[2, 4096\], got 1"):
        codes.simplex_etf(1)
