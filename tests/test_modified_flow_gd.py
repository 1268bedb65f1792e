"""GD's modified flow, derived by the engine: L + (h/4)|grad L|^2 (Barrett & Dherin 2021)."""

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from implicitbias.theory.implicit_regularisers import gd_coefficient
from implicitbias.theory.modified_flow import h, modified_flow
from implicitbias.theory.updates import gd


def test_published_coefficient_one_quarter():
    assert gd_coefficient() == sp.Rational(1, 4)


def test_two_parameters_first_order_is_minus_grad_of_quarter_gradient_norm():
    flow = modified_flow(gd(), 1, dim=2)
    (L,) = flow.losses
    grad = [sp.diff(L, x) for x in flow.X]
    penalty = sum(g**2 for g in grad) / 4
    for i, x in enumerate(flow.X):
        assert sp.simplify(flow.terms[0][i] + grad[i]) == 0
        assert sp.simplify(flow.terms[1][i] + sp.diff(penalty, x)) == 0


def test_second_order_matches_the_euler_modified_equation():
    # Hairer-Lubich-Wanner IX.1 for explicit Euler on y' = F: f_2 = F''(F,F)/12 + F'F'F/3, F = -L'
    flow = modified_flow(gd(), 2)
    (theta,), (L,) = flow.X, flow.losses
    F = -sp.diff(L, theta)
    expected = sp.diff(F, theta, 2) * F**2 / 12 + sp.diff(F, theta) ** 2 * F / 3
    assert sp.simplify(flow.terms[2][0] - expected) == 0


@settings(max_examples=5, deadline=None)
@given(a=st.integers(1, 5), c=st.integers(-3, 3))
def test_concrete_quadratic_flow_is_exact_rescaling(a, c):
    # on L = a (theta - c)^2 / 2 the iterates contract by (1 - h a) per step; the modified flow's
    # rate -log(1 - h a)/h = a + a^2 h / 2 + a^3 h^2 / 3 + ... matches to the derived order
    theta = sp.Symbol("theta", real=True)
    flow = modified_flow(gd(), 2, losses=[a * (theta - c) ** 2 / 2])
    rate = sp.series(-sp.log(1 - h * a) / h, h, 0, 3).removeO()
    assert sp.simplify(flow.field()[0] + rate * (theta - c)) == 0


def test_latex_prints_the_flow():
    tex = modified_flow(gd(), 1).latex()
    assert tex.startswith(r"\frac{d \theta}{dt} =") and r"\frac{d^{2}}{d \theta^{2}}" in tex
