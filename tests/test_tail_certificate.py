"""Claim: the tail certificate (numerics/maxmargin/tail_certificate.py) bounds P(K, L) from below.

Independent routes: the concave vertex minimum against random points of its polytope and against
its closed form; each SDP against the singular values (numpy SVD) of explicit feasible matrices;
every bound against S_p of explicit codes (NC, the K-gon, the cross-polytope: closed forms in
``theory.codes``) at depths on both sides of their thresholds, where a wrong bound would exceed them.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.maxmargin import lower_bounds as lb
from implicitbias.numerics.maxmargin import tail_certificate as tc
from implicitbias.numerics.maxmargin.codes import cross_polytope_code, kgon_code, simplex_etf
from implicitbias.numerics.maxmargin.margin import min_margin, schatten_exponent, unit_margin
from implicitbias.theory import codes as exact


def _feasible(K: int, rng: np.random.Generator, spread: float) -> np.ndarray:
    """A generic feasible centred Zbar: NC plus a random perturbation, rescaled to unit margin."""
    Z = simplex_etf(K) + spread * rng.standard_normal((K, K))
    Z = Z - Z.mean(axis=0)
    return unit_margin(Z) if min_margin(Z) > 0 else simplex_etf(K)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 3), cap=st.floats(0.5, 3), total=st.floats(0, 6), floor=st.floats(0, 0.6),
       top=st.floats(0, 1.5), p=st.floats(0.1, 1.0), seed=st.integers(0, 2**16))
def test_vertex_minimum_is_below_every_point_of_the_polytope(m, cap, total, floor, top, p, seed):
    value = tc.concave_tail_min(m, cap, total, p, floor=floor, top=top)
    rng = np.random.default_rng(seed)
    x = -np.sort(-rng.uniform(0, cap, size=(4000, m)), axis=1)
    inside = (x[:, -1] >= floor) & (x[:, 0] >= top) & (x.sum(axis=1) >= total)
    if inside.any():
        assert value <= (x[inside] ** p).sum(axis=1).min() + 1e-9
    else:
        assert value >= 0


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 3), cap=st.floats(0.5, 3), total=st.one_of(st.just(0.0), st.floats(1e-3, 9)),
       p=st.floats(0.1, 1.0))
def test_vertex_enumeration_equals_the_closed_form_without_a_floor(m, cap, total, p):
    """(Totals below the feasibility tolerance are left out: there a vertex 1e-12 short of the total is
    accepted and the enumeration returns less, a weaker but still valid bound.)"""
    enumerated = tc.concave_tail_min(m, cap, total, p)
    closed = float(lb.vertex_floor(m, cap, total, p))
    assert enumerated == pytest.approx(closed, rel=1e-9, abs=1e-12) or (math.isinf(enumerated) and math.isinf(closed))


@pytest.mark.parametrize("K", [4, 5])
def test_each_sdp_is_below_the_singular_values_of_feasible_matrices(K):
    rng = np.random.default_rng(K)
    tail, last = tc.DirectionProblem(K, "tail"), tc.DirectionProblem(K, "last")
    for spread in (0.1, 0.3, 0.6):
        Z = _feasible(K, rng, spread)
        U, s, _ = np.linalg.svd(Z)
        b = s[0] * (1 + 1e-9)
        to_basis = tail.basis.T  # U's columns lie in 1^perp: their coordinates in the SDP's basis
        assert tail.value(to_basis @ U[:, 0], b) <= s[1:].sum() + 1e-6
        assert last.value(to_basis @ U[:, K - 2], b) <= s[K - 2] + 1e-6


def test_the_tail_sdp_is_about_k_minus_2_near_nc():
    """At b = 1 the only feasible centred Zbar is NC (sigma = 1, ..., 1), where min_v ||NC - u v^T||_* = K - 2
    for every direction u; just above, g is within a little of K - 2 and not above it."""
    K = 4
    problem = tc.DirectionProblem(K, "tail")
    rng = np.random.default_rng(1)
    for _ in range(3):
        assert problem.value(rng.standard_normal(K - 1), 1.001) == pytest.approx(K - 2, abs=0.02)


def test_certified_minima_are_below_explicit_codes():
    """The square (K = 4 K-gon, sigma = (2, 2, 0)) bounds tau(2) <= 2 and mu(2) <= 0 from above."""
    K = 4
    s = np.linalg.svd(kgon_code(K), compute_uv=False)
    b = s[0] * (1 + 1e-9)
    tau, _ = tc.certified_minimum(tc.DirectionProblem(K, "tail"), b, tol=0.05)
    mu, _ = tc.certified_minimum(tc.DirectionProblem(K, "last"), b, tol=0.05)
    assert tau <= s[1:].sum() + 1e-6
    assert mu <= s[K - 2] + 1e-6


@settings(max_examples=40, deadline=None)
@given(K=st.integers(3, 12), L=st.floats(1.0, 12.0))
def test_the_generic_split_bound_is_below_every_named_code(K, L):
    p = schatten_exponent(L)
    bound = lb.sigma1_split_bound(K, p, width=1e-2)
    for code in (simplex_etf(K), kgon_code(K), cross_polytope_code(K)):
        assert bound <= (np.linalg.svd(code, compute_uv=False) ** p).sum() * (1 + 1e-9)


def test_the_generic_split_bound_certifies_nc_at_depth_one_and_improves_on_the_older_bounds():
    assert lb.sigma1_split_bound(6, 1.0) == pytest.approx(5, abs=1e-9)
    p = schatten_exponent(2)
    older = max(lb.nuclear_bound(4, p), lb.three_class_bound(4, p), lb.triples_bound(4, p), lb.local_bound(4, p))
    assert lb.sigma1_split_bound(4, p) > older + 0.1
    assert lb.spectral_bound(4, p) == (lb.sigma1_split_bound(4, p), "sigma_1 split")


# slow (35 s): the interval bound's pieces are checked in the default tier by the tests above
@pytest.mark.slow
def test_the_interval_bound_around_the_square_stays_below_it_beyond_its_threshold():
    """At K = 4 the square (sigma = (2, 2, 0)) beats NC beyond L* = 2.419 (``theory.codes``).  At L = 3 the
    certified bound of the sigma_1 interval that holds the square must not exceed the square's S_p."""
    K, L = 4, 3
    p = schatten_exponent(L)
    square = float(exact.objective_at("kgon", K, L))
    assert square < K - 1
    a, b = 1.98, 2.02
    tau, _ = tc.certified_minimum(tc.DirectionProblem(K, "tail"), b, tol=0.02)
    mu, _ = tc.certified_minimum(tc.DirectionProblem(K, "last"), b, tol=0.02)
    bound = tc.interval_bound(K, p, a, b, tau, mu, lb.outside_nuclear(K, p))
    assert lb.sigma1_split_bound(K, p) - 1e-9 <= square
    assert 2.5 < bound <= square * (1 + 1e-6)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 3), cap=st.floats(1.0, 3), total=st.floats(0.5, 6), floor=st.floats(0, 0.5),
       p=st.floats(0.2, 0.9), spread=st.floats(0.0, 0.1), weight=st.floats(0, 1))
