"""SGD with random reshuffling: the minibatch term and its h/b scaling (Smith et al. 2021), derived."""

import sympy as sp
from implicitbias.theory.implicit_regularisers import sgd_minibatch_coefficients
from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import sgd_rr


def test_mean_iterate_penalises_minibatch_gradient_norms():
    # C~ = C + (h / (4 m)) sum_k |grad L_k|^2 with C = (1/m) sum_k L_k; time t = k h
    for m in (2, 3):
        flow = modified_flow(sgd_rr(m), 1)
        (theta,) = flow.X
        C = sum(flow.losses) / m
        reg = sum(sp.diff(L, theta) ** 2 for L in flow.losses) / (4 * m)
        assert sp.simplify(flow.terms[0][0] + sp.diff(C, theta)) == 0
        assert sp.simplify(flow.terms[1][0] + sp.diff(reg, theta)) == 0


def test_published_minibatch_coefficients_and_h_over_b_scaling():
    # E C~ = C + (h/4)|grad C|^2 + h (N - b) / (4 b (N - 1)) Gamma
    for N, b in ((4, 2), (6, 2), (6, 3)):
        a, c = sgd_minibatch_coefficients(N, b)
        assert a == sp.Rational(1, 4)
        assert c == sp.Rational(N - b, 4 * b * (N - 1))
    # doubling the batch at fixed N (6: b = 2 -> 3 is x1.5) divides the noise term by more than b
    c2, c3 = sgd_minibatch_coefficients(6, 2)[1], sgd_minibatch_coefficients(6, 3)[1]
    assert c2 / c3 == 2  # = (4 / 2) / (3 / 3): the h/b factor times the finite-population factor


def test_published_coefficients_at_the_smallest_population_and_the_bounds_on_n():
    """N = 2, b = 1 (two examples, one per minibatch): a = 1/4, c = (2 - 1)/(4 (2 - 1)) = 1/4."""
    import pytest

    from implicitbias.theory.params import ParameterError

    assert sgd_minibatch_coefficients(2, 1) == (sp.Rational(1, 4), sp.Rational(1, 4))
    for N, b in ((1, 1), (9, 3)):
        with pytest.raises(ParameterError, match=r"^N must be an integer in \[2, 8\]"):
            sgd_minibatch_coefficients(N, b)
    with pytest.raises(ParameterError, match="^b must divide N"):
        sgd_minibatch_coefficients(6, 4)
