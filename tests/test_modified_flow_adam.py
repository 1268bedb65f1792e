"""Adam/RMSProp: the sign of the one-norm term (Cattaneo, Klusowski, Shigida 2024), derived."""

import pytest
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


def test_symbolic_muon_update_is_nesterov_momentum_through_the_polar_factor():
    """One step of theory.updates.muon written out by hand: B' = mu B + g, U = g + mu B',
    theta' = theta - h polar_eps(U); diagonal: per entry U / sqrt(U^2 + eps); row: U / |U|_eps."""
    from implicitbias.theory.modified_flow import h

    t1, t2, b1, b2, g1, g2 = sp.symbols("t1 t2 b1 b2 g1 g2", real=True)

    def grad(point, j):
        return [g1, g2][: len(point)]

    theta, state = muon("diagonal").step([t1], [b1], grad, 0)
    U = g1 + mu * (mu * b1 + g1)
    assert sp.simplify(state[0] - (mu * b1 + g1)) == 0
    assert sp.simplify(theta[0] - (t1 - h * U / sp.sqrt(U**2 + eps))) == 0
    theta, state = muon("row").step([t1, t2], [b1, b2], grad, 0)
    U = [g + mu * (mu * b + g) for g, b in ((g1, b1), (g2, b2))]
    norm = sp.sqrt(U[0] ** 2 + U[1] ** 2 + eps)
    assert all(sp.simplify(th - (t - h * Ui / norm)) == 0 for th, t, Ui in zip(theta, (t1, t2), U))


def test_muon_flow_moves_about_h_per_step_with_momentum():
    """Leading flow of diagonal Muon with momentum mu: the slow manifold B = g / (1 - mu) gives
    U = g / (1 - mu) and f_0 = -U / sqrt(U^2 + eps) (-sign(g) as eps -> 0, whatever mu)."""
    flow = modified_flow(muon("diagonal"), 0)
    (theta,), (L,) = flow.X, flow.losses
    U = sp.diff(L, theta) / (1 - mu)
    assert sp.simplify(flow.terms[0][0] + U / sp.sqrt(U**2 + eps)) == 0


def test_rmsprop_and_adamw_leading_flows():
    """f_0 of RMSProp is -g / sqrt(g^2 + eps); AdamW adds the decoupled decay -lambda theta."""
    from implicitbias.theory.updates import adamw, lam

    r = modified_flow(rmsprop(), 0)
    (theta,), (L,) = r.X, r.losses
    g = sp.diff(L, theta)
    assert sp.simplify(r.terms[0][0] + g / sp.sqrt(g**2 + eps)) == 0
    w = modified_flow(adamw(), 0)
    assert sp.simplify(w.terms[0][0] + g / sp.sqrt(g**2 + eps) + lam * theta) == 0


def test_builtin_names_and_minibatches():
    from implicitbias.theory.params import ParameterError
    from implicitbias.theory.updates import builtin, sgd_rr

    assert sgd_rr().period == 2 and builtin("sgd_rr").period == 2
    assert builtin("sgd").period == 1 and not builtin("gd").reshuffle
    assert builtin("gd", minibatches=3).period == 3 and builtin("sgd", minibatches=2).reshuffle
    with pytest.raises(ParameterError, match="^minibatches"):  # never silently ignored (issue 9)
        builtin("heavy_ball", minibatches=2)
    with pytest.raises(ParameterError, match="^minibatches"):
        sgd_rr(5)
