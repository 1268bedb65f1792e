"""A sigma_w group trained as one vmap-ed model equals the same runs trained one by one (same seeds)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.theory.params import ParameterError
from implicitbias.validation.batched import execute_group
from implicitbias.validation.run import execute
from implicitbias.validation.sweep import load_spec, run_sweep

BASE = {"dataset": "synthetic", "data_size": 100, "width": 0.0625, "epochs": 2, "batch_size": 32,
        "precision": "float64", "crop_padding": 1, "flip": True}
ONE_THREAD = {"threads": 1}
KEYS = ("train_loss", "train_acc", "val_loss", "val_acc", "test_loss", "test_acc", "kernel_norm")


def _assert_same(a, b):
    assert a["status"] == b["status"]
    assert len(a["history"]) == len(b["history"])
    for ra, rb in zip(a["history"], b["history"]):
        for k in KEYS:
            assert ra[k] == pytest.approx(rb[k], rel=1e-9, abs=1e-12), (ra["epoch"], k)
        for layer, v in ra["kernel_norms"].items():
            assert v == pytest.approx(rb["kernel_norms"][layer], rel=1e-9)


@settings(max_examples=2, deadline=None)
@given(
    optimizer=st.sampled_from([("sgd_momentum", 0.05), ("adam", 1e-3), ("adamw", 1e-3)]),
    seed=st.integers(0, 50),
    sigmas=st.lists(st.sampled_from([0.25, 0.5, 1.0, 2.0, 2.5]), min_size=2, max_size=3, unique=True),
)
def test_batched_group_equals_one_by_one(optimizer, seed, sigmas):
    name, lr = optimizer
    configs = [{**BASE, "optimizer": name, "lr": lr, "seed": seed, "sigma_w": s, "weight_decay": 1e-3} for s in sigmas]
    batched = execute_group({"runs": configs}, options=ONE_THREAD)["records"]
    for config, record in zip(configs, batched):
        _assert_same(execute(config, options=ONE_THREAD), record)


def test_batched_sweep_writes_the_same_run_records(tmp_path):
    from implicitbias.store import Store

    grid = {"name": "b", "base": {**BASE, "sigma_w": [0.5, 2.0], "epochs": 1},
            "grid": [{"optimizer": "sgd", "lr": 0.05}, {"optimizer": "muon", "lr": 0.02}], "options": ONE_THREAD}
    with Store(tmp_path / "one.sqlite") as one, Store(tmp_path / "two.sqlite") as two:
        sequential = run_sweep(load_spec(grid), one, progress=False)
        together = run_sweep(load_spec({**grid, "options": {**ONE_THREAD, "batched": True}}), two, progress=False)
        assert two.counts("validation.sigma_group") == {"done": 2}
    for a, b in zip(sequential, together):
        _assert_same(a, b)


def test_group_must_differ_only_in_sigma_w():
    with pytest.raises(ParameterError, match="differ only in sigma_w"):
        execute_group({"runs": [{**BASE, "sigma_w": 1.0}, {**BASE, "sigma_w": 2.0, "lr": 0.5}]})


def test_stacked_parameters_are_independent_copies():
    """The G blocks start as sigma_w times one He draw (same seed), i.e. exactly proportional."""
    from implicitbias.validation.batched import StackedTrainer
    from implicitbias.validation.run import build, canonical_config, dataset_for

    configs = [canonical_config({**BASE, "sigma_w": s}) for s in (0.5, 1.5)]
    data = dataset_for(configs[0])
    trainer = StackedTrainer([build(c, data, torch.device("cpu"), torch.float64) for c in configs])
    for p in trainer.params.values():
        if p.ndim >= 3:  # kernels (stacked): block 1 = 3 x block 0
            torch.testing.assert_close(p[1], 3.0 * p[0])
