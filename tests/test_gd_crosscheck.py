"""Gradient descent on the full deep UFM reaches the solver's P(K, L) value (Lyu & Li 2020).

Two independent routes to the same number: normalised GD on [H, W_1, ..., W_L] (small random
init, unregularised cross-entropy, float64) and the multi-start solver of P(K, L).  For each
cell GD's final Zbar, rescaled to unit margin, must have a Schatten objective (p = 2/(L + 1),
L weight matrices, N = L + 1 factors) within TOL of the solver's best solution of the same
structure, and never beat the solver's global value by more than TOL.  The structures are
named independently (``naming.identify``) and the objectives recomputed here from an SVD.
Also the two deep-UFM fixes the cross-check needs: cross-entropy exact to ~1e-300, and normalised
descent that stops (instead of dividing by zero) when the loss underflows.
"""

import math
import time

import numpy as np
import pytest
import torch

from implicitbias.numerics.ufm.deep_ufm import cross_entropy, gradient_descent
from implicitbias.numerics.maxmargin.gd_crosscheck import crosscheck_config, gd_crosscheck
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.numerics.maxmargin.search import search
from implicitbias.theory.params import ParameterError

TOL = 0.01  # relative; GD reaches 2e-4 (K = 4, L = 3) and 2e-3 (K = 6, L = 3) by loss 1e-250


@pytest.fixture(scope="module", params=[(4, 3), (6, 3)], ids=["K4-L3", "K6-L3"])
def cell(request):
    K, L = request.param
    start = time.perf_counter()
    record = gd_crosscheck({"K": K, "L": L})
    return {**record, "wall_seconds_measured_here": time.perf_counter() - start}


def test_gd_reaches_the_solver_objective_of_its_structure(cell):
    assert cell["gd_message"].startswith("loss") and cell["gd_rank"] == 2
    Z = np.asarray(cell["gd_Z"])
    assert margins(Z).min() == pytest.approx(1.0, abs=1e-9)
    s = np.linalg.svd(Z, compute_uv=False)
    recomputed = float(np.sum(s[s > 1e-9 * s[0]] ** (2 / (cell["L"] + 1))))
    assert recomputed == pytest.approx(cell["gd_objective"], rel=1e-6)
    reference = search(cell["K"], [cell["L"]], effort=2, seed=1).best[cell["L"]]  # another effort and seed
    assert recomputed == pytest.approx(cell["solver_objective"], rel=TOL)
    assert recomputed >= reference.objective * (1 - TOL)
    assert cell["gd_polished_objective"] == pytest.approx(cell["solver_objective"], rel=1e-6)


def test_normalised_margin_approaches_the_kkt_value(cell):
    assert cell["gd_normalised_margin"] == pytest.approx(cell["solver_normalised_margin"], rel=3 * TOL)


def test_bad_config_names_the_parameter():
    with pytest.raises(ParameterError, match="scale"):
        crosscheck_config(4, 3, scale=-1.0)
    with pytest.raises(ParameterError, match="L"):
        crosscheck_config(4, 0)


def test_cross_entropy_keeps_precision_at_large_margins():
    # Z = m (I - 11^T/3): every column loses log(1 + 2 e^-m) = 2 e^-m to double precision
    for m in (40.0, 300.0):
        Z = torch.tensor(m * (np.eye(3) - 1 / 3))
        assert cross_entropy(Z).item() == pytest.approx(2 * math.exp(-m), rel=1e-12)


def test_normalised_descent_stops_cleanly_when_the_loss_underflows():
    factors = [torch.eye(3, dtype=torch.float64) * 30.0, torch.eye(3, dtype=torch.float64) * 30.0]
    run = gradient_descent(factors, 0.1, 5, normalized=True)
    assert not run.success and "underflowed" in run.message and run.loss[-1] == 0.0
    small = [torch.eye(3, dtype=torch.float64) * 3.0, torch.eye(3, dtype=torch.float64) * 3.0]
    run = gradient_descent(small, 0.1, 10_000, normalized=True, loss_target=1e-30)
    assert run.success and "loss_target" in run.message and run.loss[-1] < 1e-30 <= run.loss[-2]


def test_record_fields_are_consistent(cell):
    """The derived fields against the recorded ones: the relative gap, the time ratio, a final loss below
    the target that stopped the run."""
    assert cell["gap"] == pytest.approx((cell["gd_objective"] - cell["solver_objective"]) / cell["solver_objective"])
    assert 0 < cell["gd_seconds"] and 0 < cell["solver_seconds"]
    assert cell["gd_seconds"] + cell["solver_seconds"] <= cell["wall_seconds_measured_here"]
    assert cell["ratio"] == pytest.approx(cell["gd_seconds"] / cell["solver_seconds"])
    assert cell["gd_final_loss"] < cell["loss_target"] and 0 < cell["gd_steps"] <= cell["steps"]


def test_seed_range():
    assert crosscheck_config(4, 3, seed=2**32 - 1)["seed"] == 2**32 - 1
    with pytest.raises(ParameterError, match="^seed must"):
        crosscheck_config(4, 3, seed=2**32)
