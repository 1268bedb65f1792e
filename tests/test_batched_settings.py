"""Ensembles across settings: every run that can share a step (sigma_w x seed x optimiser, lr, momentum,
decay, schedule) trained as one model, each member still its solo run; and the one orchestration
(``validation.batched.train_ensembles``) that sweeps and claims share, writing each member's run record.
"""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.claims import Context
from implicitbias.claims.forgetting import Experiment, measure_groups
from implicitbias.store import Store
from implicitbias.theory.params import ParameterError
from implicitbias.validation import batched
from implicitbias.validation.batched import ensembles, execute_group, train_ensembles
from implicitbias.validation.trainers import EnsembleTrainer, Trainer
from implicitbias.validation.models import build_model
from implicitbias.validation.run import canonical_config, execute

ONE_THREAD = {"threads": 1}
FLOATS = ("train_loss", "val_loss", "test_loss", "kernel_norm")
COUNTS = ("train_acc", "val_acc", "test_acc")
MLP = {"dataset": "synthetic", "data_size": 300, "arch": "mlp", "width": 0.125, "epochs": 3, "batch_size": 32,
       "precision": "float64"}
# optimiser settings of several families, lr, decay, momentum and schedule all different
HYPER = [{"optimizer": "sgd", "lr": 0.1}, {"optimizer": "sgd", "lr": 0.4, "weight_decay": 1e-2},
         {"optimizer": "sgd_momentum", "lr": 0.05, "momentum": 0.5, "schedule": "cosine"},
         {"optimizer": "adam", "lr": 1e-3, "weight_decay": 1e-3}, {"optimizer": "adamw", "lr": 2e-3, "weight_decay": 1e-2},
         {"optimizer": "muon", "lr": 2e-2, "schedule": "step"},
         {"optimizer": "sgd", "lr": 0.3, "weight_decay": 1e-2, "decay_on": "scale_invariant"},
         {"optimizer": "adamw", "lr": 3e-3, "weight_decay": 1e-2, "decay_on": "scale_invariant"},
         {"optimizer": "muon", "lr": 3e-2, "weight_decay": 1e-2, "decay_on": "scale_invariant"}]


def _assert_solo(ensemble_record, config):
    """The member's record equals its solo run: floats to float64 rounding (the vmap engine sums convolutions
    in another order), the rest exactly."""
    solo = execute(config, options=ONE_THREAD)
    assert ensemble_record["status"] == solo["status"]
    assert len(ensemble_record["history"]) == len(solo["history"])
    for a, b in zip(ensemble_record["history"], solo["history"]):
        for k in FLOATS:
            assert a[k] == pytest.approx(b[k], rel=1e-9), (config["optimizer"], a["epoch"], k)
        for k in COUNTS:
            assert a[k] == pytest.approx(b[k], abs=1e-12), (config["optimizer"], a["epoch"], k)
        assert a["kernel_norms"] == pytest.approx(b["kernel_norms"], rel=1e-9)
        assert a["clocks"] == b["clocks"]
    summary = {k: v for k, v in solo["summary"].items() if "kernel_norm" not in k}
    assert {k: ensemble_record["summary"][k] for k in summary} == summary


def test_members_with_different_optimisers_lrs_decays_and_schedules_are_their_solo_runs():
    """Nine settings (decay on every parameter or on the scale-invariant kernels) x 2 sigma_w x 2 seeds
    in one folded ensemble, given in interleaved order."""
    configs = [{**MLP, **h, "sigma_w": s, "seed": seed} for s in (0.5, 2.0) for seed in (3, 11) for h in HYPER]
    records = execute_group({"runs": configs}, options=ONE_THREAD)["records"]
    assert len({r["summary"]["clocks"]["T_adapt"] for r in records}) == len(HYPER)  # each member its own clock
    for config, record in zip(configs, records):
        _assert_solo(record, config)


def test_resnet_members_with_sgd_and_adam_share_a_vmap_step():
    resnet = {"dataset": "synthetic", "data_size": 100, "width": 0.0625, "epochs": 2, "batch_size": 32,
              "precision": "float64"}
    configs = [{**resnet, "optimizer": "sgd", "lr": 0.05, "sigma_w": 0.5, "seed": 1},
               {**resnet, "optimizer": "adam", "lr": 1e-3, "sigma_w": 2.0, "seed": 2},
               {**resnet, "optimizer": "sgd", "lr": 0.05, "weight_decay": 0.1, "decay_on": "scale_invariant",
                "sigma_w": 1.0, "seed": 3}]
    for config, record in zip(configs, execute_group({"runs": configs}, options=ONE_THREAD)["records"]):
        _assert_solo(record, config)


def test_ensembles_join_runs_that_share_a_step_and_split_the_rest():
    base = canonical_config(MLP)
    runs = [canonical_config({**MLP, **h, "sigma_w": s}) for h in HYPER for s in (0.5, 1.0)]
    other = [canonical_config({**MLP, "batch_size": 16}), canonical_config({**MLP, "epochs": 4}),
             canonical_config({**MLP, "eval_every": 3}), canonical_config({**MLP, "width": 0.25})]
    groups = ensembles([*runs, base, *other])
    assert groups == [[*runs, base], *[[c] for c in other]]


