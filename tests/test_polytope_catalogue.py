"""The exact polytope catalogue (``theory.polytopes``) against classical counts.

Routes: the number of vertices of each family from its combinatorics (rectified n-simplex
C(n + 1, 2), n-cube 2^n, n-demicube 2^(n - 1), m-n duoprism m n, prisms and antiprisms 2m),
every member the docstring of the catalogue names being present; the Schlafli polytope 2_21
from the 27 lines on a cubic surface, where each line meets exactly 10 of the others and is skew
to 16 (Gram entries -1/2 and 1/4, unit norms); each entry's Gram matrix (floats) has equal
norms and the stated rank; the float Gram matrix the numerics read (``float_gram``: V V^T of the points read
in floats) equals the exact Gram matrix read to 30 digits, entry by entry; the Hadamard antiprism's family at
n = 2 and 4 against the catalogue's square antiprism and 5-demicube (spectrum and entries of the unit-margin
codes); every entry vertex-transitive by its symmetry group (``numerics.maxmargin.symmetry``), which
``less_a_vertex`` relies on, and the antiprism's group of order 2^11 * 21 with a vertex's stabiliser (orbit-
stabiliser: 43008 / 32 = 1344) as the group of the code less a vertex.  Depth does not enter.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.maxmargin import polytopes
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.numerics.maxmargin.naming import identify
from implicitbias.theory.params import ParameterError
from implicitbias.theory.polytopes import CATALOGUE, _hadamard_antiprism, float_gram, gram, names_with_vertices

FAMILIES = {**{f"rectified {n}-simplex": math.comb(n + 1, 2) for n in range(4, 8)},
            **{f"{n}-cube": 2**n for n in (4, 5)}, **{f"{n}-demicube": 2 ** (n - 1) for n in (5, 6)},
            **{f"{m}-{n} duoprism": m * n for m in range(3, 7) for n in range(m, 7) if (m, n) != (4, 4)},
            "triangular prism": 6, "square antiprism": 8, "pentagonal prism": 10, "10-gonal antiprism": 20,
            "cube": 8, "icosahedron": 12, "dodecahedron": 20, "cuboctahedron": 12, "24-cell": 24,
            "Schlafli polytope 2_21": 27, "8-orthoplex Hadamard antiprism": 32}


def test_every_documented_member_is_present_with_its_vertex_count():
    for name, K in FAMILIES.items():
        assert CATALOGUE[name].K == K, name
        assert name in names_with_vertices(K)
    assert len(CATALOGUE) == 38 and "4-4 duoprism" not in CATALOGUE and "square prism" not in CATALOGUE


def test_schlafli_gram_is_the_intersection_pattern_of_the_27_lines():
    G = np.array(gram("Schlafli polytope 2_21").tolist(), dtype=float)
    assert np.allclose(np.diag(G), 1.0)
    off = G[~np.eye(27, dtype=bool)].reshape(27, 26)
    assert ((off == -0.5).sum(axis=1) == 10).all() and ((off == 0.25).sum(axis=1) == 16).all()


@pytest.mark.parametrize("name", ["Schlafli polytope 2_21", "5-demicube", "6-demicube", "3-5 duoprism", "24-cell",
                                  "8-orthoplex Hadamard antiprism"])
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


def test_augmented_with_vertices_are_the_entries_with_k_minus_1_or_k_minus_2_points_with_added_classes():
    from implicitbias.theory.codes import augmented_with_vertices

    assert augmented_with_vertices(6) == []  # no entry has 5 or 4 points
    # no entry has 11 points; the 10-point ones with an antipodal pair
    assert set(augmented_with_vertices(12)) == {f"{name} + antipodal pair" for name in
                                                ("pentagonal antiprism", "pentagonal prism", "rectified 4-simplex")}


@pytest.mark.parametrize(("n", "name"), [(2, "square antiprism"), (4, "5-demicube")])
def test_the_hadamard_antiprism_family_holds_the_square_antiprism_and_the_5_demicube(n, name):
    """Two unbiased n-orthoplexes at the antiprisms' height: n = 2 is the square antiprism (its equal edges), n = 4
    the 5-demicube; the unit-margin codes have the same spectrum and the same entries (sorted), to 1e-12."""
    V = np.array(_hadamard_antiprism(n).evalf(30).tolist(), dtype=float)
    G = V @ V.T
    family = polytopes._code(G)
    entry = polytopes.logits(name)
    assert family.shape == entry.shape == (4 * n, 4 * n)
    assert np.allclose(np.linalg.svd(family, compute_uv=False), np.linalg.svd(entry, compute_uv=False), atol=1e-12)
    assert np.allclose(np.sort(family, axis=None), np.sort(entry, axis=None), atol=1e-12)


def test_every_entry_is_vertex_transitive():
    """One orbit of K points under each entry's symmetry group: ``less_a_vertex`` may delete any vertex."""
    for name, entry in CATALOGUE.items():
        assert identify(polytopes.logits(name), group=True).orbit_sizes == (entry.K,), name


