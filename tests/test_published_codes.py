"""Softmax codes and spherical codes against published values (issue 30, item 5).

Definitions (Jiang, Zhou, Wang, Qu, Mixon, You, Zhu, "Generalized Neural Collapse for a Large
Number of Classes", ICML 2024, PMLR 235, arXiv 2310.05351; Definition 2.1 and Fig. 1):
a rank-r softmax code is K unit classifier vectors w_k in R^r maximising the smallest
one-vs-rest distance dist(w_k, conv{w_j : j != k}); the Tammes problem (their Eq. (11), Fig. 1c)
maximises instead the smallest one-vs-one distance, i.e. the smallest angle theta_min.  In logit
terms (Zbar = W H^T, column k = logits of class k): with unit features h_k free the best margin
of class k is its one-vs-rest distance; with h_k = w_k (a symmetric code V V^T) the margin is
1 - cos(theta_min), never larger.  Depth L (weight matrices, p = 2/(L + 1)) enters only where a
P(K, L) optimum is read as a code, through its balanced factors W, H (``codes.class_vectors``).

Published values checked here, each against an optimiser of ours (``spherical.max_margin_code``,
SLSQP from repulsion and random starts) or the P(K, L) solver, never against its own output:

- Closed forms of the optimal one-vs-rest distance, as quoted by Spec A, section 2 from Jiang et
  al.: r = 2: 1 - cos(2 pi/K) (regular K-gon); K <= r + 1: K/(K - 1) (simplex); r + 1 < K <= 2r:
  1 (a subset of the cross-polytope; this "orthoplex regime" is characterised by Alcala,
  Andreeva, Kobzar, Mixon, Na, Sule, Xie, "Neural collapse in the orthoplex regime",
  arXiv 2603.20587, 2026).  Where the Tammes optimum is a right angle (K <= 2r, Rankin 1955)
  every pair has <w_j, w_k> <= 0, so conv{w_j : j != k} lies in {<x, w_k> <= 0} and the
  one-vs-rest distance is 1: there the two problems agree.
- Tammes optima on S^2 (largest smallest angle of N points), proved by Fejes Toth 1943 (N = 4,
  6, 12), Schuette & van der Waerden 1951 (N = 5, 7, 8, 9), Danzer 1963 / Discrete Math. 60
  (1986) Table 1 p. 63 (N = 10, 11), Musin & Tarasov, Discrete Comput. Geom. 48 (2012) 128-141
  (N = 13) and Exp. Math. 24 (2015) 460-468 (N = 14).  Values and closed forms from the OEIS:
  A383859 (N = 7: cos = sin(pi/18)/(1 - sin(pi/18))), A381756 (N = 8, square antiprism:
  cos = 1/(1 + 2^(3/2))), A137914 (N = 9: cos = 1/3), A340918 (N = 10), A105199 (N = 11, 12:
  arctan 2, the icosahedron), A217695 (N = 13, with its defining equation), A383860 (N = 14);
  cosines as in H. Cohn's table of spherical codes (hdl.handle.net/1721.1/142661): N = 7
  0.21013831273060308 (3x^3 - 9x^2 - 3x + 1), N = 8 0.26120387496374144 (7x^2 + 2x - 1),
  N = 10 0.40439432521625076.

What the sources do not say, and these tests do not assert: that the P(K, L) optima of the atlas
are softmax codes or Tammes codes in three dimensions.  They are only where the atlas names the
square antiprism (K = 8) and the icosahedron (K = 12); its unnamed rank-3 optima have smaller
smallest angles (benchmarks/RESULTS.md, "Published codes").
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from implicitbias.numerics.maxmargin import polytopes
from implicitbias.numerics.maxmargin import spherical as sph
from implicitbias.numerics.maxmargin.codes import class_vectors
from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.numerics.maxmargin.naming import identify
from implicitbias.numerics.maxmargin.solver import polish, refine_exact
from implicitbias.theory.params import ParameterError


def _a217695() -> float:
    """N = 13 (Musin & Tarasov 2012), as OEIS A217695 defines it: x solves
    2 tan(3 pi/8 - x/4) = (1 - 2 cos x)/cos^2 x near 6/5, theta = arccos(cos x/(1 - cos x))."""
    x = brentq(lambda x: 2 * math.tan(3 * math.pi / 8 - x / 4) - (1 - 2 * math.cos(x)) / math.cos(x) ** 2, 1.0, 1.3,
               xtol=1e-15)
    return math.acos(math.cos(x) / (1 - math.cos(x)))


# Published smallest angle (radians) of the optimal N-point code on S^2 (sources: module docstring).
TAMMES = {
    4: math.acos(-1 / 3),
    5: math.pi / 2,
    6: math.pi / 2,
    7: math.acos(math.sin(math.pi / 18) / (1 - math.sin(math.pi / 18))),
    8: math.acos(1 / (1 + 2**1.5)),
    9: math.acos(1 / 3),
    10: math.atan(math.sqrt(4 / math.sqrt(3) * math.cos(math.atan(math.sqrt(3 * 229) / 9) / 3) + 3)),
    11: math.atan(2),
    12: math.atan(2),
    13: _a217695(),
    14: 0.971634742886224075941,  # OEIS A383860
}
FAST_TAMMES = (4, 5, 6, 7, 8, 9)


def _unit(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _smallest_angle(V):
    G = _unit(V) @ _unit(V).T
    return math.acos(min(1.0, G[~np.eye(len(V), dtype=bool)].max()))


def _softmax_value(W):
    """Smallest one-vs-rest distance of the unit-normalised rows of W (Jiang et al., Def. 2.1)."""
    return sph.one_vs_rest_distance(_unit(W)).min()


def _closed_form(K, r):
    """Optimal one-vs-rest distance of a rank-r softmax code (Spec A, section 2)."""
    if r == 2:
        return 1 - math.cos(2 * math.pi / K)
    if K <= r + 1:
        return K / (K - 1)
    assert K <= 2 * r
    return 1.0


def test_published_constants_agree_with_each_other():
    """The OEIS closed forms against Cohn's table cosines and the OEIS decimal expansions."""
    cosines = {7: 0.21013831273060308, 8: 0.26120387496374144, 9: 1 / 3, 10: 0.40439432521625076}
    for N, c in cosines.items():
        assert math.cos(TAMMES[N]) == pytest.approx(c, abs=1e-15)
    assert 3 * cosines[7] ** 3 - 9 * cosines[7] ** 2 - 3 * cosines[7] + 1 == pytest.approx(0, abs=1e-14)
    assert 7 * cosines[8] ** 2 + 2 * cosines[8] - 1 == pytest.approx(0, abs=1e-15)
    assert TAMMES[7] == pytest.approx(1.3590798976326601419, abs=1e-15)  # A383859
    assert TAMMES[10] == pytest.approx(1.1544798334192707378, abs=1e-15)  # A340918
    assert TAMMES[13] == pytest.approx(0.99722359243811916365, abs=1e-14)  # A217695
    assert math.degrees(TAMMES[14]) == pytest.approx(55.6706, abs=1e-4)