@given(sizes=st.lists(st.integers(1, 30), min_size=1, max_size=6), cap=st.integers(1, 50))
def test_large_ensembles_are_cut_into_equal_parts_that_keep_settings_together(sizes, cap):
    runs = [{**MLP, "lr": 0.1 * (i + 1), "sigma_w": 0.1 * (k + 1)} for k in range(max(sizes)) for i, n in enumerate(sizes)
            if k < n]
    parts = ensembles(runs, cap)
    assert all(len(p) <= cap for p in parts) and max(map(len, parts)) - min(map(len, parts)) <= 1
    assert len(parts) == -(-len(runs) // cap)
    flat = [c for p in parts for c in p]
    assert flat == sorted(runs, key=lambda c: c["lr"])  # each setting's runs together, in the order given
    assert ensembles(runs) == [flat]


@pytest.mark.parametrize("key, value", [("batch_size", 16), ("epochs", 4), ("width", 0.25), ("precision", "float32")])
def test_members_that_cannot_share_a_step_are_refused(key, value):
    with pytest.raises(ParameterError, match="differ only in sigma_w, seed, optimizer, lr"):
        execute_group({"runs": [MLP, {**MLP, key: value, "lr": 0.5}]})


def test_each_setting_steps_its_own_consecutive_members():
    models = [build_model("mlp", (1, 5, 8), 10) for _ in range(3)]
    trainer = EnsembleTrainer(models)
    configs = [canonical_config({**MLP, "lr": lr}) for lr in (0.1, 0.2, 0.1)]
    with pytest.raises(ValueError, match="consecutive"):
        trainer.optimise(configs, [[0, 2], [1]])
    trainer.optimise(configs[:2] + [canonical_config({**MLP, "optimizer": "muon", "lr": 0.02})], [[0, 1], [2]])
    assert len(trainer.optimizers) == 2  # one SGD over members 0-1, one Muon for member 2
    assert trainer.optimizers[0].param_groups[0]["params"][0].shape[0] == 2  # a view of both members' slice


@settings(max_examples=3, deadline=None)
@given(order=st.permutations(range(4)))
def test_records_come_back_in_the_order_the_runs_were_given(order):
    configs = [{**MLP, "epochs": 1, **HYPER[i % 2], "sigma_w": 0.5 + i} for i in range(4)]
    given_order = [configs[i] for i in order]
    records = execute_group({"runs": given_order}, options=ONE_THREAD)["records"]
    for config, record in zip(given_order, records):
        assert record["summary"]["initial_kernel_norm"] == pytest.approx(
            execute(config, options=ONE_THREAD)["summary"]["initial_kernel_norm"], rel=1e-12)


def test_train_ensembles_stores_every_member_and_trains_only_what_is_missing(tmp_path, monkeypatch):
    configs = [canonical_config({**MLP, "epochs": 1, **h, "sigma_w": s}) for h in HYPER[:3] for s in (0.5, 2.0)]
    trained = []

    def spy(group, *, options=None):
        trained.append([c["lr"] for c in group["runs"]])
        return execute_group(group, options=options)

    monkeypatch.setattr(batched, "execute_group", spy)
    with Store(tmp_path / "s.sqlite") as store:
        first = train_ensembles(configs[:2], store, progress=False, options=ONE_THREAD)  # as if killed after one setting
        records = train_ensembles(configs, store, progress=False, options=ONE_THREAD)
        again = train_ensembles(configs, store, progress=False, options=ONE_THREAD)
        assert store.counts("validation.run") == {"done": len(configs)}
        assert store.counts("validation.ensemble") == {"done": 2}
    assert trained == [[0.1, 0.1], [0.4, 0.4, 0.05, 0.05]]  # the finished runs are not trained again
    assert records[:2] == first and again == records
    for config, record in zip(configs, records):
        _assert_solo(record, config)


def test_max_members_cuts_the_ensembles_of_a_sweep(tmp_path):
    from implicitbias.validation.sweep import load_spec, run_sweep

    grid = {"name": "m", "base": {**MLP, "epochs": 1, "sigma_w": [0.5, 1.0, 2.0], "seed": [0, 1]},
            "grid": [{"optimizer": "sgd", "lr": 0.05}, {"optimizer": "adam", "lr": 1e-3}],
            "options": {**ONE_THREAD, "batched": True, "max_members": 5}}
    with Store(tmp_path / "s.sqlite") as store:
        records = run_sweep(load_spec(grid), store, progress=False)
        assert store.counts("validation.ensemble") == {"done": 3} and len(records) == 12  # 12 runs: 4 + 4 + 4
    with pytest.raises(ParameterError, match="max_members"):
        load_spec({**grid, "options": {"max_members": 0}})


def test_measure_groups_writes_each_members_run_record(tmp_path):
    blocks = {"sgd": tuple(canonical_config({**MLP, "epochs": 1, "sigma_w": s, "seed": k}) for s in (0.5, 2.0) for k in (0, 1)),
              "adam": tuple(canonical_config({**MLP, "epochs": 1, **HYPER[3], "sigma_w": s, "seed": k})
                            for s in (0.5, 2.0) for k in (0, 1))}
    t = Experiment("mini", "mini", "", blocks, ONE_THREAD, ensembles=True)
    with Store(tmp_path / "s.sqlite") as store:
        ctx = Context(store=store, out=tmp_path, progress=False)
        groups = measure_groups(ctx, t, ("sgd", "adam"))
        assert store.counts("validation.run") == {"done": 8} and store.counts("validation.ensemble") == {"done": 1}
        code = store.code_of(execute)
        assert [store.get("validation.run", c, code=code) for c in blocks["adam"]] == [r for _, r in groups[1].runs]
    assert [g.setting["optimizer"] for g in groups] == ["sgd", "adam"] and all(len(g.runs) == 4 for g in groups)


def test_stacked_views_step_in_place():
    """A setting's optimiser steps views of the stacked tensors: the trainer's own parameters move."""
    models = [build_model("mlp", (1, 5, 8), 10) for _ in range(2)]
    trainer = EnsembleTrainer(models)
    trainer.optimise([canonical_config({**MLP, "lr": 0.5})] * 2, [[0, 1]])
    before = [p.detach().clone() for p in trainer.parameters()]
    trainer.train_mode(True)
    trainer.zero_grad()
    trainer.members(torch.randn(2, 6, 1, 5, 8)).sum().backward()
    trainer.step()
    assert any(not torch.equal(a, p) for a, p in zip(before, trainer.parameters()))


def _decay_step(trainer, config, grad=0.0):
    """Every parameter before and after one step of ``config``'s optimiser with every gradient entry
    equal to ``grad``."""
    trainer.optimise([config] * trainer.size, [list(range(trainer.size))])
    before = {n: p.detach().clone() for n, p in zip(trainer.parameter_names(), trainer.parameters())}
    for p in trainer.parameters():
        p.grad = torch.full_like(p, grad)
    trainer.step()
    return before, dict(zip(trainer.parameter_names(), trainer.parameters()))


@pytest.mark.parametrize("optimizer", ["sgd", "adamw", "muon"])
@pytest.mark.parametrize("arch", ["mlp", "resnet20"])
def test_decay_acts_on_the_scale_invariant_kernels_only(optimizer, arch):
    """Closed form of one step with every gradient entry g: a decayed tensor becomes
    (1 - lr lambda) theta - lr u, the rest theta - lr u, with u = g for SGD (coupled L2: theta - lr (g +
    lambda theta)) and u = g / (|g| + eps) for AdamW's first step (decoupled decay); Muon at g = 0
    (its orthogonalised step has no closed form here, so only its decay moves).  The decayed tensors
    under ``scale_invariant`` are the kernels a BatchNorm follows, named here by hand (the MLP's two
    hidden Linear layers, every conv of the ResNet), never BatchNorm gamma / beta or the head."""
    lr, lam, grad = 0.1, 0.5, 0.0 if optimizer == "muon" else 1.0
    config = canonical_config({**MLP, "optimizer": optimizer, "lr": lr, "weight_decay": lam, "decay_on": "scale_invariant"})
    models = [build_model(arch, (1, 8, 8), 10) for _ in range(2 if arch == "mlp" else 1)]
    trainer = EnsembleTrainer(models) if arch == "mlp" else Trainer(models[0])
    invariant = ({"body.1.weight", "body.4.weight"} if arch == "mlp" else
                 {f"{n}.weight" for n, m in models[0].named_modules() if isinstance(m, torch.nn.Conv2d)})
    before, after = _decay_step(trainer, config, grad)
    assert set(before) > invariant and "head.layers.0.weight" not in invariant
    for name in before:
        factor = 1 - lr * lam if name in invariant else 1.0
        torch.testing.assert_close(after[name], factor * before[name] - lr * grad, rtol=1e-6, atol=1e-7, msg=name)


def test_decay_on_all_decays_every_parameter_and_is_checked():
    lr, lam = 0.1, 0.5
    config = canonical_config({**MLP, "lr": lr, "weight_decay": lam})
    assert config["decay_on"] == "all"
    before, after = _decay_step(EnsembleTrainer([build_model("mlp", (1, 8, 8), 10) for _ in range(2)]), config)
    for name in before:
        torch.testing.assert_close(after[name], (1 - lr * lam) * before[name], rtol=1e-6, atol=0, msg=name)
    assert canonical_config({**MLP, "decay_on": "scale_invariant"})["decay_on"] == "all"  # no decay to place
    with pytest.raises(ParameterError, match="^decay_on must be one of all, scale_invariant"):
        canonical_config({**MLP, "weight_decay": lam, "decay_on": "kernels"})
