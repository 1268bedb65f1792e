"""Representation cost: min 1/2 sum ||F_l||^2 over F_N ... F_1 = Z equals (N/2) sum sigma_i^(2/N).

Routes compared: the sympy derivation (log-parametrised balanced factorisation, and the Lagrange
system solved by sympy) against the closed form; and a numerical optimisation of random
factorisations of random matrices (scipy L-BFGS, torch gradients) against the closed form
evaluated at the matrix's singular values.  N = L + 1 factors (L weight matrices + features).
"""

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from implicitbias.theory import params
from implicitbias.theory import representation_cost as rc


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_log_parametrised_minimum_is_the_closed_form(n):
    assert sp.simplify(rc.balanced_cost(n) - rc.balanced_cost().subs(rc.N, n)) == 0


@pytest.mark.parametrize("n", [1, 2, 3])
def test_lagrange_system_has_only_the_balanced_solution(n):
    sols = rc.stationary_factors(n)
    assert len(sols) == 1
    f = [sols[0][s] for s in sp.symbols(f"f1:{n + 1}", positive=True)]
    assert all(sp.simplify(fl - rc.sigma ** sp.Rational(1, n)) == 0 for fl in f)
    cost = sp.Rational(1, 2) * sum(fl**2 for fl in f)
    assert sp.simplify(cost - rc.balanced_cost().subs(rc.N, n)) == 0


def _min_factorisation_cost(Z, n, rng):
    """Minimise 1/2 sum ||F_l||^2 over F_N ... F_1 = Z: F_1..F_{N-1} free, F_N = Z (F_{N-1}...F_1)^{-1}."""
    d = Z.shape[0]
    Zt = torch.tensor(Z)

    def f(x):
        t = torch.tensor(x, requires_grad=True)
        Fs = list(t.view(n - 1, d, d))
        prod = torch.eye(d, dtype=torch.float64)
        for F in Fs:
            prod = F @ prod
        last = torch.linalg.solve(prod.T, Zt.T).T  # Z prod^{-1}
        val = 0.5 * (sum((F**2).sum() for F in Fs) + (last**2).sum())
        (g,) = torch.autograd.grad(val, t)
        return val.item(), g.numpy()

    best = np.inf
    for _ in range(4):
        x0 = (np.eye(d) + 0.3 * rng.standard_normal((n - 1, d, d))).ravel()
        res = minimize(f, x0, jac=True, method="L-BFGS-B", options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10})
        best = min(best, res.fun)
    return best


@settings(max_examples=6, deadline=None)
@given(st.integers(2, 4), st.integers(2, 4), st.integers(0, 2**31 - 1))
def test_optimised_random_factorisations_reach_the_closed_form(n, d, seed):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((d, d))
    s = np.linalg.svd(Z, compute_uv=False)
    closed = float(rc.representation_cost(list(map(sp.Float, s)), n))
    assert closed == pytest.approx(n / 2 * np.sum(s ** (2 / n)), rel=1e-12)
    found = _min_factorisation_cost(Z, n, rng)
    assert found == pytest.approx(closed, rel=1e-5)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 5), st.integers(2, 5), st.integers(0, 2**31 - 1))
def test_no_factorisation_beats_the_representation_cost(n, d, seed):
    rng = np.random.default_rng(seed)
    Fs = [rng.standard_normal((d, d)) for _ in range(n)]
    Z = np.linalg.multi_dot(Fs[::-1])
    cost = 0.5 * sum((F**2).sum() for F in Fs)
    s = np.linalg.svd(Z, compute_uv=False)
    assert cost >= n / 2 * np.sum(s ** (2 / n)) * (1 - 1e-12)


def test_schatten_exponent_and_bad_depth():
    assert rc.schatten_exponent(3) == sp.Rational(1, 2)
    assert rc.schatten_exponent(2.5) == sp.Rational(4, 7)
    with pytest.raises(params.ParameterError, match="^L must"):
        rc.schatten_exponent(0.5)
    with pytest.raises(params.ParameterError, match="^N must"):
        rc.log_parametrised_cost(0)


def test_schatten_exponent_of_sympy_depths_is_the_float_routes_value():
    for L in (sp.Integer(3), sp.Rational(5, 2), sp.sqrt(2) + 1):
        assert float(rc.schatten_exponent(L)) == pytest.approx(2 / (float(L) + 1), rel=1e-15)
    for bad in (sp.Rational(1, 2), sp.I, sp.Integer(0)):
        with pytest.raises(params.ParameterError, match="^L must be a finite number >= 1"):
            rc.schatten_exponent(bad)
    assert rc.schatten_exponent(sp.Integer(1)) == 1


def test_lagrange_system_is_limited_to_three_factors():
    with pytest.raises(params.ParameterError, match=r"^N must be an integer in \[1, 3\]"):
        rc.stationary_factors(4)
