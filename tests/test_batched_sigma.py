"""Ensembles (every sigma_w x seed of a setting as one vectorised model) against solo runs.

The folded engine (the toy MLP) must give every member bit-for-bit its solo run in float64, for
every optimiser: a solo run of the toy MLP is that engine with one member, and a member's numbers
must not depend on the ensemble it is in (this holds on any CPU, since both compute alike).  The
plain ``nn.Module`` route (another BLAS kernel: ``addmm`` instead of ``bmm``) and the vmap engine
(convolutional nets) equal them to float64 rounding.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.theory.params import ParameterError
from implicitbias.validation.batched import execute_group
from implicitbias.validation.trainers import EnsembleTrainer, Trainer, folds
from implicitbias.validation import run as run_mod
from implicitbias.validation.models import build_model
from implicitbias.validation.run import execute
from implicitbias.validation.sweep import load_spec, run_sweep

ONE_THREAD = {"threads": 1}
KEYS = ("train_loss", "train_acc", "val_loss", "val_acc", "test_loss", "test_acc", "kernel_norm")
MLP = {"dataset": "synthetic", "data_size": 300, "arch": "mlp", "width": 0.125, "epochs": 2, "batch_size": 32,
       "precision": "float64"}
RESNET = {"dataset": "synthetic", "data_size": 100, "width": 0.0625, "epochs": 2, "batch_size": 32,
          "precision": "float64", "crop_padding": 1, "flip": True}


def _assert_same(a, b, exact):
    assert a["status"] == b["status"] and len(a["history"]) == len(b["history"])
    for ra, rb in zip(a["history"], b["history"]):
        for k in KEYS:
            if exact:
                assert ra[k] == rb[k], (ra["epoch"], k, ra[k], rb[k])
            else:
                assert ra[k] == pytest.approx(rb[k], **FLOAT64_ROUTES), (ra["epoch"], k)
        assert ra["kernel_norms"] == rb["kernel_norms"] if exact else ra["kernel_norms"] == pytest.approx(rb["kernel_norms"], **FLOAT64_ROUTES)


@pytest.mark.parametrize("optimizer, lr, wd, decay_on", [
    ("sgd", 0.1, 0.0, "all"), ("sgd_momentum", 0.05, 1e-3, "all"), ("nesterov", 0.05, 0.0, "all"),
    ("adam", 1e-3, 1e-3, "all"), ("adamw", 1e-3, 1e-2, "all"), ("rmsprop", 1e-3, 0.0, "all"), ("sign", 1e-3, 0.0, "all"),
    ("muon", 2e-2, 1e-3, "all"), ("sgd", 0.3, 1e-2, "scale_invariant"), ("adamw", 1e-3, 1e-2, "scale_invariant"),
    ("muon", 2e-2, 1e-2, "scale_invariant")])
def test_folded_ensemble_members_are_their_solo_runs_bit_for_bit(optimizer, lr, wd, decay_on):
    """sigma_w x seed members (different minibatch orders) of the toy MLP, float64, == not approx."""
    configs = [{**MLP, "optimizer": optimizer, "lr": lr, "weight_decay": wd, "decay_on": decay_on, "sigma_w": s,
                "seed": seed} for s in (0.5, 2.0) for seed in (3, 11)]
    ensemble = execute_group({"runs": configs}, options=ONE_THREAD)["records"]
    for config, record in zip(configs, ensemble):
        _assert_same(execute(config, options=ONE_THREAD), record, exact=True)


# float64 after 2 epochs of ~10 steps: products summed in another order differ by a few ulp (1e-16 relative)
# per step, and training compounds it; 1e-9 relative is a million times that and far below any effect
FLOAT64_ROUTES = {"rel": 1e-9, "abs": 1e-12}


@pytest.mark.parametrize("optimizer, lr, decay", [("sgd", 0.1, {}), ("adam", 1e-3, {}), ("muon", 2e-2, {}),
                                                  ("sgd", 0.1, {"weight_decay": 0.05, "decay_on": "scale_invariant"})])
def test_folded_solo_run_equals_the_plain_module_to_rounding(optimizer, lr, decay):
    """Independent route: the nn.Module forward and autograd (``Trainer``, its parameters named by
    ``named_parameters``) against the folded engine (named by the stacked state)."""
    config = run_mod.canonical_config({**MLP, "optimizer": optimizer, "lr": lr, "sigma_w": 1.5, "seed": 5, **decay})
    data = run_mod.dataset_for(config)
    with run_mod.torch_threads(1):
        model = run_mod.build(config, data, torch.device("cpu"), torch.float64)
        (plain,) = run_mod.train([config], Trainer(model), data, torch.device("cpu"))
    folded = execute(config, options=ONE_THREAD)
    assert folded["history"][-1]["train_acc"] > 0.15  # it learnt something: the comparison is not of two idle runs
    _assert_same(plain, folded, exact=False)


@settings(max_examples=2, deadline=None)
@given(optimizer=st.sampled_from([("sgd_momentum", 0.05), ("adam", 1e-3)]), seeds=st.lists(st.integers(0, 50), min_size=1,
       max_size=2, unique=True), sigmas=st.lists(st.sampled_from([0.25, 1.0, 2.5]), min_size=1, max_size=2, unique=True))
def test_vmap_ensemble_of_resnets_equals_solo_runs(optimizer, seeds, sigmas):
    name, lr = optimizer
    configs = [{**RESNET, "optimizer": name, "lr": lr, "seed": k, "sigma_w": s} for s in sigmas for k in seeds]
    if len(configs) == 1:
        configs.append({**configs[0], "sigma_w": 0.5})
    ensemble = execute_group({"runs": configs}, options=ONE_THREAD)["records"]
    for config, record in zip(configs, ensemble):
        _assert_same(execute(config, options=ONE_THREAD), record, exact=False)


def test_engine_choice():
    assert folds(build_model("mlp", (1, 5, 8), 10)) and not folds(build_model("resnet9", (1, 8, 8), 10))
    models = [build_model("mlp", (1, 5, 8), 10, head_depth=2) for _ in range(2)]
    assert EnsembleTrainer(models).engine == "folded" and EnsembleTrainer(models, "vmap").engine == "vmap"
    with pytest.raises(ParameterError, match="engine folded"):
        EnsembleTrainer([build_model("resnet9", (1, 8, 8), 10)] * 2, "folded")


def test_deep_head_mlp_folds_exactly():
    configs = [{**MLP, "head_depth": 3, "head_width": 16, "head_activation": "relu", "optimizer": "sgd", "lr": 0.05,
                "sigma_w": s, "seed": 0} for s in (0.5, 1.5)]
    for config, record in zip(configs, execute_group({"runs": configs}, options=ONE_THREAD)["records"]):
        _assert_same(execute(config, options=ONE_THREAD), record, exact=True)


def test_batched_sweep_writes_the_same_run_records(tmp_path):
    from implicitbias.store import Store

    grid = {"name": "b", "base": {**MLP, "sigma_w": [0.5, 2.0], "seed": [0, 1], "epochs": 1},
            "grid": [{"optimizer": "sgd", "lr": 0.05}, {"optimizer": "muon", "lr": 0.02}], "options": ONE_THREAD}
    with Store(tmp_path / "one.sqlite") as one, Store(tmp_path / "two.sqlite") as two:
        sequential = run_sweep(load_spec(grid), one, progress=False)
        together = run_sweep(load_spec({**grid, "options": {**ONE_THREAD, "batched": True}}), two, progress=False)
        assert two.counts("validation.ensemble") == {"done": 1}  # both settings share a step: 2 x 2 sigma_w x 2 seeds
    for a, b in zip(sequential, together):
        _assert_same(a, b, exact=True)


def test_members_must_differ_only_in_sigma_w_and_seed():
    with pytest.raises(ParameterError, match="differ only in sigma_w, seed, optimizer"):
        execute_group({"runs": [{**MLP, "sigma_w": 1.0}, {**MLP, "sigma_w": 2.0, "batch_size": 16}]})
    with pytest.raises(ParameterError, match="non-empty"):
        execute_group({"runs": []})


def test_stacked_kernels_start_proportional_to_sigma_w():
    """Same seed: member kernels are sigma_w times one He draw."""
    from implicitbias.validation.init import scale_init_

    models = [scale_init_(build_model("mlp", (1, 5, 8), 10).double(), s, seed=4) for s in (0.5, 1.5)]
    trainer = EnsembleTrainer(models)
    for name, p in trainer.params.items():
        if name.endswith("weight") and p.ndim == 3:
            torch.testing.assert_close(p[1], 3.0 * p[0])
