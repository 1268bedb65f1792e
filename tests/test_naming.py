"""Invariants reported by ``numerics.maxmargin.naming.identify`` against closed forms.

Routes compared: the class-vector cosines of the regular K-gon against cos(2 pi j / K), of NC
against -1/(K - 1), of the cross-polytope against {-1, 0}; group orders against the dihedral
group 2K, the hyperoctahedral group 2^m m! and the symmetric group K!; and a perturbed code,
which must not be given the name of the code it was perturbed from (the tolerances must not
be loose), while a rounding-level perturbation keeps it (nor too tight).  Depth does not enter.
"""

import math

import numpy as np
import pytest

from implicitbias.numerics.maxmargin import codes
from implicitbias.numerics.maxmargin.naming import identify


@pytest.mark.parametrize("K", [5, 6, 7])
def test_kgon_invariants(K):
    ident = identify(codes.kgon_code(K))
    assert (ident.key, ident.name, ident.rank, ident.order) == ("kgon", f"regular {K}-gon", 2, 2 * K)
    expected = sorted({round(math.cos(2 * math.pi * j / K), 6) for j in range(1, K // 2 + 1)})
    assert ident.cosines == pytest.approx(expected, abs=1e-6)
    assert ident.equal_spectrum and ident.symmetric and ident.vertex_transitive
    assert ident.singular_values == pytest.approx([K / (4 * math.sin(math.pi / K) ** 2)] * 2)


@pytest.mark.parametrize("K, orbits", [(6, (6,)), (7, (6, 1))])
def test_cross_polytope_invariants(K, orbits):
    ident = identify(codes.cross_polytope_code(K))
    m = K // 2
    assert ident.key == "cross_polytope" and ident.order == 2**m * math.factorial(m) and ident.orbit_sizes == orbits
    assert ident.cosines == pytest.approx([-1.0, 0.0], abs=1e-6)
    assert ident.equal_spectrum == (K % 2 == 0) and ident.symmetric == (K % 2 == 0)
    assert ident.name == ("cross-polytope" if K % 2 == 0 else "cross-polytope + singleton")
    summary = ident.summary()
    assert summary["aut_order"] == ident.order and summary["orbit_sizes"] == list(orbits)
    assert summary["vertex_transitive"] == (K % 2 == 0) and summary["rank"] == (K + 1) // 2


def test_nc_invariants_and_scale_invariance():
    ident = identify(7.5 * codes.simplex_etf(5))
    assert (ident.key, ident.name, ident.rank, ident.order) == ("nc", "NC (simplex)", 4, 120)
    assert ident.cosines == pytest.approx([-1 / 4]) and ident.singular_values == pytest.approx([1.0] * 4)


def test_perturbed_codes_lose_their_name_rounding_does_not():
    rng = np.random.default_rng(6)
    for Z in (codes.simplex_etf(5), codes.kgon_code(6)):
        noisy = Z + 1e-3 * rng.normal(size=Z.shape)
        ident = identify(noisy)
        assert ident.key == "" and not ident.equal_spectrum and not ident.symmetric
        assert ident.name == f"rank-{ident.rank} code, |Aut| = {ident.order}" and ident.order == 1
        assert identify(Z * (1 + 1e-12 * rng.normal(size=Z.shape))).key == identify(Z).key != ""


def test_candidates_at_the_smallest_k_of_each_base_code():
    from implicitbias.numerics.maxmargin.naming import known_structures

    assert [(k, n) for k, n, _ in known_structures(3)] == [("nc", "NC (simplex)"), ("kgon", "regular 3-gon")]
    assert [(k, n) for k, n, _ in known_structures(4)] == [("nc", "NC (simplex)"), ("kgon", "regular 4-gon"),
                                                          ("cross_polytope", "cross-polytope")]
    assert [k for k, _, _ in known_structures(2)] == ["nc"]


def test_symmetry_tolerance_is_relative_to_the_largest_entry():
    """The 6-gon's entries reach 2: an asymmetry of 1e-4 is within 1e-4 x 2 (symmetric), 1e-3 is not."""
    Z = codes.kgon_code(6)
    assert np.abs(Z).max() == pytest.approx(2.0)
    for bump, symmetric in ((1e-4, True), (1e-3, False)):
        bumped = Z.copy()
        bumped[0, 1] += bump
        assert identify(bumped).symmetric is symmetric


def test_a_named_matrix_is_named_again_from_its_values_not_its_identity():
    """``identify`` caches by the matrix's bytes: an equal copy gets the same answer, a matrix changed
    in place after naming is named afresh (the cache key is its new bytes)."""
    Z = codes.CODES["kgon"](7)
    first = identify(Z)
    assert identify(Z.copy()) == first and first.key == "kgon"
    Z[0, 1] -= 0.5  # a margin now 0.5 smaller: no longer the heptagon
    assert identify(Z).key == ""
