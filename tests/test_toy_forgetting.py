"""The toy experiment of Spec B: BatchNorm MLP on MNIST-1D, trained as ensembles, in the interpolating regime.

The experiment's design (``implicitbias.claims.forgetting.experiments.TOY``) promises that every low-lr SGD run
reaches 99.5% training accuracy within its horizon, with >= 3 seeds per sigma_w (slow test: the
real block).  A miniature of the experiment runs the claims end to end through a store (fast test).
"""

import dataclasses
import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.claims import Context
from implicitbias.claims.forgetting.c1_low_lr_sgd_remembers import CLAIM as C1
from implicitbias.claims.forgetting.c3_adaptive_methods_forget import CLAIM as C3
from implicitbias.claims.forgetting import HORIZONS, TOY, experiment, measure_groups
from implicitbias.numerics.metrics.forgetting_metrics import (
    norm_slope,
    repair_gap,
    run_summary,
    selected_test_acc,
    tau_interp,
)
from implicitbias.theory.params import ParameterError
from implicitbias.validation.analysis import summarise
from implicitbias.validation.init import kernel_norms, scale_init_
from implicitbias.validation.models import build_model
from implicitbias.validation.run import canonical_config

def _mini(block):
    """The toy experiment's block at sigma_w 0.25 and 2.5, seeds 0-2, 4 epochs on 120 images."""
    return tuple(canonical_config({**c, "epochs": 4, "train_size": 120, "val_size": 100, "test_size": 200})
                 for c in experiment(TOY).configs(block) if c["sigma_w"] in (0.25, 2.5) and c["seed"] in experiment(TOY).seeds[:3])


MINI = dataclasses.replace(experiment(TOY), name="toy-mini", blocks={b: _mini(b) for b in ("sgd_low", "adam")})