# -- rank 2: the regular K-gon ------------------------------------------------------------------


def _check_rank2(K):
    code = sph.max_margin_code(K, 2, seeds=1)
    value = _closed_form(K, 2)
    assert code.margin == pytest.approx(value, rel=1e-9)
    assert code.margin <= value * (1 + 1e-12)  # no code beats the published optimum
    assert _softmax_value(code.W) == pytest.approx(value, abs=1e-8)  # QP: ~1e-9 in d^2


@pytest.mark.parametrize("K", [3, 4, 5, 7, 12])
def test_rank2_softmax_code_is_the_regular_polygon(K):
    _check_rank2(K)


@pytest.mark.slow
@pytest.mark.parametrize("K", [k for k in range(3, 33) if k not in (3, 4, 5, 7, 12)])
def test_rank2_softmax_code_is_the_regular_polygon_up_to_32(K):
    _check_rank2(K)


def _check_solver_rank2(K):
    """The deep-UFM solver at L = inf (p -> 0, rank then sum log sigma) from the rank-2 spread
    start ends on the regular K-gon, whose unit-margin singular values are K/(2 delta) with
    delta the published one-vs-rest distance (unit rows, W^T W = (K/2) I_2)."""
    sol = refine_exact(polish(sph.code_logits(sph.repulsion_code(K, 2, seed=K)), 0.0))
    assert sol.rank == 2 and identify(sol.Z).key == "kgon"
    s1, s2 = sol.singular_values[:2]
    assert K / (2 * math.sqrt(s1 * s2)) == pytest.approx(_closed_form(K, 2), rel=1e-9)
    W, _ = class_vectors(sol.Z)
    assert _softmax_value(W) == pytest.approx(_closed_form(K, 2), rel=1e-4)


@pytest.mark.parametrize("K", [5, 9, 13])
def test_rank2_solver_optimum_is_the_published_polygon(K):
    _check_solver_rank2(K)


@pytest.mark.slow
@pytest.mark.parametrize("K", [k for k in range(4, 33) if k not in (5, 9, 13)])
def test_rank2_solver_optimum_is_the_published_polygon_up_to_32(K):
    _check_solver_rank2(K)


# -- simplex and orthoplex regimes --------------------------------------------------------------


@settings(max_examples=6, deadline=None)
@given(st.integers(3, 5), st.data())
def test_softmax_codes_reach_the_simplex_and_orthoplex_closed_forms(r, data):
    K = data.draw(st.integers(3, 2 * r), label="K")
    code = sph.max_margin_code(K, min(r, K), seeds=1)
    value = _closed_form(K, r)
    assert code.margin == pytest.approx(value, rel=1e-9)
    assert code.margin <= value * (1 + 1e-12)
    assert _softmax_value(code.W) == pytest.approx(value, abs=1e-8)