def test_a_depth_range_bound_is_below_the_bound_at_every_depth_of_the_range(m, cap, total, floor, p, spread, weight):
    ranged = tc.concave_tail_min(m, cap, total, p, floor=floor, p_high=p + spread)
    inside = p + weight * spread
    assert ranged <= tc.concave_tail_min(m, cap, total, inside, floor=floor) + 1e-12


@settings(max_examples=30, deadline=None)
@given(K=st.integers(4, 10), L=st.floats(1.0, 6.0), spread=st.floats(0.0, 0.5), weight=st.floats(0, 1))
def test_the_split_bound_over_a_depth_range_is_below_every_named_code_in_the_range(K, L, spread, weight):
    p_low, p_high = schatten_exponent(L + spread), schatten_exponent(L)
    bound = lb.sigma1_split_bound(K, p_low, width=1e-2, p_high=p_high)
    q = p_low + weight * (p_high - p_low)
    for code in (simplex_etf(K), kgon_code(K), cross_polytope_code(K)):
        assert bound <= (np.linalg.svd(code, compute_uv=False) ** q).sum() * (1 + 1e-9)


def test_nc_is_certified_up_to_a_depth_below_every_named_threshold():
    for K in (4, 5, 6):
        depth = lb.nc_certified_depth(K)
        thresholds = [float(exact.threshold_depth(s, K)) for s in exact.structures_with_vertices(K) if s != "nc"]
        assert 1 < depth < min(thresholds)


@pytest.mark.slow
def test_nc_is_proved_optimal_at_four_classes_and_depth_two():
    """The headline certificate (minutes): the bound reaches NC's value 3, where the older bounds left 28%."""
    certificate = tc.tail_certificate(4, 2)
    assert certificate.bound == pytest.approx(3.0, abs=1e-9) and certificate.gap < 1e-9
    assert certificate.generic < 2.6


@pytest.mark.parametrize("bad", [{"K": 2}, {"K": 9}, {"K": 4, "L": 0.5}, {"K": "four"}])
def test_bad_input_names_the_parameter(bad):
    from implicitbias.theory.params import ParameterError

    with pytest.raises(ParameterError, match="K|L"):
        tc.tail_certificate(bad["K"], bad.get("L", 2))
