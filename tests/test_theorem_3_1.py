"""Theorem 3.1: for L = 2, K >= 6 or L >= 3, K >= 4, NC is not a global optimum of P(K, L), yet
it stays a local optimum.  L counts weight matrices (N = L + 1, p = 2/(L + 1)).

Routes: (i) every such cell with K <= 32, L <= 12 has an explicit matrix (a closed-form code)
whose SVD objective is below K - 1 and whose exact sympy comparison agrees; (ii) the phase-cell
pipeline gives the verdict 'NC suboptimal' with a verified certificate (full grid: slow tier);
(iii) NC is a local optimum: finite-difference slopes along random feasible directions are
positive and equal the first-order formula p tr(D) (for centred D, the K - 1 unit singular
values move by tr(D) to first order and the zero one stays zero); the objective at small
feasible perturbations (centred or not) of NC exceeds K - 1.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.executors import open_executor
from implicitbias.numerics.maxmargin import codes
from implicitbias.numerics.maxmargin import solver as sm
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.numerics.maxmargin.phase import phase_cell, phase_configs, phase_diagram
from implicitbias.theory import codes as exact

REGION = [(K, L) for K in range(2, 33) for L in range(1, 13) if (L == 2 and K >= 6) or (L >= 3 and K >= 4)]


def _svd_objective(Z, p):
    s = np.linalg.svd(Z, compute_uv=False)
    s = s[s > Z.shape[0] * np.finfo(float).eps * s[0]]
    return float(np.sum(s**p))


@pytest.mark.parametrize("K, L", REGION)
def test_an_explicit_code_beats_nc_in_every_cell_of_the_theorem(K, L):
    winners = []
    for name in ("cross_polytope", "kgon"):
        Z = codes.CODES[name](K)
        assert margins(Z).min() >= 1 - 1e-12
        value = _svd_objective(Z, 2 / (L + 1))
        if value < (K - 1) * (1 - 1e-9):
            assert exact.compare_with_nc(name, K, L) == -1
            winners.append(name)
    assert winners


@pytest.mark.parametrize("K, L", [(6, 2), (7, 2), (4, 3), (5, 3), (9, 4), (12, 2), (16, 7)])
def test_phase_cells_of_the_theorem_are_certified(K, L):
    rec = phase_cell({"K": K, "L": L})
    assert rec["verdict"] == "NC suboptimal"
    best = np.array(rec["best"]["Z"])
    assert margins(best).min() >= 1 - 1e-9
    assert _svd_objective(best, 2 / (L + 1)) < K - 1
    assert rec["certificate"]["kind"] == "exact"
    assert rec["certificate"]["value"] < K - 1


@pytest.mark.slow
def test_full_grid_every_theorem_cell_is_nc_suboptimal(store):
    with open_executor("process", 2) as ex:
        records = phase_diagram(store, phase_configs(32, 12), executor=ex, progress=False)
    verdicts = {(r["K"], r["L"]): r for r in records}
    for K, L in REGION:
        rec = verdicts[(K, L)]
        assert rec["verdict"] == "NC suboptimal", (K, L)
        assert margins(np.array(rec["best"]["Z"])).min() >= 1 - 1e-9
    assert all(r["verdict"] == "NC optimal" for r in records if r["L"] == 1)


@settings(max_examples=15, deadline=None)
@given(st.integers(3, 16), st.floats(1.0, 20.0), st.integers(0, 2**31 - 1))
def test_nc_is_a_first_order_local_optimum(K, L, seed):
    p = 2 / (L + 1)
    D = sm.feasible_directions(K, 40, seed)
    gaps = np.diagonal(D, axis1=1, axis2=2)[:, None, :] - D
    assert gaps.min() >= -1e-12  # feasible at NC to first order
    slopes = sm.nc_directional_slopes(K, p, D)
    assert slopes.min() > 0
    assert np.allclose(slopes, p * np.trace(D, axis1=1, axis2=2), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("K, L", [(6, 2), (6, 4), (8, 3), (8, 8), (12, 12)])
def test_nc_beats_every_small_feasible_perturbation_while_a_better_code_exists(K, L):
    p = 2 / (L + 1)
    rng = np.random.default_rng(K * 100 + L)
    centred = sm.feasible_directions(K, 20, seed=K + L)
    shifted = centred + rng.standard_normal((20, 1, K))  # column shifts keep feasibility
    for D in np.concatenate([centred, shifted]):
        for t in np.geomspace(1e-6, 1e-2, 5):
            Z = codes.simplex_etf(K) + t * D
            assert margins(Z).min() >= 1 - 1e-12
            assert _svd_objective(Z, p) > K - 1
    assert _svd_objective(codes.cross_polytope_code(K), p) < K - 1
