"""Certified lower bounds of P(K, L) and the certified local radius of NC, against sampling.

Every bound of ``numerics.maxmargin.lower_bounds`` is a theorem about all feasible matrices; here
it is checked on random feasible matrices (margins recomputed), including matrices on the faces
of the feasible cone and low-rank codes, and the local radius on random points of the certified
neighbourhood of NC.  The checks must be able to fail: a too-large radius or bound is caught
(the square at K = 4 lies outside the radius and below the bound doubled).  L counts weight
matrices, p = 2/(L + 1).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.maxmargin import codes
from implicitbias.numerics.maxmargin import lower_bounds as lb
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.numerics.maxmargin.spherical import code_logits, repulsion_code


def _objective(Z, p):
    s = np.linalg.svd(Z, compute_uv=False)
    return float(np.sum(s[s > 1e-12 * s[0]] ** p))


def _feasible(K, rng, scale):
    t = rng.exponential(size=(K, K)) * rng.choice([0.0, 1.0], size=(K, K), p=[0.5, 0.5]) * scale
    np.fill_diagonal(t, 0.0)
    G = -(1 + t)
    np.fill_diagonal(G, 0.0)
    return codes.centre_columns(G), t


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 12), st.floats(1.0, 30.0), st.integers(0, 2**31 - 1), st.sampled_from([0.1, 1.0, 10.0]))
def test_spectral_bound_holds_for_random_feasible_matrices(K, L, seed, scale):
    p = 2 / (L + 1)
    Z, _ = _feasible(K, np.random.default_rng(seed), scale)
    assert margins(Z).min() >= 1 - 1e-12
    value, _ = lb.spectral_bound(K, p)
    assert _objective(Z, p) >= value * (1 - 1e-12)
    facts = lb.check_on(Z)
    assert facts["nuclear"] >= K - 1 - 1e-9
    assert facts["sigma1_sigma2"] >= 1 - 1e-9
    assert facts["e2"] >= K * (K - 1) / 6 - 1e-9


@pytest.mark.parametrize("K, r", [(8, 3), (12, 3), (16, 4), (10, 2)])
def test_spectral_bound_holds_for_low_rank_codes(K, r):
    Z = code_logits(repulsion_code(K, r, seed=1))
    for L in (2, 5, 12):
        p = 2 / (L + 1)
        assert _objective(Z, p) >= lb.spectral_bound(K, p)[0]
        assert lb.check_on(Z)["e2"] >= K * (K - 1) / 6


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 16), st.floats(1.2, 20.0), st.integers(0, 2**31 - 1))
def test_nc_is_above_its_value_inside_the_certified_radius(K, L, seed):
    p = 2 / (L + 1)
    u0 = lb.nc_local_radius(K, p)
    assert u0 > 0
    rng = np.random.default_rng(seed)
    _, t = _feasible(K, rng, 1.0)
    t *= rng.uniform(0.01, 1.0) * u0 / t.sum() if t.sum() > 0 else 0
    G = -(1 + t)
    np.fill_diagonal(G, 0.0)
    Z = codes.centre_columns(G)
    assert margins(Z).min() >= 1 - 1e-12
    assert _objective(Z, p) > (K - 1) * (1 + 1e-15) or t.sum() == 0


def test_radius_excludes_the_better_square_and_bounds_are_below_the_optimum():
    # at K = 4, L = 3 the square (the 4-gon) beats NC; it must lie outside the certified radius
    p = 0.5
    square = codes.kgon_code(4)
    t = (np.diag(square)[None, :] - square) - 1
    np.fill_diagonal(t, 0.0)
    assert _objective(square, p) < 3
    assert t.sum() > lb.nc_local_radius(4, p)
    assert lb.spectral_bound(4, p)[0] <= _objective(square, p)


def test_monotone_bound_and_its_direction():
    assert lb.monotone_bound(3.0, 2 / 3, 0.5) == pytest.approx(3 ** 0.75)
    with pytest.raises(ValueError, match="p_to"):
        lb.monotone_bound(3.0, 0.5, 2 / 3)
    assert lb.certified_lower_bound(7, 1) == {"value": 6.0, "kind": "convex"}


@pytest.mark.parametrize("K", [3, 4, 7])
def test_nc_local_radius_at_p_1_is_the_whole_domain_of_the_bound(K):
    """At p = 1 the second-order term p (1 - p)/2 ... vanishes: the radius is delta < 1, u < sqrt(K/(K-1))."""
    from implicitbias.numerics.maxmargin.lower_bounds import nc_local_radius

    assert nc_local_radius(K, 1.0) == pytest.approx(math.sqrt(K / (K - 1)), abs=2e-4)
    assert nc_local_radius(K, 0.999) < nc_local_radius(K, 1.0)