def test_the_hadamard_antiprism_less_a_vertex_keeps_a_vertex_stabiliser():
    """The 8-orthoplex Hadamard antiprism: |Aut| = 43008 (the signed permutations of the [8, 4, 4] Hamming code,
    1344 * 16, times the swap of the two orthoplexes); less a vertex, the stabiliser of the deleted one, of order
    1344, with orbits its antipode (1), the rest of its orthoplex (14) and the other orthoplex split by the sign of
    its cosine (8 and 8)."""
    whole = identify(polytopes.logits("8-orthoplex Hadamard antiprism"), group=True)
    assert whole.name == "8-orthoplex Hadamard antiprism" and whole.order == 43008
    (label, Z), = [(label, Z) for label, Z in polytopes.less_a_vertex(31) if "Hadamard" in label]
    less = identify(Z, group=True)
    assert label == "8-orthoplex Hadamard antiprism less a vertex" and less.order == 1344
    assert sorted(less.orbit_sizes) == [1, 8, 8, 14]


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=2, max_value=40))
def test_less_a_vertex_gives_a_unit_margin_code_of_k_classes_per_entry_with_k_plus_one_points(K):
    out = polytopes.less_a_vertex(K)
    assert [label for label, _ in out] == [f"{name} less a vertex" for name in names_with_vertices(K + 1)]
    for _, Z in out:
        M = margins(Z)
        assert Z.shape == (K, K) and M.min() == pytest.approx(1.0, abs=1e-12)
        assert np.allclose(Z.sum(axis=0), 0.0, atol=1e-9)


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, "31", None, True])
def test_less_a_vertex_refuses_bad_input_in_one_line(bad):
    with pytest.raises(ParameterError, match="K"):
        polytopes.less_a_vertex(bad)


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=2, max_value=40))
def test_augmented_gives_a_unit_margin_code_of_k_classes_per_entry_with_k_minus_1_or_k_minus_2_points(K):
    from implicitbias.theory.codes import AUGMENTED, augmented_with_vertices

    out = polytopes.augmented(K)
    assert [key for key, _ in out] == augmented_with_vertices(K)
    for key, Z in out:
        name, extra = AUGMENTED[key]
        assert CATALOGUE[name].K == K - (1 if extra == "singleton" else 2)
        assert Z.shape == (K, K) and margins(Z).min() == pytest.approx(1.0, abs=1e-12)
        assert np.allclose(Z.sum(axis=0), 0.0, atol=1e-9)


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, "31", None, True])
def test_augmented_codes_refuse_bad_input_in_one_line(bad):
    from implicitbias.theory.codes import augmented_with_vertices

    for fn in (polytopes.augmented, augmented_with_vertices):
        with pytest.raises(ParameterError, match="K"):
            fn(bad)
