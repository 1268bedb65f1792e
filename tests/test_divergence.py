"""Divergence as users mean it: non-finite values, a loss running away from its start, or accuracy at
chance after warm-up; recorded with its epoch and reason, counted and left out by the analysis."""

import math

import pytest
from spec_b_records import group, remembering

from implicitbias.claims.forgetting.c1_low_lr_sgd_remembers import CLAIM as C1
from implicitbias.validation.analysis import group_runs, summarise
from implicitbias.validation.run import CHANCE_MARGIN, KIND, LOSS_BOUND, divergence
from implicitbias.validation.sweep import load_spec, run_sweep, sweep_status

ROW = {"train_loss": 2.0, "train_acc": 0.5, "val_loss": 2.0, "kernel_norm": 10.0}


@pytest.mark.parametrize("row, epoch, why", [
    ({**ROW, "train_loss": None}, 1, "non-finite"),
    ({**ROW, "val_loss": math.inf}, 1, "non-finite"),
    ({**ROW, "kernel_norm": math.nan}, 1, "non-finite"),
    ({**ROW, "train_loss": LOSS_BOUND * 2.3 + 0.01}, 1, "x its start"),
    ({**ROW, "train_acc": 0.1 + CHANCE_MARGIN}, 6, "at chance"),
])
def test_each_reason(row, epoch, why):
    assert why in divergence(row, initial_loss=2.3, num_classes=10, epoch=epoch, warmup=5)


@pytest.mark.parametrize("row, epoch", [
    (ROW, 1),
    ({**ROW, "train_loss": LOSS_BOUND * 2.3 - 0.01}, 1),  # high, but under the bound
    ({**ROW, "train_acc": 0.1}, 5),  # at chance, but still warming up
    ({**ROW, "train_acc": 0.1 + CHANCE_MARGIN + 0.01}, 50),  # just above chance
    ({"train_loss": 2.0, "train_acc": 0.5}, 3),  # an epoch that was not evaluated
])
def test_healthy_rows(row, epoch):
    assert divergence(row, initial_loss=2.3, num_classes=10, epoch=epoch, warmup=5) is None


def test_runaway_and_nan_runs_are_recorded_with_epoch_and_reason_and_the_sweep_continues(store):
    spec = load_spec({
        "name": "div",
        "base": {"dataset": "synthetic", "data_size": 120, "width": 0.0625, "epochs": 3, "batch_size": 32,
                 "sigma_w": [0.5, 1.0], "optimizer": "sgd"},
        "grid": [{"lr": 1e12}, {"lr": 0.05}],
        "options": {"threads": 1},
    })
    records = run_sweep(spec, store, progress=False)
    assert sweep_status(spec, store) == {"done": 4, "partial": 0, "missing": 0}
    for config, record in zip(spec.configs, records):
        summary = record["summary"]
        if config["lr"] > 1:
            assert record["status"] == "diverged" and summary["diverged_epoch"] == 1
            assert "non-finite" in summary["diverged_reason"] or "x its start" in summary["diverged_reason"]
            assert [row["epoch"] for row in record["history"]] == [0, 1]
            assert [row["epoch"] for row in store.epochs(KIND, config)] == [0, 1]
        else:
            assert record["status"] == "done" and summary["diverged_epoch"] is None
            assert summary["epochs_run"] == 3 and math.isfinite(summary["final_kernel_norm"])
    assert run_sweep(spec, store, progress=False) == records  # a rerun recomputes nothing


def test_a_run_at_chance_after_warm_up_stops_as_diverged(store):
    """lr so small nothing is learned: at chance after the warm-up of max(5, epochs / 4) epochs."""
    spec = load_spec({"name": "chance", "base": {"dataset": "synthetic", "data_size": 200, "arch": "mlp",
                                                  "width": 0.0625, "epochs": 8, "batch_size": 32, "sigma_w": 2.5,
                                                  "optimizer": "sgd", "lr": 1e-9}, "options": {"threads": 1}})
    (record,) = run_sweep(spec, store, progress=False)
    assert record["status"] == "diverged" and 6 <= record["summary"]["diverged_epoch"] <= 8
    assert "at chance" in record["summary"]["diverged_reason"]


def test_analysis_counts_diverged_runs_and_leaves_them_out():
    wild = group(accuracy=lambda s, k: 0.9 if (s, k) == (2.5, 0) else remembering(s, k),
                 diverged=lambda s, k: (3, "training loss 1e17 > 10 x its start") if (s, k) == (2.5, 0) else None)
    (g,) = group_runs(wild)
    s = summarise(g)
    assert s.n_diverged == 1 and s.n_runs == 16
    kept = [r for r in s.runs if r.kept]
    assert len(kept) == 15 and all(r.diverged_epoch is None for r in kept)
    # the diverged run's 90% accuracy does not enter the spread: seed-mean spread unchanged
    clean = summarise(group_runs(group(accuracy=remembering))[0])
    assert s.spread_selected.estimate == pytest.approx(clean.spread_selected.estimate, abs=0.5)
    v = C1.judge(C1.evidence([g], "x"))
    assert "1 diverged (left out: sigma_w 2.5 seed 0 at epoch 3" in v.measured


def test_a_run_non_finite_at_initialisation_is_diverged_at_epoch_0(store):
    """ResNet-20 at sigma_w 1000 overflows before any step (the Fashion-MNIST tier met this with ResNet-110
    at sigma_w 2.5): recorded as diverged at epoch 0 with its reason, not an error; analysis leaves it out."""
    spec = load_spec({"name": "init", "base": {"dataset": "synthetic", "data_size": 60, "arch": "resnet20",
                                               "width": 0.0625, "epochs": 2, "batch_size": 32,
                                               "sigma_w": [1.0, 1000.0], "optimizer": "sgd", "lr": 0.05},
                      "options": {"threads": 1}})
    healthy, overflowed = run_sweep(spec, store, progress=False)
    assert healthy["status"] == "done" and healthy["summary"]["epochs_run"] == 2
    assert overflowed["status"] == "diverged" and overflowed["summary"]["diverged_epoch"] == 0
    assert "non-finite" in overflowed["summary"]["diverged_reason"]
    assert [row["epoch"] for row in overflowed["history"]] == [0]
    (group,) = group_runs(list(zip(spec.configs, [healthy, overflowed])))
    summary = summarise(group)
    assert summary.n_diverged == 1 and [r.kept for r in summary.runs] == [True, False]
