"""One training run of the forgetting experiments: canonical config -> record (Spec B, section 1).

A config is a flat dict (see :data:`DEFAULTS`); :func:`canonical_config` fills the defaults,
validates every entry (one ``ParameterError`` naming the entry) and returns the dict whose hash
keys the run in the store.  :func:`execute` trains it and returns the record::

    {"status": "done" | "diverged", "diverged_epoch": int | None,
     "history": [row per epoch, epoch 0 = at initialisation],
     "summary": {selected_test_acc, tau_interp, repair_gap, initial/final kernel norm, clocks, ...}}

Each history row holds train/val/test loss and accuracy (train: running mean over the epoch's
minibatches in training mode; epoch 0: evaluated on the first len(val) training images), the
Frobenius norm of every kernel and their total (``kernel_norm``), and the cumulative clocks
T_SGD = (1/b) sum eta_k^2, T_L2 = lambda sum eta_k, T_adapt = sum eta_k up to that epoch
(``implicitbias.theory.clocks``).  A run whose loss or weights become NaN/inf stops and is
recorded as ``diverged`` with that epoch.

Initialisation: every kernel sigma_w x He normal with the run's seed (the same draw for every
sigma_w), BatchNorm gamma 1 / beta 0, biases 0 (``implicitbias.validation.init``).  The seed also
drives the minibatch order and augmentation.  Runtime options that do not change the numbers
(device, threads, channels_last, compile) are passed apart from the config and not hashed.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping

import torch

from implicitbias.numerics.metrics.forgetting_metrics import run_summary
from implicitbias.validation.init import kernel_norms, scale_init_
from implicitbias.numerics.optim.optimizers import OPTIMIZERS, make_optimizer
from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params
from implicitbias.theory.clocks import forgetting_clocks, steps_per_epoch
from implicitbias.theory.schedules import SCHEDULES, schedule
from implicitbias.validation.data import DATASETS, ImageData, batches, dataset_path_problem, load_dataset
from implicitbias.validation.models import ARCHITECTURES, HEAD_ACTIVATIONS, build_model

__all__ = ["DEFAULTS", "KIND", "PRECISIONS", "canonical_config", "execute", "dataset_for", "Trainer"]

KIND = "validation.run"
PRECISIONS = ("float32", "float64", "bf16")
MAX_EPOCHS = 100_000

DEFAULTS: dict = {
    "dataset": "digits",
    "data_path": None,
    "data_seed": 0,
    "data_size": None,
    "train_size": None,
    "val_size": None,
    "test_size": None,
    "crop_padding": 0,
    "flip": False,
    "arch": "resnet9",
    "width": 1.0,
    "head_depth": 1,
    "head_width": None,
    "head_activation": "linear",
    "sigma_w": 1.0,
    "scale_head": True,
    "optimizer": "sgd",
    "lr": 0.01,
    "momentum": None,
    "weight_decay": 0.0,
    "schedule": "constant",
    "batch_size": 128,
    "epochs": 10,
    "seed": 0,
    "precision": "float32",
}


def canonical_config(config: Mapping) -> dict:
    """``config`` with defaults filled in and every entry checked (``ParameterError`` otherwise)."""
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise params.ParameterError(f"run config key must be one of {', '.join(DEFAULTS)}; got {unknown[0]!r}")
    c = {**DEFAULTS, **config}
    params.choice("dataset", c["dataset"], DATASETS)
    problem = dataset_path_problem(c["dataset"], c["data_path"])
    if problem:
        raise params.ParameterError(problem)
    c["data_seed"] = params.seed("data_seed", c["data_seed"])
    for key in ("data_size", "train_size", "val_size", "test_size"):
        if c[key] is not None:
            c[key] = params.integer(key, c[key], minimum=2, maximum=10**8)
    c["crop_padding"] = params.integer("crop_padding", c["crop_padding"], minimum=0, maximum=64)
    c["flip"] = bool(c["flip"])
    params.choice("arch", c["arch"], ARCHITECTURES)
    c["width"] = params.real("width", c["width"], minimum=0.0, maximum=64.0, open_minimum=True)
    c["head_depth"] = params.integer("head_depth", c["head_depth"], minimum=1, maximum=64)
    if c["head_width"] is not None:
        c["head_width"] = params.integer("head_width", c["head_width"], minimum=1, maximum=1 << 16)
    params.choice("head_activation", c["head_activation"], HEAD_ACTIVATIONS)
    c["sigma_w"] = params.real("sigma_w", c["sigma_w"], minimum=0.0, maximum=1e3, open_minimum=True)
    c["scale_head"] = bool(c["scale_head"])
    params.choice("optimizer", c["optimizer"], OPTIMIZERS)
    c["lr"] = params.real("lr", c["lr"], minimum=0.0, open_minimum=True)
    if c["momentum"] is not None:
        c["momentum"] = params.real("momentum", c["momentum"], minimum=0.0, maximum=0.9999)
    c["weight_decay"] = params.real("weight_decay", c["weight_decay"], minimum=0.0)
    params.choice("schedule", c["schedule"], SCHEDULES)
    c["batch_size"] = params.integer("batch_size", c["batch_size"], minimum=1, maximum=1 << 20)
    c["epochs"] = params.integer("epochs", c["epochs"], minimum=1, maximum=MAX_EPOCHS)
    c["seed"] = params.seed("seed", c["seed"])
    params.choice("precision", c["precision"], PRECISIONS)
    return c


@functools.lru_cache(maxsize=4)
def _cached_dataset(name, path, seed, size, train_size, val_size, test_size) -> ImageData:
    return load_dataset(
        name, path=path, seed=seed, size=size, train_size=train_size, val_size=val_size, test_size=test_size
    )


def dataset_for(config: Mapping) -> ImageData:
    """The dataset of a canonical config (cached per process, on the CPU, float32)."""
    c = config
    return _cached_dataset(c["dataset"], c["data_path"], c["data_seed"], c["data_size"], c["train_size"], c["val_size"], c["test_size"])


def resolve_device(device: str | None) -> torch.device:
    """``device`` as a torch device; ``None`` or ``auto``: cuda when available, else cpu."""
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    allowed = "device must be auto, cpu, cuda or cuda:N"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise params.ParameterError(f"{allowed}; got {device!r}") from None
    if dev.type not in ("cpu", "cuda"):  # meta, xla, ...: torch devices, not places to train on
        raise params.ParameterError(f"{allowed}; got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise params.ParameterError(f"device {device} requested but torch sees no CUDA device; use device cpu or auto")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise params.ParameterError(f"device {device}: torch sees {torch.cuda.device_count()} CUDA devices, cuda:0 to "
                                    f"cuda:{torch.cuda.device_count() - 1}")
    return dev


class Trainer:
    """G models trained in lockstep on the same minibatches; here G = 1, a plain module.

    ``implicitbias.validation.batched.StackedTrainer`` is the vectorised G > 1 version; the
    epoch loop in :func:`train` drives either through ``logits``, ``parameters``, ``norms``,
    ``train_mode``.
    """

    def __init__(self, model: torch.nn.Module, forward: Callable | None = None):
        self.model = model
        self.forward = forward or model

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """(G, B, K) logits."""
        return self.forward(x)[None]

    def parameters(self) -> list[torch.Tensor]:
        return list(self.model.parameters())

    def norms(self) -> list[dict[str, float]]:
        return [kernel_norms(self.model)]

    def train_mode(self, mode: bool) -> None:
        self.model.train(mode)


def build(config: Mapping, data: ImageData, device: torch.device, dtype: torch.dtype, *, channels_last: bool = False):
    """The initialised model of a canonical config on ``device`` (sigma_w x He normal, seed)."""
    model = build_model(
        config["arch"], data.shape, data.num_classes, width=config["width"], head_depth=config["head_depth"],
        head_width=config["head_width"], head_activation=config["head_activation"],
    )
    scale_init_(model, config["sigma_w"], scale_head=config["scale_head"], seed=config["seed"])
    model = model.to(device, dtype)
    return model.to(memory_format=torch.channels_last) if channels_last else model


def _evaluate(trainer: Trainer, x, y, autocast, batch: int = 2048) -> tuple[list[float], list[float]]:
    """Mean cross-entropy and accuracy of each of the G models on (x, y), in eval mode."""
    trainer.train_mode(False)
    loss, correct = 0.0, 0.0
    with torch.no_grad(), autocast():
        for i in range(0, len(y), batch):
            z = trainer.logits(x[i : i + batch]).float()
            yy = y[i : i + batch]
            loss = loss + torch.nn.functional.cross_entropy(z.transpose(1, 2), yy.expand(len(z), -1), reduction="none").sum(1)
            correct = correct + (z.argmax(-1) == yy).sum(1)
    n = len(y)
    return (torch.as_tensor(loss) / n).tolist(), (torch.as_tensor(correct, dtype=torch.float64) / n).tolist()


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def train(
    configs: list[dict],
    trainer: Trainer,
    data: ImageData,
    device: torch.device,
    *,
    on_epoch: Callable[[int, int, dict], None] | None = None,
    channels_last: bool = False,
) -> list[dict]:
    """Train the G models of ``trainer`` (configs equal except for sigma_w) and return G records.

    ``on_epoch(g, epoch, row)`` is called after every evaluated epoch (the sweep stores the row).
    """
    c = configs[0]
    G = len(configs)
    dtype = torch.float64 if c["precision"] == "float64" else torch.float32
    autocast = functools.partial(
        torch.autocast, device_type=device.type, dtype=torch.bfloat16, enabled=c["precision"] == "bf16"
    )
    data = data.to(device, dtype)
    if channels_last:
        data.x_train = data.x_train.contiguous(memory_format=torch.channels_last)
    n = len(data.y_train)
    if c["batch_size"] > n:
        raise params.ParameterError(f"batch_size must be <= the {n} training images of {c['dataset']}, got {c['batch_size']}")
    spe = steps_per_epoch(n, c["batch_size"])
    eta = schedule(c["schedule"], c["lr"], spe * c["epochs"])
    clocks = forgetting_clocks(c["optimizer"], eta, c["batch_size"], n, c["epochs"], c["weight_decay"])
    opt = make_optimizer(c["optimizer"], trainer.parameters(), c["lr"], momentum=c["momentum"], weight_decay=c["weight_decay"])
    groups = opt.param_groups + (opt.companion.param_groups if getattr(opt, "companion", None) else [])
    base_lr = [g["lr"] for g in groups]
    gen = torch.Generator(device=device).manual_seed(c["seed"])

    histories: list[list[dict]] = [[] for _ in range(G)]
    diverged: list[int | None] = [None] * G

    def record_epoch(epoch, train_loss, train_acc, seconds):
        val = _evaluate(trainer, data.x_val, data.y_val, autocast)
        test = _evaluate(trainer, data.x_test, data.y_test, autocast)
        norms = trainer.norms()
        t = {k: (v[epoch - 1] if epoch else 0.0) for k, v in clocks.cumulative.items()}
        for g in range(G):
            row = {
                "epoch": epoch,
                "train_loss": _finite(train_loss[g]), "train_acc": train_acc[g],
                "val_loss": _finite(val[0][g]), "val_acc": val[1][g],
                "test_loss": _finite(test[0][g]), "test_acc": test[1][g],
                "kernel_norm": _finite(norms[g]["total"]),
                "kernel_norms": {k: _finite(v) for k, v in norms[g].items() if k != "total"},
                "clocks": t, "seconds": seconds,
            }
            if diverged[g] is None and not all(row[k] is not None for k in ("train_loss", "val_loss", "kernel_norm")):
                diverged[g] = epoch
            if diverged[g] is None or diverged[g] == epoch:
                histories[g].append(row)
                if on_epoch:
                    on_epoch(g, epoch, row)

    m = len(data.y_val)
    record_epoch(0, *_evaluate(trainer, data.x_train[:m], data.y_train[:m], autocast), 0.0)
    step = 0
    for epoch in range(1, c["epochs"] + 1):
        if all(d is not None for d in diverged):
            break
        t0 = time.perf_counter()
        trainer.train_mode(True)
        loss_sum = torch.zeros(G, device=device, dtype=torch.float64)
        correct = torch.zeros(G, device=device, dtype=torch.float64)
        for xb, yb in batches(data.x_train, data.y_train, c["batch_size"], gen, crop_padding=c["crop_padding"], flip=c["flip"]):
            factor = eta(step) / c["lr"]
            for group, lr0 in zip(groups, base_lr):
                group["lr"] = lr0 * factor
            with autocast():
                z = trainer.logits(xb).float()
                losses = torch.nn.functional.cross_entropy(z.transpose(1, 2), yb.expand(G, -1), reduction="none").mean(1)
            opt.zero_grad(set_to_none=True)
            losses.sum().backward()
            opt.step()
            with torch.no_grad():
                loss_sum += losses.detach() * len(yb)
                correct += (z.argmax(-1) == yb).sum(1)
            step += 1
        record_epoch(epoch, (loss_sum / n).tolist(), (correct / n).tolist(), time.perf_counter() - t0)

    records = []
    for g in range(G):
        h = histories[g]
        summary = run_summary([r for r in h if r["epoch"] != diverged[g]])
        summary.update(
            diverged_epoch=diverged[g], epochs_run=h[-1]["epoch"],
            clocks=clocks.total, governing_clock=clocks.governing, steps_per_epoch=spe,
            n_train=n, final_kernel_norms=h[-1]["kernel_norms"],
        )
        records.append({"status": "diverged" if diverged[g] is not None else "done", "summary": summary, "history": h})
    return records


def execute(config: Mapping, *, options: Mapping | None = None, on_epoch: Callable[[int, dict], None] | None = None) -> dict:
    """Train one run (config is canonicalised first) and return its record (module docstring).

    ``options``: runtime settings that do not enter the hash: ``device`` (default: cuda if
    available), ``threads`` (torch intra-op threads), ``channels_last``, ``compile``
    (``torch.compile`` the forward; pays on GPUs for long runs).
    ``on_epoch(epoch, row)`` is called after every epoch (epoch 0 = initialisation).
    """
    options = dict(options or {})
    c = canonical_config(config)
    device = resolve_device(options.get("device"))
    data = dataset_for(c)
    dtype = torch.float64 if c["precision"] == "float64" else torch.float32
    hook = None if on_epoch is None else (lambda g, epoch, row: on_epoch(epoch, row))
    channels_last = bool(options.get("channels_last"))
    with torch_threads(options.get("threads")):
        model = build(c, data, device, dtype, channels_last=channels_last)
        trainer = Trainer(model, torch.compile(model) if options.get("compile") else None)
        return train([c], trainer, data, device, on_epoch=hook, channels_last=channels_last)[0]
