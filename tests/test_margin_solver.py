"""The P(K, L) solver: every output re-verified; L = 1 certified by cvxpy and never beaten.

Properties (hypothesis) over K, real L and seeds: margin >= 1 - 1e-9 and the reported objective
equals the one recomputed here from an SVD.  L = 1: cvxpy's nuclear-norm optimum equals K - 1
and its dual multipliers certify it; the non-convex multi-start solver run at p = 1 never goes
below it.  L counts weight matrices (N = L + 1, p = 2/(L + 1)).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.maxmargin import solver as sm
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.theory import params


def _recomputed(Z, p):
    s = np.linalg.svd(Z, compute_uv=False)
    s = s[s > Z.shape[0] * np.finfo(float).eps * s[0]]
    return float(np.sum(s**p))


@settings(max_examples=12, deadline=None)
@given(st.integers(3, 9), st.floats(1.0, 20.0), st.integers(0, 2**31 - 1))
def test_every_solver_output_is_feasible_and_its_objective_is_honest(K, L, seed):
    res = sm.solve_margin_problem(K, L, effort=1, seed=seed)
    p = 2 / (L + 1)
    assert res.solutions and len(res.solutions) == len(res.starts)
    for sol in res.solutions:
        assert margins(sol.Z).min() >= 1 - 1e-9
        assert sol.objective == pytest.approx(_recomputed(sol.Z, p), rel=1e-12)
    assert [s.objective for s in res.solutions] == sorted(s.objective for s in res.solutions)


@settings(max_examples=6, deadline=None)
@given(st.integers(4, 8), st.sampled_from([30.0, math.inf]), st.integers(0, 2**31 - 1))
def test_fixed_rank_refinement_is_feasible_and_never_worse(K, L, seed):
    res = sm.solve_margin_problem(K, L, effort=1, seed=seed)
    for sol in res.solutions[:2]:
        ref = sm.refine_fixed_rank(sol)
        assert margins(ref.Z).min() >= 1 - 1e-9
        assert ref.key <= sol.key


@pytest.mark.parametrize("K", range(2, 17))
def test_cvxpy_nuclear_norm_optimum_is_k_minus_1_and_certified(K):
    out = sm.nuclear_norm_optimum(K)
    assert out["status"] == "optimal"
    assert out["value"] == pytest.approx(K - 1, rel=1e-7)
    assert out["lower_bound"] == pytest.approx(K - 1, rel=1e-7)
    assert out["solution"].objective == pytest.approx(K - 1, rel=1e-6)
    assert margins(out["solution"].Z).min() == pytest.approx(1.0)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 30), st.integers(0, 2**31 - 1))
def test_any_nonnegative_multipliers_give_a_valid_lower_bound(K, seed):
    rng = np.random.default_rng(seed)
    bound = sm.nuclear_norm_dual_bound(rng.random((K, K)))
    assert bound <= K - 1 + 1e-9  # NC is feasible with value K - 1
    assert sm.nuclear_norm_dual_bound(np.full((K, K), 1.0 / K)) == pytest.approx(K - 1, rel=1e-12)


@pytest.mark.parametrize("K", range(3, 11))
def test_multistart_solver_never_beats_nc_at_l1(K):
    res = sm.solve_margin_problem(K, 1.0, effort=2, seed=K)
    assert res.best.objective >= (K - 1) * (1 - 1e-9)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: sm.solve_margin_problem(1, 2), "K"),
        (lambda: sm.solve_margin_problem(5, 0.5), "L"),
        (lambda: sm.solve_margin_problem(5, float("nan")), "L"),
        (lambda: sm.solve_margin_problem(5, 2, effort=0), "effort"),
        (lambda: sm.solve_margin_problem(10_000, 2), "K"),
        (lambda: sm.solve_schatten(5, 1.5, []), "p"),
        (lambda: sm.nuclear_norm_optimum(1000), "K"),
    ],
)
def test_bad_input_is_a_parameter_error_naming_it(call, name):
    with pytest.raises(params.ParameterError, match=rf"^{name} must"):
        call()
