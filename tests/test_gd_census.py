"""Batched gradient descent on the deep UFM: the batch reproduces single runs, the census names end points.

Routes: a seed of ``batched_gd`` against ``deep_ufm.gradient_descent`` (normalised by the gradient
norm) from the same initialisation, step by step (the batch must not couple seeds); the census
of a small cell: every end point separates the classes, its polished value is a local minimum
at least the optimum, and its name is the name of the matrix recomputed here.  L counts weight
matrices (N = L + 1 factors).
"""

import math
import types

import numpy as np
import pytest
import torch

from implicitbias.numerics.maxmargin.cells import CensusCell, CensusRun
from implicitbias.numerics.maxmargin.gd_census import batched_gd, batched_loss, census_cell, census_config
from implicitbias.numerics.ufm.deep_ufm import gaussian_init, gradient_descent, loss
from implicitbias.theory import codes as exact
from implicitbias.theory.params import ParameterError


@pytest.mark.parametrize("K, L, d", [(4, 3, 8), (5, 2, 10)])
def test_a_seed_of_the_batch_is_exactly_the_single_run(K, L, d):
    Z, losses, steps = batched_gd(K, L, d, [3, 7, 11], 0.1, 0.01, 200, 0.0)
    for i, seed in enumerate([3, 7, 11]):
        run = gradient_descent(gaussian_init(K, L, d, 1, scale=0.1, seed=seed), 0.01, 200, normalized="gradient")
        assert np.abs(run.logits[-1] - Z[i]).max() < 1e-12
        assert losses[i] == pytest.approx(run.loss[-1], rel=1e-12)
    assert (steps == 200).all()


def test_batched_loss_is_the_single_loss_per_seed():
    factors = [gaussian_init(4, 2, 6, 1, scale=1.0, seed=s) for s in range(3)]
    stacked = [torch.stack([f[i] for f in factors]) for i in range(3)]
    per_seed = batched_loss(stacked)
    for i in range(3):
        assert per_seed[i].item() == pytest.approx(loss(factors[i]).item(), rel=1e-14)


def test_seeds_stop_at_the_loss_target_independently():
    _, losses, steps = batched_gd(4, 2, 8, [0, 1], 0.1, 0.01, 20000, 1e-3)
    assert (losses < 1e-3).all() and (steps < 20000).all()


def test_census_of_a_small_cell():
    rec = census_cell(census_config(4, 3, seeds=3, steps=6000))
    assert rec["unseparated"] == 0 and sum(rec["frequencies"].values()) == 3
    kgon = float(exact.objective_at("kgon", 4, 3))  # the optimum at K = 4, L = 3
    for run in rec["runs"]:
        assert run["objective"] >= kgon * (1 - 1e-9)
        assert run["gd_objective"] >= run["objective"] * (1 - 1e-9)  # polishing only goes down
    assert rec["frequencies"].get("regular 4-gon", 0) == 3
    typed = CensusCell.from_record(rec)  # the record read by attribute, every seed a CensusRun
    assert (typed.K, typed.L, typed.seeds, typed.frequencies) == (4, 3, 3, rec["frequencies"])
    assert [(r.seed, r.name, r.objective) for r in typed.runs] == [(r["seed"], r["name"], r["objective"]) for r in rec["runs"]]


def test_bad_config_names_the_parameter():
    with pytest.raises(ParameterError, match="^seeds must"):
        census_config(4, 2, seeds=0)
    with pytest.raises(ParameterError, match="^d must"):
        census_config(6, 2, d=3)


def test_census_counts_unseparated_seeds_and_reports_its_own_times():
    """A short run (100 steps of 0.05): some seeds separate with margins below 1, some do not yet;
    the census must count exactly the seeds whose batched end point has no positive margin."""
    import time

    from implicitbias.numerics.maxmargin.margin import min_margin, schatten_exponent, unit_margin

    settings = dict(seeds=6, steps=100, lr=0.05)
    Z, _, _ = batched_gd(4, 2, 8, range(6), 0.1, 0.05, 100, 1e-250)
    gamma = np.array([min_margin(z) for z in Z])
    assert (gamma <= 0).any() and ((gamma > 0) & (gamma < 1)).any()  # the design: both cases occur
    start = time.perf_counter()
    rec = census_cell(census_config(4, 2, **settings))
    wall = time.perf_counter() - start
    assert rec["unseparated"] == int((gamma <= 0).sum()) and sum(rec["frequencies"].values()) == int((gamma > 0).sum())
    assert 0 < rec["gd_seconds"] <= rec["seconds"] <= wall
    separated = [r for r in rec["runs"] if r["separated"]]
    p = schatten_exponent(2)
    for r in separated:
        s = np.linalg.svd(unit_margin(Z[r["seed"]]), compute_uv=False)
        assert r["gd_objective"] == pytest.approx(np.sum(s[s > 1e-9 * s[0]] ** p), rel=1e-6)
    moves = [(r["gd_objective"] - r["objective"]) / r["objective"] for r in separated]
    assert rec["mean_relative_move"] == pytest.approx(np.mean(moves)) and rec["mean_relative_move"] > 0


def test_settings_at_their_bounds():
    assert census_config(2, 1, seeds=1)["K"] == 2 and census_config(4, 64, seeds=4096)["seeds"] == 4096
    assert census_config(4, 2, steps=10**6)["steps"] == 10**6
    for bad, name in ((dict(K=65, L=2), "K"), (dict(K=4, L=65), "L"), (dict(K=4, L=2, scale=0.0), "scale"),
                      (dict(K=4, L=2, steps=10**6 + 1), "steps"), (dict(K=4, L=2, seeds=4097), "seeds"),
                      (dict(K=4, L=2, lr=0.0), "lr"), (dict(K=1, L=2), "K")):
        with pytest.raises(ParameterError, match=f"^{name} must"):
            census_config(**bad)


def test_census_table_counts_stalled_seeds_and_names_the_optimum():
    from implicitbias.atlas import census_markdown, census_rows

    cell = types.SimpleNamespace(K=4, L=4, value=2.639, structure="regular 4-gon")  # the PhaseCell attributes read

    def census(frequencies, runs):
        return CensusCell(K=4, L=4, d=8, scale=0.1, lr=0.005, steps=8000, loss_target=1e-250, seeds=3, runs=runs,
                          frequencies=frequencies, unseparated=sum(not r.separated for r in runs), gd_seconds=0.0,
                          seconds=0.0, mean_relative_move=math.nan)

    stalled = census({}, tuple(CensusRun(seed, False, x, 8000) for seed, x in enumerate((0.36, 0.37, 0.35))))
    mixed = census({"regular 4-gon": 1, "NC (simplex)": 1},
                   (CensusRun(0, True, 1e-250, 10, 2.64, 2.639, 2, "regular 4-gon"),
                    CensusRun(1, True, 1e-250, 10, 3.0, 3.0, 3, "NC (simplex)"), CensusRun(2, False, 0.36, 8000)))
    rows = census_rows([stalled, mixed], [cell])
    assert rows[0]["frequencies"] == "not separated after 8000 steps: 3 (loss 0.35-0.37)"
    assert rows[1]["fraction_at_optimum"] == 0.5
    assert rows[1]["mean_gd_over_optimum"] == pytest.approx((2.639 + 3.0) / 2 / 2.639)
    table = census_markdown(rows).splitlines()
    assert table[2].endswith("| - | - |") and "nan" not in "".join(table)
    assert "| 50% |" in table[3]
