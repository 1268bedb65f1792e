"""Spherical codes (``numerics.maxmargin.spherical``) against finite differences and known optima.

Routes: the hand-written gradient of the log Riesz energy against central finite differences
of its value, and that value against log sum_{c<k} |u_c - u_k|^(-s) computed here directly;
repulsion codes against the known Tammes optima (K = 4 in R^3: the tetrahedron, cosine -1/3;
K = 6 in R^3: the octahedron, closest cosine 0; K points in R^2: the regular K-gon); unit rows.
Depth does not enter.
"""

import numpy as np
import pytest

from implicitbias.numerics.maxmargin import spherical as sph
from implicitbias.theory.params import ParameterError


@pytest.mark.parametrize("s", [2.0, 8.0, 64.0])
def test_log_energy_value_and_gradient(s):
    K, r = 5, 3
    rng = np.random.default_rng(int(s))
    x = rng.normal(size=K * r) * rng.uniform(0.5, 2.0, size=K * r)  # rows of unequal norms
    iu = np.triu_indices(K, 1)
    value, grad = sph._log_energy(x, K, r, s, iu)
    U = x.reshape(K, r) / np.linalg.norm(x.reshape(K, r), axis=1, keepdims=True)
    dist = np.linalg.norm(U[:, None, :] - U[None, :, :], axis=2)[iu]
    assert value == pytest.approx(np.log(np.sum(dist ** (-s))), rel=1e-12)
    h = 1e-6
    numeric = [(sph._log_energy(x + h * e, K, r, s, iu)[0] - sph._log_energy(x - h * e, K, r, s, iu)[0]) / (2 * h)
               for e in np.eye(x.size)]
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("K, r, cosine", [(4, 3, -1 / 3), (6, 3, 0.0), (5, 2, np.cos(2 * np.pi / 5))])
def test_repulsion_codes_reach_the_tammes_optima(K, r, cosine):
    V = sph.repulsion_code(K, r)
    assert V.shape == (K, r) and np.allclose(np.linalg.norm(V, axis=1), 1.0)
    G = V @ V.T
    assert G[~np.eye(K, dtype=bool)].max() == pytest.approx(cosine, abs=1e-4)
    assert np.array_equal(V, sph.repulsion_code(K, r, seed=0))  # the default seed is 0


def test_random_unit_vectors_and_bounds():
    V = sph.random_unit_vectors(7, 3, np.random.default_rng(1))
    assert np.allclose(np.linalg.norm(V, axis=1), 1.0)
    line = sph.repulsion_code(2, 1)  # r = 1: two antipodal points
    assert line.shape == (2, 1) and line[0, 0] * line[1, 0] == pytest.approx(-1.0)
    for K, r, name in ((4097, 2, "K"), (4, 5, "r"), (4, 0, "r")):
        with pytest.raises(ParameterError, match=f"^{name} must"):
            sph.repulsion_code(K, r)
