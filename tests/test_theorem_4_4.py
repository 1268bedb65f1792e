"""Theorem 4.4 (rich get richer): near the origin L = 1 keeps singular-value ratios, L >= 2
amplifies them (the larger grows faster), and the blow-up time of the growth law predicts when the
true flow leaves the origin.

Routes: the sympy closed-form solution of the near-origin law vs solve_ivp of the full derived
(nonlinear) spectral ODE.
"""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.claims import Context, Evidence
from implicitbias.claims.depth.theorem_4_4 import CLAIM, Config, LeaveRun, Measured, RatioRun, leave_origin_cell, ratio_cell
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


def test_ratio_cell_keeps_the_shallow_ratio_and_amplifies_the_deep_one():
    base = {"K": K, "n": N_PER_CLASS, "S0": 1e-4, "spread": 0.2, "growth": 100.0, "points": 20}
    shallow = ratio_cell({**base, "L": 1})
    deep = ratio_cell({**base, "L": 2})
    assert shallow["success"] and deep["success"]
    assert shallow["ratio"][-1] == pytest.approx(1.2, rel=1e-3)
    assert np.allclose(shallow["ratio_closed_form"], 1.2)
    assert deep["ratio"][-1] > 5 * deep["ratio"][0]


# -- the claim's verdict rule, on synthetic evidence ------------------------------------------------


def _evidence(shallow_end=1.2, deep_end=12.0, measured=1.0, success=True, reached=True):
    ratios = tuple(RatioRun(K=8, L=L, n=2, S0=1e-4, spread=0.2, growth=100.0, points=2, times=[0.0, 1.0],
                            ratio=[1.2, end], ratio_closed_form=[1.2, end], success=success or L > 1,
                            message="LSODA failed" if not success and L == 1 else "ok")
                   for L, end in ((1, shallow_end), (2, deep_end), (3, deep_end)))
    leaves = tuple(LeaveRun(K=8, L=L, n=2, S0=1e-6, level=0.16, reached=reached, measured=measured * 100.0,
                            hitting_closed_form=100.0, blowup_closed_form=101.0, success=True, message="ok")
                   for L in (2, 3))
    return Evidence("synthetic", Measured(ratios, leaves))


SYNTHETIC_VERDICTS = [
    ("agrees", _evidence()),
    ("disagrees", _evidence(shallow_end=1.3)),  # L = 1 rates not equal: the ratio drifts by 8%
    ("disagrees", _evidence(deep_end=1.25)),  # no amplification for L > 1
    ("disagrees", _evidence(measured=1.1)),  # the law mistimes the exit by 10%
    ("inconclusive", _evidence(success=False)),  # a failed integration
    ("inconclusive", _evidence(reached=False)),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


def test_equal_rates_at_L_1_is_judged():
    v = CLAIM.judge(_evidence(shallow_end=1.2 * 1.02))
    assert v.verdict == "disagrees" and "L = 1" in v.reason
    assert v.numbers["shallow_drift"] == pytest.approx(0.02)



@pytest.mark.parametrize("name, value, case", [
    ("amplified", 1.5, lambda f: _evidence(deep_end=1.2 * 1.5 * f)),  # growth 1.5 f at L = 2, 3
    ("equal_rates", 0.01, lambda f: _evidence(shallow_end=1.2 * (1 + 0.01 / f))),  # drift 0.01 / f at L = 1
    ("hitting_time", 0.02, lambda f: _evidence(measured=1 + 0.02 / f)),  # the law mistimes by 2% / f
])
def test_each_bound_10_percent_either_side_decides(name, value, case):
    """The bound moved by 20% flips one of these: each quantity 10% inside the bound agrees and 10%
    outside disagrees (the other two conditions hold)."""
    assert CLAIM.threshold(name) == value
    assert CLAIM.judge(case(1.1)).verdict == "agrees"
    assert CLAIM.judge(case(1 / 1.1)).verdict == "disagrees"


def test_inconclusive_without_an_l_1_run_and_only_l_1_counts_as_shallow():
    ev = _evidence()
    ev = Evidence("synthetic", replace(ev.data, ratios=tuple(r for r in ev.data.ratios if r.L != 1)))
    v = CLAIM.judge(ev)
    assert v.verdict == "inconclusive" and "no L = 1 run" in v.reason
    ev = _evidence(deep_end=1.2 * 1.02)  # L = 2, 3 drift 2% without amplification: only "not amplified" is named
    v = CLAIM.judge(ev)
    assert v.verdict == "disagrees" and v.reason == "ratio not amplified for L = [2, 3]"



def test_a_failed_run_is_named_in_the_reason():
    v = CLAIM.judge(_evidence(success=False))
    assert v.verdict == "inconclusive" and v.reason == "L = 1: LSODA failed"
    assert CLAIM.judge(_evidence(reached=False)).reason == "L = 2 never reached S = 0.16; L = 3 never reached S = 0.16"


def test_a_growth_of_1_5_exactly_is_amplified():
    """The bound is strict from below: S_max/S_min from 1 to 1.5 (exact in binary) counts as amplified."""
    ev = _evidence()
    ratios = tuple(replace(r, ratio=[1.0, 1.5]) if r.L > 1 else r for r in ev.data.ratios)
    ev = Evidence("synthetic", replace(ev.data, ratios=ratios))
    assert CLAIM.judge(ev).verdict == "agrees"


def test_claim_end_to_end_on_a_small_config(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(ratio_depths=(1, 2), leave_depths=(2, 3), points=20))
    v = CLAIM.judge(ev)
    assert v.verdict == "agrees", v
    assert v.numbers["shallow_drift"] < 1e-3
    assert "Theorem 4.4" in CLAIM.render(ctx, ev, v)


@pytest.mark.parametrize("K, L, n", [(8, 3, 1), (16, 2, 3), (2, 4, 1)])
def test_growth_law_at_generic_points_is_the_stated_closed_form(K, L, n):
    """dS/dt = c S^alpha, c = N/(K sqrt n), alpha = 2L/(L+1); T*(S_0) = K sqrt(n)/(L-1) S_0^{-(L-1)/(L+1)}
    (module docstring of theory.linear_regime), n = 1 by default."""
    S0, N = 3e-3, L + 1
    c, alpha = N / (K * np.sqrt(n)), 2 * L / (L + 1)
    kw = {} if n == 1 else {"n": n}
    T = blowup_time(S0, K, L, **kw)
    assert T == pytest.approx(K * np.sqrt(n) / (L - 1) * S0 ** (-(L - 1) / (L + 1)), rel=1e-12)
    assert relative_rate(S0, K, L, **kw) == pytest.approx(c * S0 ** (alpha - 1), rel=1e-12)
    t = 0.5 * T
    assert linear_solution(S0, t, K, L, **kw) == pytest.approx((S0 ** (1 - alpha) - (alpha - 1) * c * t) ** (-1 / (alpha - 1)))
    assert np.isnan(linear_solution(S0, T, K, L, **kw))  # at and after the blow-up: no solution


def test_a_zero_start_is_refused():
    with pytest.raises(ParameterError, match="^S0"):
        blowup_time(0.0, K, 2)
