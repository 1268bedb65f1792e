"""Symmetry groups of codes (``numerics.maxmargin.symmetry``) against the known orders of polytopes.

Independent route: the order of the symmetry group of a vertex configuration is classical
(Coxeter, "Regular Polytopes": cube and cuboctahedron 48 (B3), icosahedron and dodecahedron 120
(H3), 24-cell 1152 (F4), Schlafli 2_21 51840 (E6), 4-cube 384 (B4), 5-demicube 1920 (D5),
rectified 4-simplex 120 (A4); prisms and antiprisms of an m-gon 4m (D_mh and D_md); the p-q
duoprism 4pq for p != q and 8p^2 for p = q), and the relabellings fixing the centred Gram matrix
are exactly the isometries of the vertex set.  Also: a random matrix has only the identity, a
planted transposition gives order 2 with its orbit, and isomorphism tests against explicit
permutations.  Depth does not enter.
"""

import itertools
import math

import numpy as np
import pytest

from implicitbias.numerics.maxmargin import polytopes
from implicitbias.numerics.maxmargin.symmetry import colour_classes, isomorphic, symmetry_group

KNOWN = {"cube": 48, "icosahedron": 120, "dodecahedron": 120, "cuboctahedron": 48, "24-cell": 1152,
         "Schlafli polytope 2_21": 51840, "square antiprism": 16, "pentagonal prism": 20, "triangular prism": 12,
         "rectified 4-simplex": 120, "4-cube": 384, "5-demicube": 1920, "3-3 duoprism": 72, "3-4 duoprism": 48,
         "5-5 duoprism": 200}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_orders_of_polytope_codes_are_the_classical_ones(name):
    group = symmetry_group(polytopes.logits(name))
    assert group.order == KNOWN[name]
    assert group.vertex_transitive and group.orbit_sizes == (len(polytopes.logits(name)),)


def test_random_matrix_has_only_the_identity_and_a_planted_swap_has_order_two():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(6, 6))
    g = symmetry_group(Z)
    assert g.order == 1 and g.orbit_sizes == (1,) * 6 and not g.vertex_transitive
    perm = np.array([1, 0, 2, 3, 4, 5])  # make Z invariant under swapping classes 0 and 1
    S = (Z + Z[np.ix_(perm, perm)]) / 2
    g = symmetry_group(S)
    assert g.order == 2 and g.orbits[0] == (0, 1) and g.orbit_sizes == (2, 1, 1, 1, 1)
    three = np.array([1, 2, 0, 3, 4, 5])  # a 3-cycle on classes 0, 1, 2
    C = sum(Z[np.ix_(q, q)] for q in (np.arange(6), three, three[three]))
    g = symmetry_group(C)
    assert g.order == 3 and g.orbits[0] == (0, 1, 2)


def test_isomorphic_against_explicit_relabellings():
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(7, 7))
    perm = rng.permutation(7)
    assert isomorphic(Z, Z[np.ix_(perm, perm)])
    other = Z.copy()
    other[0, 1] += 0.5
    assert not isomorphic(Z, other[np.ix_(perm, perm)])
    assert not isomorphic(Z, Z[:6, :6])
    antiprism, cube = polytopes.logits("square antiprism"), polytopes.logits("cube")
    eight = rng.permutation(8)
    assert isomorphic(antiprism, antiprism[np.ix_(eight, eight)]) and isomorphic(cube, cube[np.ix_(eight, eight)])
    assert not isomorphic(antiprism, cube)


def test_colour_classes_group_values_within_the_relative_tolerance():
    values = np.array([3.0, 1.0, 1.0 + 1e-9, 2.0, 1.0 + 1e-3])
    assert colour_classes(values).tolist() == [3, 0, 0, 2, 1]
    assert colour_classes(values, tol=1e-2).tolist() == [2, 0, 0, 1, 0]
    assert colour_classes(100 * values).tolist() == [3, 0, 0, 2, 1]  # relative to the largest magnitude


def test_hexagon_leaves_cells_of_two_after_one_vertex_is_fixed():
    """The regular hexagon's group is dihedral of order 12; fixing a vertex leaves two cells of two
    (its neighbours, the next ones) and the antipode, the case where every non-trivial cell is a pair."""
    from implicitbias.numerics.maxmargin import codes

    group = symmetry_group(codes.kgon_code(6))
    assert group.order == 12 and group.orbit_sizes == (6,)


def _count_by_enumeration(Z, tol=1e-6):
    """The relabellings pi with Z[pi(c), pi(k)] = Z[c, k], counted over all K! permutations."""
    K = len(Z)
    return sum(np.allclose(Z[np.ix_(pi, pi)], Z, rtol=0, atol=tol * np.abs(Z).max())
               for pi in map(list, itertools.permutations(range(K))))


@pytest.mark.parametrize("K", [3, 4, 5, 6])
def test_the_simplex_and_a_simplex_with_one_marked_class_against_enumeration(K):
    """NC (one diagonal and one off-diagonal value) has all K! relabellings; marking one class (its
    diagonal entry changed) leaves (K - 1)!, with orbits K - 1 and 1: both counted by enumeration."""
    from implicitbias.numerics.maxmargin import codes

    nc = codes.simplex_etf(K)
    group = symmetry_group(nc)
    assert group.order == _count_by_enumeration(nc) == math.factorial(K) and group.orbit_sizes == (K,)
    marked = nc.copy()
    marked[K - 1, K - 1] += 0.5
    group = symmetry_group(marked)
    assert group.order == _count_by_enumeration(marked) == math.factorial(K - 1)
    assert group.orbit_sizes == (K - 1, 1)
