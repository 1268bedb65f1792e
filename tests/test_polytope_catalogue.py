"""The exact polytope catalogue (``theory.polytopes``) against classical counts.

Routes: the number of vertices of each family from its combinatorics (rectified n-simplex
C(n + 1, 2), n-cube 2^n, n-demicube 2^(n - 1), m-n duoprism m n, prisms and antiprisms 2m),
every member the docstring of the catalogue names being present; the Schlafli polytope 2_21
from the 27 lines on a cubic surface, where each line meets exactly 10 of the others and is skew
to 16 (Gram entries -1/2 and 1/4, unit norms); each entry's Gram matrix (floats) has equal
norms and the stated rank; the float Gram matrix the numerics read (``float_gram``: V V^T of the points read
in floats) equals the exact Gram matrix read to 30 digits, entry by entry.  Depth does not enter.
"""

import math

import numpy as np
import pytest

from implicitbias.theory.params import ParameterError
from implicitbias.theory.polytopes import CATALOGUE, float_gram, gram, names_with_vertices

FAMILIES = {**{f"rectified {n}-simplex": math.comb(n + 1, 2) for n in range(4, 8)},
            **{f"{n}-cube": 2**n for n in (4, 5)}, **{f"{n}-demicube": 2 ** (n - 1) for n in (5, 6)},
            **{f"{m}-{n} duoprism": m * n for m in range(3, 7) for n in range(m, 7) if (m, n) != (4, 4)},
            "triangular prism": 6, "square antiprism": 8, "pentagonal prism": 10, "10-gonal antiprism": 20,
            "cube": 8, "icosahedron": 12, "dodecahedron": 20, "cuboctahedron": 12, "24-cell": 24,
            "Schlafli polytope 2_21": 27}


def test_every_documented_member_is_present_with_its_vertex_count():
    for name, K in FAMILIES.items():
        assert CATALOGUE[name].K == K, name
        assert name in names_with_vertices(K)
    assert len(CATALOGUE) == 37 and "4-4 duoprism" not in CATALOGUE and "square prism" not in CATALOGUE


def test_schlafli_gram_is_the_intersection_pattern_of_the_27_lines():
    G = np.array(gram("Schlafli polytope 2_21").tolist(), dtype=float)
    assert np.allclose(np.diag(G), 1.0)
    off = G[~np.eye(27, dtype=bool)].reshape(27, 26)
    assert ((off == -0.5).sum(axis=1) == 10).all() and ((off == 0.25).sum(axis=1) == 16).all()


@pytest.mark.parametrize("name", ["Schlafli polytope 2_21", "5-demicube", "6-demicube", "3-5 duoprism", "24-cell"])
def test_gram_has_equal_norms_and_the_stated_rank(name):
    G = np.array(gram(name).evalf(20).tolist(), dtype=float)
    assert np.allclose(np.diag(G), G[0, 0]) and np.allclose(G, G.T)
    assert np.linalg.matrix_rank(G, tol=1e-9 * G[0, 0]) == CATALOGUE[name].rank


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_float_gram_is_the_exact_gram_read_in_floats(name):
    exact = np.array(gram(name).evalf(30).tolist(), dtype=float)
    G = float_gram(name)
    assert G.shape == (CATALOGUE[name].K,) * 2
    assert np.abs(G - exact).max() <= 1e-14 * np.abs(exact).max()
    G[0, 0] = np.nan  # a copy: the cached matrix stays as it was
    assert np.isfinite(float_gram(name)).all()


def test_float_gram_refuses_an_unknown_name_in_one_line():
    with pytest.raises(ParameterError, match="name"):
        float_gram("7-cube")


def test_structures_with_vertices_are_the_base_codes_defined_at_k_and_the_catalogue_entries():
    from implicitbias.theory.codes import structures_with_vertices

    assert structures_with_vertices(2) == ["nc"]
    assert structures_with_vertices(3) == ["nc", "cross_polytope"]  # the 3-gon is the simplex
    twelve = structures_with_vertices(12)
    assert twelve[:3] == ["nc", "kgon", "cross_polytope"]
    assert set(twelve[3:]) == {"icosahedron", "cuboctahedron", "hexagonal antiprism", "hexagonal prism", "3-4 duoprism"}
