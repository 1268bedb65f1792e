"""The derived singular-value ODE equals the full-matrix gradient flow under Hadamard init.

Routes compared: (i) sympy differentiation of the full K x K cross-entropy vs the generic per-mode
system; (ii) solve_ivp of the full-matrix flow (torch autograd, all d x d entries) vs solve_ivp
of the derived spectral ODE; (iii) analytic Jacobian vs finite differences of the RHS.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.ufm import deep_ufm as du
from implicitbias.numerics.ufm.spectral_agreement import off_diagonal_mass
from implicitbias.numerics.ufm.spectral_flow import integrate
from implicitbias.theory.params import ParameterError
from implicitbias.theory.spectral_ode import (
    SpectralODE,
    per_mode_matches_loss,
    per_mode_system,
)


@pytest.mark.parametrize("K, L", [(2, 1), (4, 1), (4, 2), (8, 1), (8, 3)])
def test_per_mode_system_is_the_derivative_of_the_loss(K, L):
    assert per_mode_matches_loss(K, L)


def test_off_diagonal_mass_sees_a_rotation():
    B = np.diag([1.0, 2.0, 3.0])
    assert off_diagonal_mass(B) == 0
    c, s = np.cos(1e-3), np.sin(1e-3)
    rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    assert off_diagonal_mass(rot @ B) == pytest.approx(np.sqrt(1 + 4) * s / np.sqrt(14), rel=1e-3)


@settings(max_examples=12, deadline=None)
@given(
    k=st.integers(1, 4), L=st.integers(1, 5), n=st.integers(1, 3), balanced=st.booleans(), seed=st.integers(0, 10**6)
)
def test_jacobian_matches_finite_differences(k, L, n, balanced, seed):
    system = SpectralODE(2**k, L, n, balanced=balanced)
    x = np.random.default_rng(seed).normal(0.0, 0.5, system.shape).ravel()
    h = 1e-6
    numeric = np.array([(system.rhs(0, x + h * e) - system.rhs(0, x - h * e)) / (2 * h) for e in np.eye(x.size)]).T
    assert np.allclose(system.jac(0, x), numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("L", [1, 2, 3])
def test_balanced_reduction_matches_per_layer_system_from_balanced_start(L):
    K, n = 8, 3
    S0 = np.exp(np.random.default_rng(L).normal(0, 0.3, K - 1))
    times = np.linspace(0, 30, 7)
    per_layer = integrate(
        SpectralODE(K, L, n, balanced=False), np.tile(S0 ** (1 / (L + 1)), (L + 1, 1)), 30, t_eval=times
    )
    balanced = integrate(SpectralODE(K, L, n, balanced=True), S0, 30, t_eval=times)
    assert np.allclose(per_layer.singular_values, balanced.singular_values, rtol=1e-7)


def test_balanced_law_has_the_expected_exponent():
    for L in (1, 2, 5):
        rhs = per_mode_system(L, balanced=True).rhs[0]
        S = per_mode_system(L, balanced=True).layer_values[0]
        assert (rhs.diff(S) * S / rhs).simplify() == 2 - 2 / __import__("sympy").Integer(L + 1)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: SpectralODE(6, 2), "K"),
        (lambda: SpectralODE(8, 0), "L"),
        (lambda: integrate(SpectralODE(4, 1), [1.0, np.nan, 1.0], 1.0), "singular_values"),
        (lambda: integrate(SpectralODE(4, 1), [1.0, -1.0, 1.0], 1.0), "singular_values"),
        (lambda: du.gaussian_init(4, 0, 8), "L"),
        (lambda: du.hadamard_init(np.full((3, 4), np.inf)), "singular_values"),
        (lambda: du.gradient_flow([np.ones((4, 4)), np.full((4, 4), np.nan)], 1.0), "factors"),
        (lambda: du.gaussian_init(4, 2, 10**5, n=10), "d"),
    ],
)
def test_bad_input_is_a_clear_error(call, name):
    with pytest.raises(ParameterError, match=rf"^{name}"):
        call()


def test_blow_up_guard_stops_a_run_and_says_so():
    """The singular values grow without bound (log S_j passes 3 by t ~ 1e12 from log 5): the guard at
    max_log = 3 stops the run there, and names the reason."""
    system = SpectralODE(4, 3)
    run = integrate(system, np.full(3, 5.0), 1e12, max_log=3.0)
    assert run.event == "blow-up" and run.success
    assert np.max(run.state[-1]) == pytest.approx(3.0, rel=1e-6)
    assert np.all(np.max(run.state, axis=1) <= 3.0 + 1e-6)


@pytest.mark.parametrize("kwargs, name", [({"t_end": 0.0}, "t_end"), ({"max_log": 0.0}, "max_log")])
def test_integrate_refuses_bad_horizons(kwargs, name):
    args = {"t_end": 1.0, **kwargs}
    t_end = args.pop("t_end")
    with pytest.raises(ParameterError, match=f"^{name}"):
        integrate(SpectralODE(4, 2), np.ones(3), t_end, **args)


def test_perturbed_nc_is_scale_times_exp_eps_xi():
    from implicitbias.numerics.ufm.spectral_flow import perturbed_nc

    xi = np.random.default_rng(3).standard_normal(7)
    assert np.allclose(perturbed_nc(8, 0.3, 0.4, 3), 0.3 * np.exp(0.4 * xi), rtol=1e-14)
    assert perturbed_nc(2, 1.5, 0.0, 0).tolist() == [1.5]
    with pytest.raises(ParameterError, match="^scale"):
        perturbed_nc(8, 0.0, 0.1, 0)


def test_two_classes_have_one_mode_whose_margin_is_its_singular_value():
    """K = 2 (the smallest power of two): Zbar = (S / 2) [[1, -1], [-1, 1]], margin S (n = 1)."""
    from implicitbias.theory.spectral_ode import SpectralODE

    ode = SpectralODE(2, 2)
    x = ode.initial_state([3.0])
    assert ode.shape == (1,) and ode.margin(x) == pytest.approx(3.0)
    assert ode.logit_vector(x) == pytest.approx([1.5, -1.5])
    with pytest.raises(ParameterError, match=r"^K must be an integer in \[2, 8192\]"):
        SpectralODE(2**14, 1)
