"""Initialisation memory of a scale-invariant toy classifier (Spec B at CPU size).

Model: a BatchNorm MLP on MNIST-1D (40 inputs, 10 classes; ``mnist1d.data.make_dataset``,
generated locally, no download):

    x -> Linear(40, w, no bias) -> BN -> ReLU -> Linear(w, w, no bias) -> BN -> ReLU -> Linear(w, 10)

Both hidden kernels sit in front of a BatchNorm, so the loss is invariant to their scale: for
SGD the effective learning rate of such a kernel is eta / rho^2 (rho = ||W||_F), which is how
sigma_w can matter at all.  The head is linear (not scale-invariant) and is scaled with sigma_w
unless ``scale_head`` is false.  Initialisation: ``implicitbias.validation.init.scale_init_``.

One run is a pure function ``run_toy(config) -> record`` (deterministic given the seed, one
torch thread), so a sweep goes through ``Store.map`` (cached, resumable, parallel).  The data
set's 4000 training samples are split 3500 train / 500 validation (fixed split, seed 0);
the 1000 test samples are the test set.  Each epoch (and epoch 0, before training) records
train/val/test loss and accuracy (fractions) and the kernel norms.

Groups: runs identical except for sigma_w and seed; ``group_key`` names them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np
import torch
from implicitbias.numerics.metrics.forgetting_metrics import run_summary
from implicitbias.validation.init import kernel_norms, scale_init_
from implicitbias.numerics.optim.optimizers import make_optimizer
from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params
from implicitbias.theory.clocks import OPTIMIZERS, forgetting_clocks
from torch import nn

__all__ = ["KIND", "SIGMA_GRID", "GROUPS", "toy_data", "toy_model", "run_toy", "sweep_configs", "group_key", "group_clocks"]

KIND = "toy_forgetting/v1"
SIGMA_GRID = (0.25, 0.5, 1.0, 1.5, 2.5)
N_TRAIN = 3500

# group name -> (optimizer, lr, weight_decay); batch size and epochs set per sweep
GROUPS = {
    "sgd_low": ("sgd", 0.01, 0.0),
    "sgd_high": ("sgd", 0.5, 0.0),
    "sgd_momentum": ("sgd_momentum", 0.01, 0.0),
    "sgd_l2": ("sgd", 0.1, 5e-2),
    "adam": ("adam", 1e-2, 0.0),
    "adamw": ("adamw", 1e-2, 1e-1),
    "muon": ("muon", 0.02, 0.0),
}


@functools.lru_cache(maxsize=1)
def toy_data() -> dict[str, torch.Tensor]:
    """MNIST-1D as float32 tensors: train (3500), val (500), test (1000); standardised inputs."""
    from mnist1d.data import get_dataset_args, make_dataset

    d = make_dataset(get_dataset_args())
    x, y = np.asarray(d["x"], dtype=np.float32), np.asarray(d["y"], dtype=np.int64)
    perm = np.random.default_rng(0).permutation(len(x))
    x, y = x[perm], y[perm]
    mean, std = x.mean(0), x.std(0) + 1e-6
    xt = (np.asarray(d["x_test"], dtype=np.float32) - mean) / std
    x = (x - mean) / std
    t = torch.from_numpy
    return {
        "x_train": t(x[:N_TRAIN]),
        "y_train": t(y[:N_TRAIN]),
        "x_val": t(x[N_TRAIN:]),
        "y_val": t(y[N_TRAIN:]),
        "x_test": t(xt),
        "y_test": t(np.asarray(d["y_test"], dtype=np.int64)),
    }


def toy_model(width: int = 128) -> nn.Sequential:
    """The BatchNorm MLP of the module docstring (hidden kernels scale-invariant)."""
    width = params.integer("width", width, minimum=4, maximum=4096)
    return nn.Sequential(
        nn.Linear(40, width, bias=False),
        nn.BatchNorm1d(width),
        nn.ReLU(),
        nn.Linear(width, width, bias=False),
        nn.BatchNorm1d(width),
        nn.ReLU(),
        nn.Linear(width, 10),
    )


@torch.no_grad()
def _evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    model.eval()
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y).item()
    acc = (logits.argmax(1) == y).float().mean().item()
    model.train()
    return loss, acc


def _row(model: nn.Module, data: Mapping[str, torch.Tensor], epoch: int) -> dict:
    row = {"epoch": epoch}
    for split in ("train", "val", "test"):
        row[f"{split}_loss"], row[f"{split}_acc"] = _evaluate(model, data[f"x_{split}"], data[f"y_{split}"])
    norms = kernel_norms(model)
    row["kernel_norm"] = norms.pop("total")
    row["layer_norms"] = norms
    return row


def run_toy(config: Mapping) -> dict:
    """Train one toy run; returns ``{"history": [...], "summary": run_summary(history)}``.

    Config keys: optimizer, lr, batch_size, weight_decay, sigma_w, seed, epochs, width,
    scale_head (bool).
    """
    opt = params.choice("optimizer", config["optimizer"], OPTIMIZERS)
    lr = params.real("lr", config["lr"], minimum=0.0, open_minimum=True)
    b = params.integer("batch_size", config["batch_size"], minimum=1, maximum=N_TRAIN)
    epochs = params.integer("epochs", config["epochs"], minimum=1, maximum=10_000)
    seed = params.integer("seed", config["seed"], minimum=0)
    with torch_threads(1):
        data = toy_data()
        model = toy_model(config.get("width", 128))
        scale_init_(model, config["sigma_w"], scale_head=config.get("scale_head", True), seed=seed)
        optimizer = make_optimizer(opt, model.parameters(), lr, weight_decay=config.get("weight_decay", 0.0))
        gen = torch.Generator().manual_seed(seed)
        history = [_row(model, data, 0)]
        x, y = data["x_train"], data["y_train"]
        for epoch in range(1, epochs + 1):
            perm = torch.randperm(len(x), generator=gen)
            for i in range(0, len(x), b):
                idx = perm[i : i + b]
                if len(idx) < 2:  # BatchNorm needs two samples
                    continue
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
                optimizer.step()
            history.append(_row(model, data, epoch))
            if not np.isfinite(history[-1]["train_loss"]):
                break
        return {"history": history, "summary": run_summary(history[1:])}


def group_key(config: Mapping) -> tuple:
    """Runs with the same key differ only in sigma_w and seed."""
    return tuple(sorted((k, v) for k, v in config.items() if k not in ("sigma_w", "seed", "group")))


def group_clocks(config: Mapping) -> dict[str, float]:
    """The three cumulative clocks of a run's config at the end of training."""
    return forgetting_clocks(
        config["optimizer"], config["lr"], config["batch_size"], N_TRAIN, config["epochs"], config.get("weight_decay", 0.0)
    ).total


def sweep_configs(
    groups=tuple(GROUPS),
    sigma_grid=SIGMA_GRID,
    seeds=(0, 1),
    batch_sizes=(64,),
    epochs: int = 30,
    width: int = 128,
    scale_head: bool = True,
) -> list[dict]:
    """Configs of the sigma_w x group x batch size x seed grid (``group`` names the group)."""
    configs = []
    for g in groups:
        params.choice("group", g, GROUPS)
        opt, lr, wd = GROUPS[g]
        for b in batch_sizes:
            for s in sigma_grid:
                for seed in seeds:
                    configs.append(
                        dict(group=g, optimizer=opt, lr=lr, weight_decay=wd, batch_size=b, sigma_w=float(s),
                             seed=seed, epochs=epochs, width=width, scale_head=scale_head)
                    )
    return configs
