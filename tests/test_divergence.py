"""A run driven to NaN is recorded as diverged (with its epoch) and the sweep goes on."""

import math

from implicitbias.validation.run import KIND
from implicitbias.validation.sweep import load_spec, run_sweep, sweep_status


def test_nan_run_is_recorded_as_diverged_and_the_sweep_continues(store):
    spec = load_spec({
        "name": "nan",
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
            # the history keeps the finite epoch 0 and the epoch where NaN/inf appeared
            assert [row["epoch"] for row in record["history"]] == [0, 1]
            last = record["history"][-1]
            assert last["train_loss"] is None or last["kernel_norm"] is None or last["val_loss"] is None
            assert [row["epoch"] for row in store.epochs(KIND, config)] == [0, 1]
        else:
            assert record["status"] == "done" and summary["diverged_epoch"] is None
            assert summary["epochs_run"] == 3 and math.isfinite(summary["final_kernel_norm"])
    # a rerun recomputes nothing: the stored records come back unchanged
    assert run_sweep(spec, store, progress=False) == records
