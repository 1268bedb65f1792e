"""Theorem 4.4 (rich get richer): near the origin L = 1 keeps singular-value ratios, L >= 2
amplifies them (the larger grows faster), and the blow-up time of the growth law predicts when the
true flow leaves the origin.

Routes: the sympy closed-form solution of the near-origin law vs solve_ivp of the full derived
(nonlinear) spectral ODE.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.ufm.rich_get_richer import leave_origin_cell
from implicitbias.numerics.ufm.spectral_flow import integrate
from implicitbias.theory.linear_regime import (
    blowup_time,
    linear_solution,
    relative_rate,
)
from implicitbias.theory.params import ParameterError
from implicitbias.theory.spectral_ode import SpectralODE

K, N_PER_CLASS = 8, 2


def spectrum(eps, spread=0.2):
    return eps * np.linspace(1.0, 1.0 + spread, K - 1)


def test_shallow_flow_keeps_ratios_to_first_order():
    eps = 1e-5
    S0 = spectrum(eps)
    c = 2 / (K * np.sqrt(N_PER_CLASS))
    t = np.log(1e3) / c  # every mode grows 1000-fold
    run = integrate(SpectralODE(K, 1, N_PER_CLASS), S0, t, t_eval=[0, t])
    S = run.singular_values[-1]
    assert np.allclose(S / S[0], S0 / S0[0], rtol=1e-3)
    assert np.allclose(S, linear_solution(S0, t, K, 1, N_PER_CLASS), rtol=2e-3)
    assert np.ptp(relative_rate(S0, K, 1, N_PER_CLASS)) == 0


@pytest.mark.parametrize("L", [2, 3, 5])
def test_deep_flow_amplifies_ratios_as_the_closed_form_says(L):
    eps = 1e-6
    S0 = spectrum(eps)
    t = 0.9 * blowup_time(S0.max(), K, L, N_PER_CLASS)
    run = integrate(SpectralODE(K, L, N_PER_CLASS), S0, t, t_eval=[0, t])
    S = run.singular_values[-1]
    closed = linear_solution(S0, t, K, L, N_PER_CLASS)
    assert np.allclose(S, closed, rtol=2e-2)
    ratio0, ratio = S0[-1] / S0[0], S[-1] / S[0]
    assert ratio > 1.5 * ratio0  # the larger singular value grew faster
    assert np.all(np.diff(S / S0) > 0)  # growth factor increases with the initial value
    assert np.all(np.diff(relative_rate(S0, K, L, N_PER_CLASS)) > 0)


@settings(max_examples=8, deadline=None)
@given(L=st.integers(2, 5), log_s0=st.floats(-8, -5))
def test_time_to_leave_the_origin_matches_the_blow_up_time(L, log_s0):
    level = 0.02 * K  # still in the near-origin regime (g ~ level / K)
    rec = leave_origin_cell({"K": K, "L": L, "n": N_PER_CLASS, "S0": 10.0**log_s0, "level": level})
    assert rec["reached"]
    assert rec["measured"] == pytest.approx(rec["hitting_closed_form"], rel=2e-2)
    assert rec["measured"] == pytest.approx(rec["blowup_closed_form"], rel=0.1)


def test_shallow_law_never_blows_up_and_bad_input_is_refused():
    assert np.isinf(blowup_time(1e-3, K, 1))
    with pytest.raises(ParameterError, match="^S0"):
        blowup_time(-1.0, K, 2)
    with pytest.raises(ParameterError, match="^L"):
        linear_solution(1.0, 1.0, K, 0)
