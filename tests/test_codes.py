"""Candidate codes: explicit matrices (numerics) against the exact sympy objectives (theory).

Routes compared: the SVD of each explicit float matrix against the closed forms of
``theory.codes``; exact threshold depths against the sign change of the matrices' objectives;
softmax codes' one-vs-rest distances (cvxpy QP, independent of the optimiser) against the known
optima; structure names against relabelled and rescaled copies.  p = 2/(L + 1), L weight matrices.
"""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.maxmargin import codes
from implicitbias.numerics.metrics.rank import numerical_rank
from implicitbias.numerics.maxmargin.margin import margins, schatten_objective
from implicitbias.theory import codes as exact
from implicitbias.theory import params

NAMES = {"nc": 2, "kgon": 3, "cross_polytope": 3}  # smallest K of each code


def _svd_objective(Z, p):
    return schatten_objective(Z, p, rtol=Z.shape[0] * np.finfo(float).eps)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(NAMES)), st.integers(2, 40), st.floats(1.0, 40.0))
def test_matrices_have_unit_margin_and_the_exact_objective(name, K, L):
    K = max(K, NAMES[name])
    Z = codes.CODES[name](K)
    m = margins(Z)
    assert m.min() == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(Z.sum(axis=0), 0, atol=1e-12)
    p = 2 / (L + 1)
    assert _svd_objective(Z, p) == pytest.approx(float(exact.objective_at(name, K, L)), rel=1e-10)
    s = np.linalg.svd(Z, compute_uv=False)
    assert numerical_rank(s) == exact.rank(name, K)


@pytest.mark.parametrize("K", [3, 4, 5, 6, 7, 8, 12, 17])
def test_limit_objective_matches_the_spectrum(K):
    for name in ("nc", "kgon", "cross_polytope"):
        parity = None if name != "cross_polytope" else ("even" if K % 2 == 0 else "odd")
        rank, logsum = exact.limit_objective(name, parity)
        s = np.linalg.svd(codes.CODES[name](K), compute_uv=False)
        r = numerical_rank(s)
        assert r == int(rank.subs(exact.K, K))
        assert np.sum(np.log(s[:r])) == pytest.approx(float(logsum.subs(exact.K, K)), abs=1e-10)


@pytest.mark.parametrize("name", ["kgon", "cross_polytope"])
@pytest.mark.parametrize("K", [4, 5, 6, 7, 9, 16, 31])
def test_threshold_depth_is_where_the_matrix_objective_crosses_nc(name, K):
    Lstar = float(exact.threshold_depth(name, K))
    Z = codes.CODES[name](K)
    below, above = _svd_objective(Z, 2 / (Lstar - 1e-6 + 1)), _svd_objective(Z, 2 / (Lstar + 1e-6 + 1))
    assert below > K - 1 > above


def test_threshold_never_for_k3_and_codes_that_equal_nc():
    assert exact.threshold_depth("kgon", 3) == sp.oo
    assert exact.threshold_depth("cross_polytope", 3) == sp.oo
    assert exact.compare_with_nc("kgon", 3, 7) == 0  # the 3-gon is the simplex


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["kgon", "cross_polytope"]), st.integers(4, 32), st.integers(1, 12))
def test_exact_comparison_agrees_with_floating_point_when_clear(name, K, L):
    diff = _svd_objective(codes.CODES[name](K), 2 / (L + 1)) - (K - 1)
    if abs(diff) > 1e-8:
        assert exact.compare_with_nc(name, K, L) == int(np.sign(diff))


@pytest.mark.parametrize(
    "K, r, expected",
    [
        (5, 2, 1 - math.cos(2 * math.pi / 5)),  # r = 2: regular polygon
        (7, 2, 1 - math.cos(2 * math.pi / 7)),
        (4, 3, 4 / 3),  # K <= r + 1: simplex
        (5, 4, 5 / 4),
        (5, 3, 1.0),  # r + 1 < K <= 2r: part of the cross-polytope
        (8, 4, 1.0),
    ],
)
def test_softmax_codes_reach_the_known_one_vs_rest_distance(K, r, expected):
    code = codes.softmax_code(K, r, seed=1)
    assert code.W.shape == (K, r)
    assert np.allclose(np.linalg.norm(code.W, axis=1), 1)
    distance = codes.one_vs_rest_distance(code.W).min()
    assert distance == pytest.approx(expected, abs=1e-6)
    assert np.linalg.matrix_rank(code.logits, tol=1e-8) <= r
    assert code.margin <= distance + 1e-7  # margin of W H^T cannot exceed the hull distance


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["nc", "kgon", "cross_polytope"]), st.integers(4, 14), st.integers(0, 2**31 - 1))
def test_structure_is_recognised_after_relabelling_and_rescaling(name, K, seed):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(K)
    Z = codes.CODES[name](K)[np.ix_(perm, perm)] * rng.uniform(0.1, 10)
    expected = "kgon" if (name == "cross_polytope" and K == 4) else name  # the square is both
    assert codes.identify_structure(Z)["name"] == expected


def test_bad_inputs_name_the_parameter():
    with pytest.raises(params.ParameterError, match="^K must"):
        codes.kgon_code(1)
    with pytest.raises(params.ParameterError, match="^K must"):
        codes.cross_polytope_code(2)
    with pytest.raises(params.ParameterError, match="^r must"):
        codes.softmax_code(5, 1)
    with pytest.raises(params.ParameterError, match="^L must"):
        exact.objective_at("kgon", 5, float("nan"))
    with pytest.raises(params.ParameterError, match="^structure must"):
        exact.objective_at("hexagon", 5, 2)