def test_mini_experiment_runs_the_claims_through_the_store(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = C1.evidence(measure_groups(ctx, MINI, ("sgd_low",)), MINI.name)
    v = C1.judge(ev)
    assert ev.label == "toy-mini" and ev.data.baseline.n_runs == 6
    assert v.verdict == "inconclusive" and "0/6 interpolate" in v.measured  # 4 epochs: C1 cannot judge
    assert "c1_toy-mini.png" in C1.render(ctx, ev, v)
    assert (tmp_path / "figures" / "c1_toy-mini.csv").exists()
    ev3 = C3.evidence(measure_groups(ctx, MINI, ("sgd_low", "adam")), MINI.name)
    assert C3.judge(ev3).verdict == "inconclusive"  # the baseline does not interpolate
    assert store.counts("validation.ensemble") == {"done": 2}  # sgd_low trained once, shared
    again = C1.evidence(measure_groups(ctx, MINI, ("sgd_low",))).data  # served from the store: nothing trained
    assert store.counts("validation.ensemble") == {"done": 2} and again.baseline is ev.data.baseline  # one group in ctx
    assert again.slopes.values == ev.data.slopes.values



def test_train_experiments_pools_every_experiment_once_and_leaves_missing_data_to_the_claims(store, tmp_path, monkeypatch):
    """Two plans naming sgd_low (once from each of two experiments holding the same runs) and adam: one pool
    trains each run once, and an experiment whose data files are missing is left out without an error."""
    from implicitbias.claims.forgetting import training

    calls = []
    monkeypatch.setattr(training, "train_ensembles", lambda configs, *a, **kw: calls.append(configs))
    twin = dataclasses.replace(MINI, name="toy-mini-twin")
    missing = dataclasses.replace(MINI, name="no-data", blocks={"sgd_low": tuple(
        {**c, "dataset": "fashion_mnist", "data_path": str(tmp_path / "absent")} for c in MINI.configs("sgd_low"))})
    ctx = Context(store=store, out=tmp_path, progress=False)
    training.train_experiments(ctx, [(MINI, ("sgd_low", "adam")), (twin, ("sgd_low",)), (missing, ("sgd_low",))])
    assert len(calls) == 1 and sorted(map(json.dumps, calls[0])) == sorted(
        json.dumps(c) for b in ("sgd_low", "adam") for c in MINI.configs(b))

@pytest.mark.slow
def test_every_low_lr_sgd_run_of_the_toy_experiment_interpolates(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    toy = experiment(TOY)
    (base,) = measure_groups(ctx, toy, ("sgd_low",))
    s = summarise(base)
    assert len(s.seeds) >= 3 and s.n_runs == len(toy.sigma_w) * len(toy.seeds)
    assert s.all_interpolate, [(r.sigma_w, r.seed, r.final_train_acc) for r in s.runs]


def test_scale_init_scales_kernels_and_resets_norm_layers():
    model = build_model("mlp", (1, 5, 8), 10, width=0.125)
    n1 = kernel_norms(scale_init_(model, 1.0, seed=3))
    n2 = kernel_norms(scale_init_(model, 2.5, seed=3))
    assert all(n2[k] == pytest.approx(2.5 * n1[k], rel=1e-6) for k in n1)
    # He-normal: E ||W||^2 = 2 fan_out (fan_in mode)
    assert n1["body.1"] ** 2 == pytest.approx(2 * 32, rel=0.25)
    bn = model.body[2]
    assert torch.all(bn.weight == 1) and torch.all(bn.bias == 0)
    n3 = kernel_norms(scale_init_(model, 2.5, seed=3, scale_head=False))
    assert n3["head.layers.0"] == pytest.approx(n1["head.layers.0"], rel=1e-6)
    assert n3["body.4"] == pytest.approx(n2["body.4"], rel=1e-6)
    with pytest.raises(ParameterError, match="^sigma_w must"):
        scale_init_(model, 0.0)


def test_metrics_on_a_hand_made_history():
    hist = [
        dict(epoch=1, train_acc=0.5, val_loss=2.0, val_acc=0.4, test_acc=0.41, kernel_norm=3.0),
        dict(epoch=2, train_acc=0.996, val_loss=1.0, val_acc=0.6, test_acc=0.62, kernel_norm=3.5),
        dict(epoch=3, train_acc=1.0, val_loss=1.5, val_acc=0.7, test_acc=0.69, kernel_norm=4.0),
    ]
    assert selected_test_acc(hist) == 0.62 and tau_interp(hist) == 2
    assert repair_gap(hist) == pytest.approx(0.1)
    assert tau_interp(hist[:1]) is None and repair_gap(hist[:1]) is None
    assert run_summary(hist)["final_kernel_norm"] == 4.0
    with pytest.raises(ParameterError, match="^history must"):
        selected_test_acc([])


@settings(max_examples=20, deadline=None)
@given(p=st.floats(-2, 2), c=st.floats(0.1, 10), n=st.integers(2, 6))
def test_norm_slope_recovers_a_power_law(p, c, n):
    s = np.linspace(0.1, 2.5, n)
    assert norm_slope(s, c * s**p) == pytest.approx(p, abs=1e-9)


@pytest.mark.parametrize(
    "config, name",
    [
        (dict(optimizer="adamx"), "optimizer"),
        (dict(lr=0.0), "lr"),
        (dict(sigma_w=-1.0), "sigma_w"),
        (dict(sigma_w=math.inf), "sigma_w"),
        (dict(eval_every=0), "eval_every"),
        (dict(eval_dense_until=10_000), "eval_dense_until"),
        (dict(arch="mlp2"), "arch"),
        (dict(weight_decay=1e-2, decay_on="kernels"), "decay_on"),
    ],
)
def test_bad_run_config(config, name):
    with pytest.raises(ParameterError, match=rf"^{name} must"):
        canonical_config({**experiment(TOY).configs("sgd_low")[0], **config})


def test_toy_experiment_design():
    """>= 3 seeds per sigma_w over the spec's range, ensembles, b = 16..256 for C5; C2's horizons 5x apart."""
    toy, horizons = experiment(TOY), experiment(HORIZONS)
    assert toy.ensembles and len(toy.seeds) >= 3 and min(toy.sigma_w) >= 0.1 and max(toy.sigma_w) <= 2.5
    assert all(len(toy.configs(b)) == len(toy.sigma_w) * len(toy.seeds) for b in toy.blocks)
    assert horizons.configs("sgd_low_5E")[0]["epochs"] == 5 * horizons.configs("sgd_low_E")[0]["epochs"]
    assert {c["batch_size"] for b in toy.blocks for c in toy.configs(b)} >= {16, 32, 64, 128, 256}
    assert {(c["weight_decay"], c["decay_on"]) for c in toy.configs("sgd_l2")} == {(0.03, "scale_invariant")}  # C4


@pytest.mark.parametrize("report_tier", ["default", "full"])
def test_every_claim_plan_names_blocks_its_experiments_have(report_tier):
    from implicitbias.claims import registry
    from implicitbias.claims.forgetting import GroupClaim

    for claim in (c for c in registry().values() if isinstance(c, GroupClaim)):
        for t, blocks in claim.config(report_tier).resolved():
            assert set(blocks) <= set(t.blocks), (claim.id, t.name)


def _tiny_experiment(spec=TOY):
    """Every block of a toy experiment at toy-of-the-toy size (2 sigma_w x 3 seeds, 3 epochs, 120 images; the
    long horizons 75 epochs)."""
    sizes = {16: 8, 32: 16, 64: 32, 128: 64, 256: 100}
    blocks = {}
    for name, configs in experiment(spec).blocks.items():
        long = name.endswith("5E")  # sgd_low_5E
        blocks[name] = tuple(
            canonical_config({**c, "train_size": 120, "val_size": 100, "test_size": 200, "batch_size": sizes[c["batch_size"]],
                              "epochs": 75 if long else 3, "eval_every": 25 if long else 1,
                              "eval_dense_until": 3 if long else 0})
            for c in configs if c["sigma_w"] in (0.5, 2.5) and c["seed"] in experiment(spec).seeds[:3])
    return dataclasses.replace(experiment(spec), name=experiment(spec).name.replace("toy", "toy-tiny"), blocks=blocks)


def test_report_sections_show_the_experiment_and_every_spec_b_claim(store, tmp_path, monkeypatch):
    from implicitbias.claims.forgetting import experiments
    from implicitbias.report import build_report

    tiny, horizons = _tiny_experiment(), _tiny_experiment(HORIZONS)
    monkeypatch.setattr(experiments, "experiment", lambda spec: {TOY: tiny, HORIZONS: horizons}.get(spec) or experiment(spec))
    built = build_report(tmp_path / "out", store, only=["clocks", "validation"], progress=False)
    text = built.path.read_text()
    rows = {r.claim: r for r in built.claims}
    # C7: the collapse section; C2 also on the horizons spec
    assert set(rows) == {f"C{i} (toy-tiny)" for i in (1, 3, 4, 5)} | {"C2 (toy-tiny horizons)", "C6"}
    assert rows["C6"].verdict == "not run" and "full" in rows["C6"].reason
    assert all(r.verdict in ("agrees", "disagrees", "inconclusive") for k, r in rows.items() if k != "C6")
    assert "**Experiment `toy-tiny`**" in text and "spread selected [CI]" in text
    assert (tmp_path / "out/figures/clocks_toy-tiny_spread_vs_clock.png").exists()
    runs = {json.dumps(c, sort_keys=True) for t in (tiny, horizons) for configs in t.blocks.values() for c in configs}
    assert store.counts("validation.run") == {"done": len(runs)}  # each run trained once, stored as a run
    # the runs that share a step train together: at most one ensemble per block (fewer when blocks share a step)
    assert 0 < store.counts("validation.ensemble")["done"] <= len(tiny.blocks) + len(horizons.blocks)


@pytest.fixture
def collapse_mini(monkeypatch):
    """The clock-collapse section on miniatures (MINI for the toy experiment, which C7 no longer reads): three
    SGD blocks and one Adam block of the clock-line grid (15 and 60 epochs cut to 1 and 4, 256 images)."""
    from implicitbias.claims.forgetting import experiments
    from implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads import CLAIM as C7
    from implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads import CLOCK_LINES, CollapseConfig, CollapsePlan

    grid = experiment(CLOCK_LINES)
    picked = ("sgd_T0.15_e15", "sgd_T0.6_e15", "sgd_T0.15_e60", "adam_T3_e60")
    small = {b: tuple(canonical_config({**c, "epochs": c["epochs"] // 15, "eval_every": 1, "train_size": 256,
                                        "val_size": 100, "test_size": 200})
                      for c in grid.configs(b) if c["sigma_w"] in (0.25, 2.5) and c["seed"] in grid.seeds[:3]) for b in picked}
    mini_grid = dataclasses.replace(grid, name="collapse-mini", blocks=small)
    monkeypatch.setattr(experiments, "experiment", lambda spec: {TOY: MINI, CLOCK_LINES: mini_grid}.get(spec) or experiment(spec))
    monkeypatch.setitem(C7.configs, "default", CollapseConfig((CollapsePlan(((CLOCK_LINES, None),), "toy"),)))


def test_collapse_section_shows_its_grid_and_c7_per_family(store, tmp_path, collapse_mini):
    from implicitbias.report import build_report

    built = build_report(tmp_path / "out", store, only=["collapse"], progress=False)
    text = built.path.read_text()
    rows = {r.claim: r for r in built.claims}
    assert set(rows) == {"C7 (toy: sgd)", "C7 (toy: adaptive (adam))"}
    assert rows["C7 (toy: adaptive (adam))"].verdict == "inconclusive" and "1 groups" in rows["C7 (toy: adaptive (adam))"].reason
    assert rows["C7 (toy: sgd)"].verdict in ("agrees", "disagrees", "inconclusive") and "3 groups" in rows["C7 (toy: sgd)"].measured
    assert (tmp_path / "out/figures/c7_toy_sgd.png").exists()  # drawn from 3 groups on
    assert "**Experiment `collapse-mini`**" in text and (tmp_path / "out/figures/collapse_collapse-mini_spread_vs_clock.png").exists()
    assert store.counts("validation.ensemble") == {"done": 2}  # the two 1-epoch blocks; the two 4-epoch blocks


# slow (33 s): the default tier runs the experiment through the store without the prefetch thread
@pytest.mark.slow
def test_the_prefetch_thread_trains_once_and_gives_the_same_report(tmp_path, collapse_mini, monkeypatch):
    """With a process pool the section's cells are prefetched by a second owner of the store (its own
    connection and pool): every ensemble is trained once between the two, and the rows are those of
    a report built without a prefetch (in-process, another store)."""
    from implicitbias.executors import open_executor
    from implicitbias.report import build_report
    from implicitbias.report.sections import collapse
    from implicitbias.store import Store

    owners, prefetch = [], collapse.prefetch
    monkeypatch.setattr(collapse, "prefetch", lambda ctx: (owners.append(ctx.store), prefetch(ctx)))
    with Store(tmp_path / "pooled.sqlite") as pooled, open_executor("process", 1) as executor:
        rows = build_report(tmp_path / "a", pooled, only=["collapse"], executor=executor, progress=False).claims
        assert pooled.counts("validation.ensemble") == {"done": 3}  # the prefetch trains the shown experiment (MINI) too
        assert len(owners) == 1 and owners[0] is not pooled and owners[0].owner != pooled.owner  # its own store
    with Store(tmp_path / "alone.sqlite") as alone:
        assert build_report(tmp_path / "b", alone, only=["collapse"], progress=False).claims == rows


def test_a_failing_prefetch_job_is_left_to_its_section(store, tmp_path):
    """A prefetch job that raises does not stop the next one, and nothing is raised: the section
    computes (and reports) what the job did not store."""
    from implicitbias.report import _prefetch

    done = []

    def broken(ctx):
        raise RuntimeError("no")

    _prefetch([broken, lambda ctx: done.append(ctx.tier)], store.path, "gpu", None)
    assert done == ["gpu"]
