"""The certified bounds of ``numerics.maxmargin.lower_bounds`` against their derivations, term by term.

``test_lower_bounds.py`` checks that every bound is below sampled feasible objectives (a bound
that is too low passes there); here each bound is recomputed from the counting argument its
docstring gives (C(K, 3) triples, each 2 x 2 minor in at most K - 2 of them, math.comb) and
checked tight where the argument is (NC at p = 1, K = 3), the local radius against scipy's
brentq root of the certificate's condition, and E = sum_{i<j} sigma_i^2 sigma_j^2 against the
sum of squared 2 x 2 minors (Cauchy-Binet) of a random matrix.  p = 2/(L + 1), L weight matrices.
"""

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import brentq

from implicitbias.numerics.maxmargin import codes
from implicitbias.numerics.maxmargin import lower_bounds as lb
from implicitbias.theory.params import ParameterError

POINTS = [(3, 0.5), (5, 0.2), (9, 2 / 7), (40, 0.05), (6, 1.0)]


def _schatten(Z, p):
    s = np.linalg.svd(Z, compute_uv=False)
    return float(np.sum(s[s > 1e-12 * s[0]] ** p))


def _split(K, p, width=lb.SPLIT_WIDTH):
    """Bound 4 interval by interval: sigma_1 in [a, b], the other K - 2 values in [0, b] summing to at least
    t = max(N_0 - b, 1/b), the concave sum smallest with floor(t/b) of them at b and the remainder in one."""
    n0 = K - 1 + lb.nc_local_radius(K, p) / K
    lo, hi = n0 / (K - 1), (K - 1) ** (1 / p)
    n = max(2, int(math.log(hi / lo) / math.log1p(width)) + 2)
    edges = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
    best = math.inf
    for a, b in zip(edges[:-1], edges[1:]):
        t = max(n0 - b, 1 / b)
        full, rest = divmod(t, b)
        if full + (rest > 0) <= K - 2:
            best = min(best, a**p + full * b**p + rest**p)
    return min(K - 1, best)


@pytest.mark.parametrize("K, p", POINTS)
def test_each_bound_is_its_derivation(K, p):
    assert lb.nuclear_bound(K, p) == pytest.approx(float(K - 1) ** p, rel=1e-14)
    E_min = math.comb(K, 3) / (K - 2)  # each of C(K, 3) triples gives >= 1, each minor counted <= K - 2 times
    assert lb.triples_bound(K, p) == pytest.approx(2 * (E_min / 2) ** (p / 4), rel=1e-14)
    assert lb.three_class_bound(K, p) == 2.0
    u0 = lb.nc_local_radius(K, p)
    assert lb.local_bound(K, p) == pytest.approx(min(K - 1, (K - 1 + u0 / K) ** p), rel=1e-14)
    value, name = lb.spectral_bound(K, p)
    bounds = {"nuclear norm": lb.nuclear_bound(K, p), "three classes": 2.0, "all triples": lb.triples_bound(K, p),
              "nuclear norm outside NC's certified radius": lb.local_bound(K, p), "sigma_1 split": _split(K, p)}
    assert value == pytest.approx(max(bounds.values()), rel=1e-12) and bounds[name] == pytest.approx(value, rel=1e-12)
    assert value <= K - 1 + 1e-12  # NC is feasible: no bound may exceed its value


def test_bounds_are_tight_where_the_argument_is():
    assert lb.nuclear_bound(6, 1.0) == pytest.approx(_schatten(codes.simplex_etf(6), 1.0))  # ||NC||_* = K - 1
    assert lb.three_class_bound(3, 0.3) == pytest.approx(_schatten(codes.simplex_etf(3), 0.3))  # S_p(NC_3) = 2
    assert lb.three_class_bound(2, 0.3) == 1.0 and lb.triples_bound(2, 0.3) == 1.0
    assert lb.spectral_bound(3, 0.3) == (2.0, "three classes")
    assert lb.certified_lower_bound(5, 3) == {"value": lb.spectral_bound(5, 0.5)[0], "kind": lb.spectral_bound(5, 0.5)[1]}


@pytest.mark.parametrize("K, p", [(4, 0.5), (7, 0.2), (12, 0.8), (3, 0.05)])
def test_local_radius_is_the_root_of_its_condition(K, p):
    scale = math.sqrt((K - 1) / K)

    def margin_of_condition(u):  # p/K - c(delta) (K - 1)/K u, delta = scale u, c = p (1 - p)/2 (1 - delta)^(p - 2)
        return p / K - p * (1 - p) / 2 * (1 - scale * u) ** (p - 2) * (K - 1) / K * u

    root = brentq(margin_of_condition, 1e-12, (1 - 1e-12) / scale, xtol=1e-14)
    u0 = lb.nc_local_radius(K, p)
    assert root - 2e-4 <= u0 <= root and u0 == pytest.approx(math.floor(u0 * 1e4) / 1e4, abs=1e-15)
    assert lb.local_bound(K, 1.0) == K - 1  # at p = 1 the bound is capped at NC's value, whatever the radius


@pytest.mark.parametrize("K, p", [(1, 0.5), (100_001, 0.5), (5, 0.0), (5, 1.5)])
def test_bounds_refuse_bad_cells(K, p):
    with pytest.raises(ParameterError):
        lb.spectral_bound(K, p)
    with pytest.raises(ParameterError):
        lb.nc_local_radius(K, p)


def test_check_on_against_minors():
    Z = np.random.default_rng(9).normal(size=(4, 4))
    facts = lb.check_on(Z)
    s = np.linalg.svd(Z, compute_uv=False)
    minors = sum(np.linalg.det(Z[np.ix_(r, c)]) ** 2 for r in itertools.combinations(range(4), 2)
                 for c in itertools.combinations(range(4), 2))
    assert facts["e2"] == pytest.approx(minors, rel=1e-10)
    assert facts["nuclear"] == pytest.approx(s.sum()) and facts["sigma1_sigma2"] == pytest.approx(s[0] * s[1])
