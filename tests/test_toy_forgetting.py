"""The scale-invariant toy classifier: low-LR SGD remembers sigma_w, Adam and SGD + L2 forget.

Stated tolerances (measured on MNIST-1D, BatchNorm MLP; sigma_w in {0.25, 2.5}; 2 seeds):
spread(low-LR SGD) exceeds spread(Adam) and spread(SGD + L2) by at least 0.08 (8 accuracy
points) in the mean over seeds; the final-norm slope is > 0.85 for low-LR SGD (final norm tracks
the initial one) and < 0.5 for Adam and SGD + L2 (slow tier, 20 epochs and 4 sigma_w: < 0.3).
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from implicitbias.validation.toy_analysis import group_rows, organisation
from implicitbias.numerics.metrics.forgetting_metrics import (
    norm_slope,
    repair_gap,
    run_summary,
    selected_test_acc,
    tau_interp,
)
from implicitbias.validation.init import kernel_norms, scale_init_
from implicitbias.validation.toy import KIND, run_toy, sweep_configs, toy_model
from implicitbias.theory.params import ParameterError


def by_group(rows):
    return {r["label"].split()[0]: r for r in rows}


def test_low_lr_sgd_remembers_adam_and_l2_forget(store):
    configs = sweep_configs(groups=("sgd_low", "adam", "sgd_l2"), sigma_grid=(0.25, 2.5), seeds=(0, 1), epochs=10, width=64)
    records = store.map(KIND, run_toy, configs, progress=False)
    rows = by_group(group_rows(list(zip(configs, records))))
    low, adam, l2 = rows["sgd_low"], rows["adam"], rows["sgd_l2"]
    assert low["spread"] > adam["spread"] + 0.08 and low["spread"] > l2["spread"] + 0.08, rows
    assert low["norm_slope"] > 0.85 and adam["norm_slope"] < 0.5 and l2["norm_slope"] < 0.5, rows
    # a second pass is served from the store (same records, nothing recomputed)
    assert store.map(KIND, run_toy, configs, progress=False) == records


@pytest.mark.slow
def test_full_sweep_orders_by_clock(store):
    configs = sweep_configs(sigma_grid=(0.25, 0.5, 1.0, 2.5), seeds=(0, 1), epochs=20)
    rows = group_rows(list(zip(configs, store.map(KIND, run_toy, configs, progress=False))))
    g = by_group(rows)
    for name in ("adam", "adamw", "muon", "sgd_l2"):
        assert g["sgd_low"]["spread"] > g[name]["spread"] + 0.08, (name, g)
        assert g[name]["norm_slope"] < 0.3, (name, g)
    assert g["sgd_low"]["norm_slope"] > 0.85
    assert organisation(rows)["governing_spearman"] < 0


def test_scale_init_scales_kernels_and_resets_norm_layers():
    model = toy_model(32)
    n1 = kernel_norms(scale_init_(model, 1.0, seed=3))
    n2 = kernel_norms(scale_init_(model, 2.5, seed=3))
    assert all(n2[k] == pytest.approx(2.5 * n1[k], rel=1e-6) for k in n1)
    # He-normal: E ||W||^2 = 2 fan_out (fan_in mode)
    assert n1["0"] ** 2 == pytest.approx(2 * 32, rel=0.15)
    assert torch.all(model[1].weight == 1) and torch.all(model[1].bias == 0) and torch.all(model[6].bias == 0)
    n3 = kernel_norms(scale_init_(model, 2.5, seed=3, scale_head=False))
    assert n3["6"] == pytest.approx(n1["6"], rel=1e-6) and n3["3"] == pytest.approx(n2["3"], rel=1e-6)
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
        (dict(batch_size=10**6), "batch_size"),
        (dict(sigma_w=-1.0), "sigma_w"),
        (dict(sigma_w=math.inf), "sigma_w"),
    ],
)
def test_bad_run_config(config, name):
    base = sweep_configs(groups=("sgd_low",), sigma_grid=(1.0,), seeds=(0,), epochs=1)[0]
    with pytest.raises(ParameterError, match=rf"^{name} must"):
        run_toy({**base, **config})
