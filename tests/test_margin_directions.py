"""Feasible directions at NC and the solver's status (``numerics.maxmargin.solver``), by other routes.

Routes: the directional slope of S_p at NC against first-order perturbation theory of singular
values, d/dt S_p(NC + t D) = p tr(D) for a column-centred D (NC is the projector onto 1^perp,
its singular vectors span that plane, and 1^T D = 0); feasibility of each direction read off its
gaps D_kk - D_ck >= 0, with faces sampled (about 30% zero gaps); the success flag of a polish
against scipy's own convergence message.  p = 2/(L + 1), L weight matrices.
"""

import numpy as np
import pytest

from implicitbias.numerics.maxmargin import codes
from implicitbias.numerics.maxmargin import solver as sm


def test_feasible_directions_are_centred_unit_feasible_and_sample_faces():
    K = 6
    D = sm.feasible_directions(K, 400, seed=2)
    assert D.shape == (400, K, K)
    assert np.allclose(D.sum(axis=1), 0.0, atol=1e-12)  # every column centred
    assert np.allclose(np.linalg.norm(D, axis=(1, 2)), 1.0)
    gaps = np.diagonal(D, axis1=1, axis2=2)[:, None, :] - D
    off = ~np.eye(K, dtype=bool)
    assert (gaps[:, off] >= -1e-12).all()
    zero = np.isclose(gaps[:, off], 0.0, atol=1e-12).mean()
    assert 0.25 < zero < 0.35  # faces of the cone: each gap is zero with probability 0.3


@pytest.mark.parametrize("K, p", [(5, 0.5), (7, 0.2)])
def test_directional_slopes_at_nc_are_p_times_the_trace(K, p):
    D = sm.feasible_directions(K, 6, seed=K)
    slopes = sm.nc_directional_slopes(K, p, D)
    assert slopes == pytest.approx(p * np.trace(D, axis1=1, axis2=2), rel=1e-5, abs=1e-6)
    assert (slopes > 0).all()


def test_polish_reports_scipys_success():
    Z = codes.simplex_etf(4) + 0.05 * np.random.default_rng(0).normal(size=(4, 4))
    sol = sm.polish(Z, 0.5, "perturbed NC")
    assert sol.success and "CONVERGENCE" in sol.message and sol.iterations > 0
    assert sol.objective == pytest.approx(3.0, rel=1e-9)  # back to NC (K - 1), a strict local minimum near it


def test_polish_at_infinite_depth_reaches_the_limit_objective():
    """p = 0 (L -> infinity): the objective is (rank, sum log sigma); from a perturbed pentagon the
    polish returns the pentagon's exact limit (theory.codes.limit_objective_at)."""
    from implicitbias.theory import codes as exact

    Z = codes.kgon_code(5) + 0.01 * np.random.default_rng(1).normal(size=(5, 5))
    sol = sm.polish(Z, 0.0, "perturbed pentagon")
    rank, logsum = exact.limit_objective_at("kgon", 5)
    assert sol.rank == rank and sol.objective == pytest.approx(float(logsum), rel=1e-6)