@pytest.mark.parametrize("K, L", [(6, 2), (7, 2), (8, 3), (9, 2)])
def test_solver_cross_polytope_optima_have_the_orthoplex_value(K, L):
    """Where the atlas finds the cross-polytope (+ a singleton for odd K; rank r = ceil(K/2),
    r + 1 < K <= 2r), the solver's optimum from the rank-r spread start is it, and its unit class
    vectors are a softmax code of the published value 1.  (For odd K the unit classifier rows are
    not: the centring tilts them; benchmarks/RESULTS.md, "Published codes".)"""
    r = (K + 1) // 2
    sol = polish(sph.code_logits(sph.repulsion_code(K, r)), schatten_exponent(L))
    assert identify(sol.Z).key == "cross_polytope" and sol.rank == r
    W, H = class_vectors(sol.Z)
    assert _softmax_value(H) == pytest.approx(_closed_form(K, r), abs=1e-6)
    if K % 2 == 0:
        assert _softmax_value(W) == pytest.approx(_closed_form(K, r), abs=1e-6)


# -- three dimensions ---------------------------------------------------------------------------


def _check_tammes(N):
    code = sph.max_margin_code(N, 3, symmetric=True, seeds=8)
    theta = math.acos(1 - code.margin)
    assert theta == pytest.approx(TAMMES[N], abs=1e-9)
    assert _smallest_angle(code.W) == pytest.approx(TAMMES[N], abs=1e-9)
    assert theta <= TAMMES[N] + 1e-12  # the published value is a proved maximum


@pytest.mark.parametrize("N", FAST_TAMMES)
def test_tammes_optima_on_the_sphere(N):
    _check_tammes(N)


@pytest.mark.slow
@pytest.mark.parametrize("N", [n for n in TAMMES if n not in FAST_TAMMES])
def test_tammes_optima_on_the_sphere_up_to_14(N):
    _check_tammes(N)


@pytest.mark.slow
@pytest.mark.parametrize("K", sorted(TAMMES))
def test_rank3_softmax_codes_are_at_least_the_tammes_margin(K):
    """A Tammes code with features = classifier rows is a feasible softmax code of margin
    1 - cos(theta_N), so the rank-3 softmax optimum is at least that (equality is what we
    measure for K = 4..14, benchmarks/RESULTS.md; the sources state it only for K <= 6)."""
    code = sph.max_margin_code(K, 3, seeds=8)
    assert code.margin >= (1 - math.cos(TAMMES[K])) * (1 - 1e-12)
    assert _softmax_value(code.W) >= code.margin * (1 - 1e-9)  # the QP distance bounds the margin


@pytest.mark.parametrize("name, K, L", [("square antiprism", 8, 4), ("icosahedron", 12, 5)])
def test_atlas_rank3_codes_are_the_published_tammes_optima(name, K, L):
    """The atlas names these at K = 8 (L = 4, 5) and K = 12 (L = 4-7): polished at such a depth
    they stay a local optimum of that name, and both factors are the published Tammes codes."""
    sol = polish(polytopes.logits(name), schatten_exponent(L))
    assert identify(sol.Z).name == name and sol.rank == 3
    W, H = class_vectors(sol.Z)
    for V in (W, H):
        assert _smallest_angle(V) == pytest.approx(TAMMES[K], abs=1e-7)
        assert _softmax_value(V) == pytest.approx(1 - math.cos(TAMMES[K]), rel=1e-7)


def test_one_vs_rest_distance_of_known_codes_and_bad_input():
    """Hand-computable distances: a unit vector to the opposite facet of the regular simplex
    is K/(K - 1); in the square (K-gon, K = 4) the hull of the others is a triangle whose edge
    through the two neighbours lies at distance 1 - cos(pi/2) = 1."""
    K = 5
    simplex = _unit(np.eye(K) - 1 / K)
    assert np.allclose(sph.one_vs_rest_distance(simplex), K / (K - 1), atol=1e-8)
    square = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    assert np.allclose(sph.one_vs_rest_distance(square), 1.0, atol=1e-8)
    for bad in (np.ones(3), np.ones((1, 2)), np.array([[0.0, np.nan], [1.0, 0.0]])):
        with pytest.raises(ParameterError, match="^W must"):
            sph.one_vs_rest_distance(bad)
    for kwargs, name in (({"K": 1, "r": 1}, "K"), ({"K": 4, "r": 5}, "r"), ({"K": 4, "r": 2, "seeds": 0}, "seeds")):
        with pytest.raises(ParameterError, match=f"^{name} must"):
            sph.max_margin_code(**kwargs)
