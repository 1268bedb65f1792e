"""Helpers of ``numerics.maxmargin.codes``: factors and bounds, by other routes.

Routes compared: the balanced factors against W H^T = Zbar and W W^T = (Zbar Zbar^T)^(1/2)
from scipy's matrix square root; the smallest and largest K each code accepts.  Generic points:
a random rank-3 matrix at K = 5.
"""

import numpy as np
import pytest
import scipy.linalg

from implicitbias.numerics.maxmargin import codes
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.theory.params import ParameterError

RNG = np.random.default_rng(21)


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
