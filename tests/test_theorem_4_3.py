"""Theorem 4.3: the NC ray is transversally unstable near the origin for L >= 2 (threshold
sigma*(K, L) growing with L) and stable at every margin for L = 1.

Routes: the sympy-derived closed-form transverse eigenvalue (ray algebra, generic K) vs the
numerical Jacobian of the derived ODE assembled with Hadamard matrices for the actual K, vs
finite differences of trajectories integrated by solve_ivp.
"""

import numpy as np
import pytest

from implicitbias.numerics.ufm.nc_ray import (
    numeric_threshold,
    numeric_transverse_eigenvalues,
)
from implicitbias.numerics.ufm.spectral_flow import integrate
from implicitbias.theory.nc_stability import (
    instability_threshold,
    transverse_eigenvalue,
)
from implicitbias.theory.params import ParameterError
from implicitbias.theory.spectral_ode import SpectralODE


@pytest.mark.parametrize("K", [4, 8, 16])
@pytest.mark.parametrize("L", [1, 2, 3, 5])
def test_linearisation_matches_numeric_jacobian(K, L):
    system = SpectralODE(K, L, n=2)
    for margin in (0.05, 0.5, 2.0, K / 2, 2.0 * K):
        eig = numeric_transverse_eigenvalues(system, margin)
        closed = transverse_eigenvalue(margin, K, L, n=2)
        assert np.allclose(eig, closed, rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("K", [4, 8, 32])
def test_shallow_ray_is_stable_at_every_margin(K):
    margins = np.geomspace(1e-4, 200, 60)
    assert (transverse_eigenvalue(margins, K, 1) < 0).all()
    system = SpectralODE(K, 1)
    assert all((numeric_transverse_eigenvalues(system, m) < 0).all() for m in margins[margins < 30][::5])
    assert instability_threshold(K, 1) == 0 and numeric_threshold(K, 1) == 0


@pytest.mark.parametrize("K", [8, pytest.param(16, marks=pytest.mark.slow), pytest.param(32, marks=pytest.mark.slow)])
def test_threshold_grows_with_depth_and_matches_numeric_root(K):
    thresholds = []
    for L in range(2, 11):
        sigma_star = instability_threshold(K, L)
        assert numeric_threshold(K, L) == pytest.approx(sigma_star, rel=1e-6)
        assert numeric_transverse_eigenvalues(SpectralODE(K, L), 0.01)[0] > 0  # unstable near the origin
        thresholds.append(sigma_star)
    assert np.all(np.diff(thresholds) > 0)


@pytest.mark.parametrize("K, L", [(8, 1), (8, 3), (16, 2)])
def test_linearisation_agrees_with_finite_differences_of_the_flow(K, L):
    system = SpectralODE(K, L)
    rng = np.random.default_rng(K + L)
    direction = rng.standard_normal(K - 1)
    direction -= direction.mean()
    direction /= np.linalg.norm(direction)
    for margin in (0.5, 0.9 * K):
        S = margin * np.ones(K - 1)
        tau = 0.02 / abs(float(transverse_eigenvalue(margin, K, L)))
        eps = 1e-6
        times = np.linspace(0, tau, 201)
        base = integrate(system, S, tau, t_eval=times, rtol=1e-12, atol=1e-14)
        moved = integrate(system, S * np.exp(eps * direction), tau, t_eval=times, rtol=1e-12, atol=1e-14)
        delta = moved.state[-1] - base.state[-1]
        delta -= delta.mean()
        growth = np.log(np.linalg.norm(delta) / eps)  # log of the transverse amplification
        predicted = np.trapezoid(transverse_eigenvalue(base.margin, K, L), base.times)
        assert growth == pytest.approx(predicted, rel=2e-3)


def test_bad_margin_is_a_clear_error():
    with pytest.raises(ParameterError, match="^margin"):
        transverse_eigenvalue([1.0, np.inf], 8, 2)
    with pytest.raises(ParameterError, match="^L"):
        instability_threshold(8, 0)


# -- the claim's verdict rule, on synthetic evidence ------------------------------------------------

from implicitbias.claims import Context, Evidence  # noqa: E402
from implicitbias.claims.depth.theorem_4_3 import CLAIM, Config, Measured, ThresholdCell, threshold_cell  # noqa: E402


def _evidence(numeric=lambda K, L: K * (L - 1) / (L + 1), closed=lambda K, L: K * (L - 1) / (L + 1)):
    cells = tuple(ThresholdCell(K=K, L=L, n=1, numeric=numeric(K, L), closed_form=closed(K, L))
                  for K in (8, 16) for L in range(1, 6))
    return Evidence("synthetic", Measured(cells))


def _shrinks_at_4(K, L):
    return K * (L - 1) / (L + 1) if L < 4 else K / 10


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", _evidence()),
    ("disagrees", _evidence(numeric=_shrinks_at_4, closed=_shrinks_at_4)),
    ("inconclusive", _evidence(closed=lambda K, L: K * (L - 1) / (L + 1) * 1.001)),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    """Every outcome of the rule, each case with one condition failing (the claim's own test module)."""
    assert CLAIM.judge(evidence).verdict == expected


@pytest.mark.parametrize("diff, expected", [(0.9e-6, "agrees"), (1.1e-6, "inconclusive")])
def test_the_routes_agree_to_1e_6_relative_a_difference_10_percent_either_side_decides(diff, expected):
    """The bound moved by 20% (0.8e-6 or 1.2e-6) flips one of these (the closed forms are >= 1 at L > 1)."""
    assert CLAIM.threshold("routes_agree") == 1e-6
    ev = _evidence(closed=lambda K, L: K * (L - 1) / (L + 1) * (1 + diff))
    assert CLAIM.judge(ev).verdict == expected


@pytest.mark.parametrize("numeric, failed", [
    (lambda K, L: K * (L - 1) / (L + 1) - (K / 3 if L == 2 else 0), "unstable for L > 1"),  # sigma* = 0 at L = 2
    (lambda K, L: K * (L - 1) / (L + 1) + (0.5 if L == 1 else 0), "stable at L = 1"),
    (_shrinks_at_4, "region grows with L"),
])
def test_each_condition_failing_alone_disagrees_and_is_named(numeric, failed):
    """Each numerical threshold line differs from the sympy one in one condition only (the closed form
    follows it, so the routes agree)."""
    v = CLAIM.judge(_evidence(numeric=numeric, closed=numeric))
    assert v.verdict == "disagrees" and v.reason == f"fails: {failed}"


def _sigma(K, L):
    return K * (L - 1) / (L + 1)


@pytest.mark.parametrize("numeric", [
    lambda K, L: _sigma(K, 3) if L == 4 else _sigma(K, L),  # flat from L = 3 to 4
    lambda K, L: _sigma(K, 3) - 0.5 if L == 4 else _sigma(K, L),  # falls by 0.5 (less than 1) at L = 4
    lambda K, L: _sigma(K, 3) + 0.5 if L == 2 else _sigma(K, L),  # falls from L = 2 to 3 only
])
def test_the_region_must_grow_at_every_depth_step_from_l_2(numeric):
    v = CLAIM.judge(_evidence(numeric=numeric, closed=numeric))
    assert v.verdict == "disagrees" and v.reason == "fails: region grows with L"


@pytest.mark.parametrize("diff, expected", [(0.9e-6, "agrees"), (1.1e-6, "inconclusive")])
def test_a_closed_form_below_one_is_matched_to_1e_6_absolute(diff, expected):
    """The difference is divided by max(1, closed form): a closed form 0.5 (K = 8, L = 2, here) takes the
    absolute difference, and a floor moved by 20% (0.8 or 1.2) turns 0.9e-6 into 1.125e-6 or 1.1e-6
    into 0.917e-6, flipping one of these."""
    line = lambda K, L: 0.5 if (K, L) == (8, 2) else _sigma(K, L)  # noqa: E731
    assert CLAIM.judge(_evidence(numeric=lambda K, L: line(K, L) + (diff if (K, L) == (8, 2) else 0),
                                 closed=line)).verdict == expected


def test_a_route_difference_of_exactly_1e_6_is_agreement():
    """Closed form 0 at L = 1 and the numerical root 1e-6 there (the difference exactly the bound, no
    rounding): the routes agree, so the rule judges, and a root above 0 at L = 1 is not stable."""
    v = CLAIM.judge(_evidence(numeric=lambda K, L: 1e-6 if L == 1 else _sigma(K, L)))
    assert v.verdict == "disagrees" and v.reason == "fails: stable at L = 1"


def test_the_thresholds_stated_are_the_smallest_k_s_at_every_l_above_1():
    numbers = CLAIM.judge(_evidence()).numbers
    assert numbers["sigma_star_K8"] == [_sigma(8, L) for L in (2, 3, 4, 5)]


def test_verdict_agrees_on_growing_thresholds():
    assert CLAIM.judge(_evidence()).verdict == "agrees"


@pytest.mark.parametrize("numeric", [
    lambda K, L: K * (L - 1) / (L + 1) if L < 4 else K / 10,      # region shrinks at depth 4
    lambda K, L: K * (L - 1) / (L + 1) + (0.5 if L == 1 else 0),  # L = 1 unstable
    lambda K, L: 0.0,                                             # never unstable
])
def test_verdict_disagrees_when_the_numeric_route_contradicts_the_claim(numeric):
    v = CLAIM.judge(_evidence(numeric=numeric, closed=numeric))
    assert v.verdict == "disagrees" and v.reason.startswith("fails")


def test_verdict_inconclusive_when_routes_differ():
    v = CLAIM.judge(_evidence(closed=lambda K, L: K * (L - 1) / (L + 1) * 1.001))
    assert v.verdict == "inconclusive"


def test_threshold_cell_at_several_samples_per_class():
    """n = 3: sigma* scales with sqrt(n) (a generic point; n = 1 hides n vs sqrt(n))."""
    rec = threshold_cell({"K": 8, "L": 3, "n": 3})
    assert rec["numeric"] == pytest.approx(8 * np.sqrt(3) * 2 / 4, rel=1e-6)
    assert rec["closed_form"] == pytest.approx(rec["numeric"], rel=1e-6)


def test_claim_runs_end_to_end_on_a_small_config(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    verdict = CLAIM.judge(CLAIM.measure(ctx, Config(Ks=(8,), depths=(1, 2, 3), n=2)))
    assert verdict.verdict == "agrees" and "sigma*(8, L)" in verdict.measured


@pytest.mark.parametrize("K, L, n", [(8, 3, 3), (16, 2, 5), (4, 4, 2), (2, 2, 1)])
def test_threshold_at_generic_points_is_the_stated_closed_form(K, L, n):
    """sigma*(K, L) = K sqrt(n) (L - 1)/(L + 1) (module docstring of theory.nc_stability), n > 1."""
    assert instability_threshold(K, L, n) == pytest.approx(K * np.sqrt(n) * (L - 1) / (L + 1), rel=1e-12)


@pytest.mark.parametrize("K, L, n", [(8, 2, 3), (4, 3, 2)])
def test_radial_eigenvalue_matches_the_numeric_jacobian_along_the_ray(K, L, n):
    """The equal-mode direction (1, ..., 1) is an eigenvector of the Jacobian with the radial eigenvalue."""
    import sympy as sp

    from implicitbias.theory.nc_stability import gamma_sym, ray_linearisation
    from implicitbias.theory.spectral_ode import K_sym, n_sym

    radial = sp.lambdify(gamma_sym, ray_linearisation(L).radial.subs({K_sym: K, n_sym: n}))
    system = SpectralODE(K, L, n)
    for margin in (0.3, 1.7, 6.0):
        J = system.jac(0.0, np.full(K - 1, np.log(margin * np.sqrt(n))))
        assert np.allclose(J @ np.ones(K - 1), radial(margin) * np.ones(K - 1), rtol=1e-8, atol=1e-14)


def test_bad_sizes_and_margins_are_clear_errors():
    with pytest.raises(ParameterError, match="^margin"):
        transverse_eigenvalue(0.0, 8, 2)
    with pytest.raises(ParameterError, match="^K"):
        transverse_eigenvalue(1.0, 1, 2)
    with pytest.raises(ParameterError, match="^n"):
        instability_threshold(8, 2, 0)
