"""Adam/RMSProp: the sign of the one-norm term (Cattaneo, Klusowski, Shigida 2024), derived."""

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from implicitbias.theory.implicit_regularisers import adam_one_norm_coefficient
from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import (
    adam,
    beta1,
    beta2,
    eps,
    mu,
    muon,
    rho,
    rmsprop,
    sign_descent,
)


def test_default_betas_anti_penalise_the_one_norm():
    assert adam_one_norm_coefficient(0.9, 0.999) < 0


@settings(max_examples=10, deadline=None)
@given(b1=st.floats(0.0, 0.95), b2=st.floats(0.0, 0.999))
def test_sign_follows_beta1_minus_beta2(b1, b2):
    # "anti-penalised when rho (second moment) exceeds beta (first moment)"
    c = float(adam_one_norm_coefficient(b1, b2))
    if abs(b1 - b2) > 1e-3:
        assert (c > 0) == (b1 > b2)


def test_leading_flow_moves_about_h_per_step_whatever_the_gradient_scale():
    flow = modified_flow(adam(), 1)
    (theta,), (L,) = flow.X, flow.losses
    g = sp.diff(L, theta)
    assert sp.simplify(flow.terms[0][0] + g / sp.sqrt(g**2 + eps)) == 0


def test_independent_updates_agree_where_they_coincide():
    # RMSProp is Adam with beta_1 = 0; Muon on a diagonal weight with mu = 0 is sign descent
    a, r = modified_flow(adam(), 1), modified_flow(rmsprop(), 1)
    assert sp.simplify(a.terms[1][0].subs(beta1, 0) - r.terms[1][0].subs(rho, beta2)) == 0
    m, s = modified_flow(muon("diagonal"), 1), modified_flow(sign_descent(), 1)
    assert all(sp.simplify(x.subs(mu, 0) - y) == 0 for x, y in zip(m.terms[1] + m.terms[0], s.terms[1] + s.terms[0]))
