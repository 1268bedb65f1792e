"""The P(K, L) local solver: every output re-verified and honest, scipy's status carried, L = 1 certified.

Properties (hypothesis) over K, real L and seeds: margin >= 1 - 1e-9 and the reported objective
equals the one recomputed here from an SVD; polishing and the exact fixed-rank refinement never
return a worse matrix than they were given; every solution carries scipy's success flag and
message.  L = 1: cvxpy's nuclear-norm optimum equals K - 1 and its dual multipliers certify it.
L counts weight matrices (N = L + 1, p = 2/(L + 1)).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.maxmargin import solver as sm
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.numerics.maxmargin.spherical import code_logits, repulsion_code
from implicitbias.theory import codes as exact
from implicitbias.theory import params


def _recomputed(Z, p):
    s = np.linalg.svd(Z, compute_uv=False)
    s = s[s > Z.shape[0] * np.finfo(float).eps * s[0]]
    return float(np.sum(s**p))


@settings(max_examples=12, deadline=None)
@given(st.integers(3, 9), st.floats(1.0, 20.0), st.integers(2, 8), st.integers(0, 2**31 - 1))
def test_polish_is_feasible_honest_never_worse_and_reports_scipy(K, L, r, seed):
    p = 2 / (L + 1)
    Z0 = sm.random_gram(K, min(r, K - 1), np.random.default_rng(seed))
    sol = sm.polish(Z0, p, "gram")
    assert margins(sol.Z).min() >= 1 - 1e-9
    assert sol.objective == pytest.approx(_recomputed(sol.Z, p), rel=1e-12)
    assert sol.objective <= sm.verify(Z0, p).objective * (1 + 1e-12)
    assert isinstance(sol.success, bool) and sol.message and sol.iterations > 0
    assert "CONVERGENCE" in sol.message or "ABNORMAL" in sol.message or "LIMIT" in sol.message.upper()


@pytest.mark.parametrize("K, L, r, structure", [
    (12, 6, 3, "icosahedron"), (8, 4, 3, "square antiprism"), (10, 3, 4, "rectified 4-simplex")])
def test_coarse_polish_then_exact_refinement_reach_the_closed_form(K, L, r, structure):
    """From a coarse local solve of a rank-r repulsion code, the exact refinement lands on the
    named optimum's closed-form value (theory.codes, an independent route) to 1e-9."""
    p = 2 / (L + 1)
    start = code_logits(repulsion_code(K, r, seed=3))
    sol = sm.polish(start, p, "repulsion", sm.COARSE_SCHEDULE)  # deliberately coarse: ~1e-4 accurate
    ref = sm.refine_exact(sol)
    assert margins(ref.Z).min() >= 1 - 1e-9
    assert ref.objective == pytest.approx(_recomputed(ref.Z, p), rel=1e-12)
    assert ref.objective == pytest.approx(float(exact.objective_at(structure, K, L)), rel=1e-9)
    assert ref.rank == r and ref.message


def test_status_records_a_failed_stage():
    # maxiter 1 everywhere: L-BFGS-B stops on its iteration limit, and the solution says so
    saved = dict(sm.LOOSE), dict(sm.TIGHT)
    try:
        sm.LOOSE["maxiter"] = sm.TIGHT["maxiter"] = 1
        sol = sm.polish(sm.random_gram(6, 3, np.random.default_rng(0)), 0.5, "gram")
    finally:
        sm.LOOSE.update(saved[0])
        sm.TIGHT.update(saved[1])
    assert not sol.success and "LIMIT" in sol.message.upper()


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


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: sm.nuclear_norm_optimum(1000), "K"),
        (lambda: sm.feasible_directions(1, 3), "K"),
        (lambda: sm.feasible_directions(4, 0), "count"),
        (lambda: sm.verify(np.zeros((3, 3)), 0.5), None),
    ],
)
def test_bad_input_is_an_error_naming_it(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must" if name else "does not separate"):
        call()
    if name:
        with pytest.raises(params.ParameterError):
            call()


def test_exact_refinement_gradients_equal_finite_differences_at_a_generic_point(monkeypatch):
    """The hand-written derivatives SLSQP is given by ``refine_exact`` (objective gradient and the
    margins' Jacobian, the latter filled from a precomputed sparsity pattern) against central finite
    differences (scipy.optimize.approx_fprime) at a random point of the (A, B) parametrisation,
    K = 9, rank 3, L = 4: an independent route to the same numbers."""
    from scipy.optimize import approx_fprime

    captured = {}
    real = sm.minimize

    def spy(fun, x0, **kwargs):
        captured.update(fun=fun, x0=x0, constraint=kwargs["constraints"][0])
        return real(fun, x0, **kwargs)

    sol = sm.polish(code_logits(repulsion_code(9, 3, seed=1)), 2 / 5, "repulsion", sm.COARSE_SCHEDULE)
    monkeypatch.setattr(sm, "minimize", spy)
    sm.refine_exact(sol)
    assert sol.rank == 3 and captured["x0"].size == 9 * 3 + 6 * 3
    x = captured["x0"] + 0.05 * np.random.default_rng(7).standard_normal(captured["x0"].size)
    value, grad = captured["fun"](x)
    assert np.allclose(grad, approx_fprime(x, lambda y: captured["fun"](y)[0], 1e-7), rtol=1e-4, atol=1e-5)
    con = captured["constraint"]
    numeric = np.array([approx_fprime(x, lambda y, i=i: con["fun"](y)[i], 1e-7) for i in range(con["fun"](x).size)])
    assert con["jac"](x).shape == numeric.shape and np.allclose(con["jac"](x), numeric, rtol=1e-5, atol=1e-6)


def test_refine_until_stalled_is_never_worse_and_ends_at_a_fixed_point(monkeypatch):
    """From a rank-3 code polished at K = 9, L = 4: the repeated refinement never raises the objective,
    runs refine_exact 1-5 times, and its output is a fixed point (one more run does not improve it)."""
    calls = []
    real = sm.refine_exact
    monkeypatch.setattr(sm, "refine_exact", lambda sol, *a, **k: calls.append(1) or real(sol, *a, **k))
    p = 2 / 5
    sol = sm.polish(code_logits(repulsion_code(9, 3, 5)), p, "rank 3")
    out, runs = sm.refine_until_stalled(sol)
    assert out.objective <= sol.objective and 1 <= runs <= sm.REFINE_ROUNDS and runs == len(calls)
    calls.clear()
    again, once = sm.refine_until_stalled(out, rounds=1)
    assert again is out and once == 1 == len(calls)

