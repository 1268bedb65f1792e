"""Heavy ball and Nesterov: effective step h/(1-beta), regulariser (1+beta)/(1-beta) stronger (derived)."""

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from implicitbias.theory.implicit_regularisers import heavy_ball_terms
from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import beta, coupled_l2, heavy_ball, lam, nesterov


def test_published_effective_step_and_strengthening():
    a, c, ratio = heavy_ball_terms()
    assert sp.simplify(a - 1 / (1 - beta)) == 0
    assert sp.simplify(ratio - (1 + beta) / (1 - beta)) == 0
    # and the Ghosh et al. coefficient h (1 + beta) / (4 (1 - beta)^3) of |grad L|^2
    assert sp.simplify(c - (1 + beta) / (4 * (1 - beta) ** 3)) == 0


@settings(max_examples=5, deadline=None)
@given(b=st.sampled_from([sp.Rational(1, 10), sp.Rational(1, 2), sp.Rational(9, 10)]))
def test_nesterov_has_the_same_effective_step(b):
    hb, nag = modified_flow(heavy_ball(), 1), modified_flow(nesterov(), 1)
    assert sp.simplify((hb.terms[0][0] - nag.terms[0][0]).subs(beta, b)) == 0
    assert sp.simplify((hb.terms[1][0] - nag.terms[1][0]).subs(beta, b)) != 0  # differs at O(h)


def test_coupled_decay_enters_at_the_effective_rate():
    flow = modified_flow(coupled_l2(heavy_ball()), 0)
    (theta,), (L,) = flow.X, flow.losses
    assert sp.simplify(flow.terms[0][0] + (sp.diff(L, theta) + lam * theta) / (1 - beta)) == 0


def test_momentum_buffer_starts_on_its_slow_manifold():
    """PyTorch's heavy ball (v <- beta v + g, theta <- theta - h v): at leading order the buffer
    sits at the geometric sum v = g / (1 - beta); slow_state(0) is that term alone."""
    flow = modified_flow(heavy_ball(), 1)
    (theta,), (L,) = flow.X, flow.losses
    assert sp.simplify(flow.slow_state(0)[0] - sp.diff(L, theta) / (1 - beta)) == 0
    assert sp.simplify(flow.slow_state()[0] - flow.slow_state(1)[0]) == 0
