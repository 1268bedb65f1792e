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
(``implicitbias.theory.clocks``).  Rows are recorded at every epoch up to ``eval_dense_until``,
then every ``eval_every`` epochs, and at the last one (default: every epoch; long horizons thin
their later rows; the training accuracy of a row is still the mean over its epoch).

Divergence as users mean it (:func:`divergence`): a non-finite loss on any split or kernel norm, a mean
training loss above ``LOSS_BOUND`` times the loss at initialisation, or, after a warm-up of
``max(WARMUP_MIN_EPOCHS, WARMUP_FRACTION x epochs)`` epochs, training accuracy within
``CHANCE_MARGIN`` of chance.  Such a run stops and is recorded as ``diverged`` with the epoch
and the reason (``summary.diverged_epoch``, ``summary.diverged_reason``); analyses count it and
leave it out of spreads and fits.

Weight decay (``weight_decay`` = lambda, a choice the spec leaves open, s. 1): coupled L2 for SGD,
Adam and the other coupled optimisers, decoupled for AdamW and Muon
(``numerics.optim.optimizers``), acting on the tensors ``decay_on`` names: ``all`` (every
parameter: kernels, BatchNorm gamma and beta, the head) or ``scale_invariant`` (only the conv and
linear kernels a norm layer follows: the mechanism T_L2 models; ``validation.trainers``).  With
no decay ``decay_on`` is stored as ``all``.

Initialisation: every kernel sigma_w x He normal with the run's seed (the same draw for every
sigma_w), BatchNorm gamma 1 / beta 0, biases 0 (``implicitbias.validation.init``).  The seed also
drives the minibatch order and augmentation.  ``arch`` and ``dataset`` may also name a model factory
and a data loader of your own (``"package.module:name"``; the contract is ``validation.external``'s),
whose runs are stored under a code fingerprint that covers that module too (:func:`run_codes`).  Runtime options that do not change the numbers
(device, threads, channels_last, compile) are passed apart from the config and not hashed.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping

import torch

from implicitbias.numerics.metrics.forgetting_metrics import run_summary
from implicitbias.validation.init import scale_init_
from implicitbias.numerics.optim.optimizers import OPTIMIZERS
from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params
from implicitbias.theory.clocks import MAX_RATE, forgetting_clocks, steps_per_epoch
from implicitbias.theory.schedules import SCHEDULES, schedule
from implicitbias.validation import external
from implicitbias.validation.data import DATASETS, ImageData, batches, load_dataset, locate
from implicitbias.validation.groups import group_by_setting
from implicitbias.validation.models import ARCHITECTURES, HEAD_ACTIVATIONS, build_model
from implicitbias.validation.precision import parameter_dtype
from implicitbias.validation.trainers import Trainer, trainer_for

__all__ = ["DEFAULTS", "DECAY_ON", "KIND", "PRECISIONS", "canonical_config", "execute", "dataset_for", "train",
           "divergence", "warmup_epochs", "build", "require_data", "run_codes"]

KIND = "validation.run"
PRECISIONS = ("float32", "float64", "bf16")
DECAY_ON = ("all", "scale_invariant")  # which tensors weight_decay acts on (validation.trainers)
MAX_EPOCHS = 100_000
LOSS_BOUND = 10.0  # x the loss at initialisation: cross-entropy that grows tenfold is running away, not learning
CHANCE_MARGIN = 0.02  # training accuracy <= 1/K + this after warm-up: the network has stopped learning
WARMUP_FRACTION = 0.25  # of the epochs: slow starters (large sigma_w, small effective lr) get this long
WARMUP_MIN_EPOCHS = 5

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
    "decay_on": "all",
    "schedule": "constant",
    "batch_size": 128,
    "epochs": 10,
    "seed": 0,
    "precision": "float32",
    "eval_every": 1,
    "eval_dense_until": 0,
}


def canonical_config(config: Mapping) -> dict:
    """``config`` with defaults filled in and every entry checked (``ParameterError`` otherwise)."""
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise params.ParameterError(f"run config key must be one of {', '.join(DEFAULTS)}; got {unknown[0]!r}")
    c = {**DEFAULTS, **config}
    external.check("dataset", c["dataset"], DATASETS, external.LOADER)
    if c["data_path"] is not None and not isinstance(c["data_path"], str):
        raise params.ParameterError(f"data_path must be a path (a string), got {c['data_path']!r}")
    c["data_seed"] = params.seed("data_seed", c["data_seed"])
    for key in ("data_size", "train_size", "val_size", "test_size"):
        if c[key] is not None:
            c[key] = params.integer(key, c[key], minimum=2, maximum=10**8)
    c["crop_padding"] = params.integer("crop_padding", c["crop_padding"], minimum=0, maximum=64)
    c["flip"] = bool(c["flip"])
    external.check("arch", c["arch"], ARCHITECTURES, external.FACTORY)
    c["width"] = params.real("width", c["width"], minimum=0.0, maximum=64.0, open_minimum=True)
    c["head_depth"] = params.integer("head_depth", c["head_depth"], minimum=1, maximum=64)
    if c["head_width"] is not None:
        c["head_width"] = params.integer("head_width", c["head_width"], minimum=1, maximum=1 << 16)
    params.choice("head_activation", c["head_activation"], HEAD_ACTIVATIONS)
    for key in ("head_depth", "head_width", "head_activation") if external.is_reference(c["arch"]) else ():
        if c[key] != DEFAULTS[key]:
            raise params.ParameterError(f"{key} must stay unset with a model factory (arch {c['arch']!r} builds its own "
                                        f"head); it shapes the heads of {', '.join(ARCHITECTURES)}")
    c["sigma_w"] = params.real("sigma_w", c["sigma_w"], minimum=0.0, maximum=1e3, open_minimum=True)
    c["scale_head"] = bool(c["scale_head"])
    params.choice("optimizer", c["optimizer"], OPTIMIZERS)
    c["lr"] = params.real("lr", c["lr"], minimum=0.0, open_minimum=True, maximum=MAX_RATE)
    if c["momentum"] is not None:
        c["momentum"] = params.real("momentum", c["momentum"], minimum=0.0, maximum=0.9999)
    c["weight_decay"] = params.real("weight_decay", c["weight_decay"], minimum=0.0, maximum=MAX_RATE)
    params.choice("decay_on", c["decay_on"], DECAY_ON)
    if c["weight_decay"] == 0:
        c["decay_on"] = "all"  # no decay to place: one key for runs that train alike
    params.choice("schedule", c["schedule"], SCHEDULES)
    c["batch_size"] = params.integer("batch_size", c["batch_size"], minimum=1, maximum=1 << 20)
    c["epochs"] = params.integer("epochs", c["epochs"], minimum=1, maximum=MAX_EPOCHS)
    c["seed"] = params.seed("seed", c["seed"])
    params.choice("precision", c["precision"], PRECISIONS)
    c["eval_every"] = params.integer("eval_every", c["eval_every"], minimum=1, maximum=c["epochs"])
    c["eval_dense_until"] = params.integer("eval_dense_until", c["eval_dense_until"], minimum=0, maximum=c["epochs"])
    return c


@functools.lru_cache(maxsize=4)
def _cached_dataset(name, path, seed, size, train_size, val_size, test_size) -> ImageData:
    if external.is_reference(name):
        return external.load_data(
            name, path=path, seed=seed, size=size, train_size=train_size, val_size=val_size, test_size=test_size
        )
    return load_dataset(
        name, path=path, seed=seed, size=size, train_size=train_size, val_size=val_size, test_size=test_size
    )


def require_data(configs) -> None:
    """Check that the data files of every config are on this machine (nothing is read): a
    ``DataUnavailable`` that says where they were looked for and how to get them otherwise.  A
    config is checked here, when its run is about to need the data, never when it is read."""
    for dataset, path in {(c["dataset"], c["data_path"]) for c in configs}:
        if not external.is_reference(dataset):  # a loader finds its own files
            locate(dataset, path)


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


def build(config: Mapping, data: ImageData, device: torch.device, dtype: torch.dtype, *, channels_last: bool = False):
    """The initialised model of a canonical config on ``device`` (sigma_w x He normal, seed); a model
    factory's (``arch = "module:factory"``, ``validation.external``) gets the same initialisation."""
    if external.is_reference(config["arch"]):
        model = external.build_model(config["arch"], data.shape, data.num_classes, width=config["width"],
                                     seed=config["seed"])
    else:
        model = build_model(
            config["arch"], data.shape, data.num_classes, width=config["width"], head_depth=config["head_depth"],
            head_width=config["head_width"], head_activation=config["head_activation"],
        )
    scale_init_(model, config["sigma_w"], scale_head=config["scale_head"], seed=config["seed"])
    model = model.to(device, dtype)
    return model.to(memory_format=torch.channels_last) if channels_last else model


def _evaluate(trainer: Trainer, x, y, autocast, batch: int = 2048) -> tuple[list[float], list[float]]:
    """Mean cross-entropy and accuracy of each of the G members on (x, y), in eval mode."""
    trainer.train_mode(False)
    loss, correct = 0.0, 0.0
    with torch.no_grad(), autocast():
        for i in range(0, len(y), batch):
            z = trainer.shared(x[i : i + batch]).float()
            yy = y[i : i + batch]
            loss = loss + torch.nn.functional.cross_entropy(z.transpose(1, 2), yy.expand(len(z), -1), reduction="none").sum(1)
            correct = correct + (z.argmax(-1) == yy).sum(1)
    n = len(y)
    return (torch.as_tensor(loss) / n).tolist(), (torch.as_tensor(correct, dtype=torch.float64) / n).tolist()


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def warmup_epochs(epochs: int) -> int:
    """The warm-up of the chance rule of :func:`divergence` for a run of ``epochs`` epochs:
    max(WARMUP_MIN_EPOCHS, ceil(WARMUP_FRACTION x epochs))."""
    return max(WARMUP_MIN_EPOCHS, math.ceil(WARMUP_FRACTION * epochs))


def divergence(row: Mapping, *, initial_loss: float, num_classes: int, epoch: int, warmup: int) -> str | None:
    """Why a run counts as diverged at this epoch's ``row`` (None if it does not).

    Divergence as users mean it (module docstring): a non-finite loss (training, validation or
    test split: logits that are not finite on any split) or weight norm; a training
    loss above ``LOSS_BOUND`` times the loss at initialisation; or, after ``warmup`` epochs,
    training accuracy within ``CHANCE_MARGIN`` of chance (1 / K).
    """
    values = [row.get(k) for k in ("train_loss", "val_loss", "test_loss", "kernel_norm") if k in row]
    if any(v is None or not math.isfinite(v) for v in values):
        return "non-finite loss or weights"
    if row["train_loss"] > LOSS_BOUND * initial_loss:
        return f"training loss {row['train_loss']:.3g} > {LOSS_BOUND:g} x its start {initial_loss:.3g}"
    if epoch > warmup and row["train_acc"] <= 1.0 / num_classes + CHANCE_MARGIN:
        return f"training accuracy {row['train_acc']:.3f} at chance (1/{num_classes}) after {warmup} warm-up epochs"
    return None


def plan(c: Mapping, data: ImageData):
    """What a run of config ``c`` on ``data`` steps through, checked before it trains (``sweep.check_data``
    checks every run of a sweep with it, so a dry run refuses what the run would): steps per epoch,
    the learning-rate schedule and the forgetting clocks (``theory.clocks``).  ``ParameterError``
    when a validation or test split is empty (nothing to measure), the batch is larger than the
    training split or leaves a last minibatch of one image (BatchNorm needs two), or the clocks
    overflow (a learning rate or decay so large that its squares summed over the steps are not
    finite)."""
    for split, y in (("validation", data.y_val), ("test", data.y_test)):
        if len(y) == 0:
            raise params.ParameterError(f"data_size must leave images in every split: the {split} split of "
                                        f"{c['dataset']} is empty ({len(data.y_train)} training images)")
    n = len(data.y_train)
    b = c["batch_size"]
    if b > n:
        raise params.ParameterError(f"batch_size must be <= the {n} training images of {c['dataset']}, got {b}")
    if n % b == 1:
        raise params.ParameterError(
            f"batch_size must not leave a last minibatch of one image (BatchNorm needs two): {n} training images, b = {b}"
        )
    spe = steps_per_epoch(n, b)
    eta = schedule(c["schedule"], c["lr"], spe * c["epochs"])
    return spe, eta, forgetting_clocks(c["optimizer"], eta, b, n, c["epochs"], c["weight_decay"])


def _member_generators(configs: list[dict], device: torch.device) -> list[torch.Generator]:
    return [torch.Generator(device=device).manual_seed(c["seed"]) for c in configs]


def train(
    configs: list[dict],
    trainer: Trainer,
    data: ImageData,
    device: torch.device,
    *,
    on_epoch: Callable[[int, int, dict], None] | None = None,
    channels_last: bool = False,
) -> list[dict]:
    """Train the G members of ``trainer`` (configs that share a step); G records.

    The members may differ in sigma_w, seed and the optimiser's hyperparameters (optimiser, lr,
    momentum, decay, schedule: each member follows its own schedule and its own clocks); the
    rest (data, network, batch size, horizon, evaluation epochs) is ``configs[0]``'s.  Member g draws its minibatches and augmentation from its own seed, exactly as its solo run
    would.  At the epochs the config evaluates (``eval_every``, ``eval_dense_until``), at the last
    epoch and at an epoch where a member diverges, each member is evaluated (val/test loss and accuracy, kernel norms) and its row
    recorded; ``on_epoch(g, epoch, row)`` is called for each row (the sweep stores it).  A member
    that diverges (:func:`divergence`) keeps its history up to that epoch and is recorded as
    ``diverged`` with the epoch and the reason; the others train on.
    """
    c = configs[0]
    G = len(configs)
    dtype = parameter_dtype(c["precision"])
    autocast = functools.partial(
        torch.autocast, device_type=device.type, dtype=torch.bfloat16, enabled=c["precision"] == "bf16"
    )
    data = data.to(device, dtype)
    if channels_last:
        data.x_train = data.x_train.contiguous(memory_format=torch.channels_last)
    n = len(data.y_train)
    b = c["batch_size"]
    settings = group_by_setting(range(G), lambda g: configs[g])  # members with the same hyperparameters
    heads = [configs[members[0]] for members in settings]
    plans = [plan(h, data) for h in heads]  # each setting's checks, steps, schedule and clocks
    spe = plans[0][0]
    etas = [eta for _, eta, _ in plans]
    setting_of = {g: s for s, members in enumerate(settings) for g in members}
    clocks = [plans[setting_of[g]][2] for g in range(G)]
    trainer.optimise(configs, settings)
    gens = _member_generators(configs, device)
    warmup = warmup_epochs(c["epochs"])

    histories: list[list[dict]] = [[] for _ in range(G)]
    diverged: list[tuple[int, str] | None] = [None] * G
    initial_loss = [math.inf] * G

    def record_epoch(epoch, train_loss, train_acc, seconds, evaluate):
        rows = [{"epoch": epoch, "train_loss": _finite(train_loss[g]), "train_acc": train_acc[g]} for g in range(G)]
        live = [g for g in range(G) if diverged[g] is None]
        fresh = [g for g in live if epoch and divergence(rows[g], initial_loss=initial_loss[g], num_classes=data.num_classes,
                                                         epoch=epoch, warmup=warmup)]
        if not (evaluate or fresh):
            return
        with external.guest("arch", c["arch"], f"the evaluation at epoch {epoch}"):
            val = _evaluate(trainer, data.x_val, data.y_val, autocast)
            test = _evaluate(trainer, data.x_test, data.y_test, autocast)
        norms = trainer.norms()
        for g in live:
            t = {k: (v[epoch - 1] if epoch else 0.0) for k, v in clocks[g].cumulative.items()}
            row = rows[g]
            row.update(
                val_loss=_finite(val[0][g]), val_acc=val[1][g], test_loss=_finite(test[0][g]), test_acc=test[1][g],
                kernel_norm=_finite(norms[g]["total"]),
                kernel_norms={k: _finite(v) for k, v in norms[g].items() if k != "total"},
                clocks=t, seconds=seconds,
            )
            if epoch == 0:
                initial_loss[g] = row["train_loss"] if row["train_loss"] is not None else math.inf
            why = divergence(row, initial_loss=initial_loss[g], num_classes=data.num_classes, epoch=epoch, warmup=warmup)
            if why:
                diverged[g] = (epoch, why)
            histories[g].append(row)
            if on_epoch:
                on_epoch(g, epoch, row)

    m = len(data.y_val)
    with external.guest("arch", c["arch"], "the evaluation at initialisation"):
        initial = _evaluate(trainer, data.x_train[:m], data.y_train[:m], autocast)
    record_epoch(0, *initial, 0.0, True)
    step = 0
    for epoch in range(1, c["epochs"] + 1):
        if all(d is not None for d in diverged):
            break
        t0 = time.perf_counter()
        trainer.train_mode(True)
        loss_sum = torch.zeros(G, device=device, dtype=torch.float64)
        correct = torch.zeros(G, device=device, dtype=torch.float64)
        for xb, yb in batches(data.x_train, data.y_train, b, gens, crop_padding=c["crop_padding"], flip=c["flip"]):
            trainer.set_lr_factors([eta(step) / h["lr"] for eta, h in zip(etas, heads)])
            with external.guest("arch", c["arch"], f"the forward and backward pass at epoch {epoch}"):
                with autocast():
                    z = trainer.members(xb).float()
                    losses = torch.nn.functional.cross_entropy(z.transpose(1, 2), yb, reduction="none").mean(1)
                trainer.zero_grad()
                losses.sum().backward()
            trainer.step()
            with torch.no_grad():
                loss_sum += losses.detach() * yb.shape[1]
                correct += (z.argmax(-1) == yb).sum(1)
            step += 1
        evaluate = epoch % c["eval_every"] == 0 or epoch <= c["eval_dense_until"] or epoch == c["epochs"]
        record_epoch(epoch, (loss_sum / n).tolist(), (correct / n).tolist(), time.perf_counter() - t0, evaluate)

    records = []
    for g in range(G):
        h = histories[g]
        epoch, why = diverged[g] or (None, None)
        kept = [r for r in h if r["epoch"] != epoch]
        # a run that diverged at epoch 0 (non-finite at initialisation) has no valid row to summarise
        summary = run_summary(kept) if kept else {}
        summary.update(
            diverged_epoch=epoch, diverged_reason=why, epochs_run=h[-1]["epoch"],
            clocks=clocks[g].total, governing_clock=clocks[g].governing, steps_per_epoch=spe,
            n_train=n, final_kernel_norms=h[-1]["kernel_norms"],
        )
        records.append({"status": "diverged" if epoch is not None else "done", "summary": summary, "history": h})
    return records


def run_codes(store) -> Callable[[Mapping], str]:
    """``code(config)``: the code fingerprint a run of canonical ``config`` is stored under, that of
    :func:`execute` together with the user modules its ``arch`` and ``dataset`` name
    (``validation.external``), so editing a model factory or a data loader recomputes its runs.
    Computed once per set of modules for the configs of one sweep (the files are read when it is
    first asked: take a new one after editing them)."""
    memo: dict[tuple[str, ...], str] = {}

    def code(config: Mapping) -> str:
        modules = external.modules(config)
        if modules not in memo:
            memo[modules] = store.code_of(execute, modules=modules)
        return memo[modules]

    return code


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
    dtype = parameter_dtype(c["precision"])
    hook = None if on_epoch is None else (lambda g, epoch, row: on_epoch(epoch, row))
    channels_last = bool(options.get("channels_last"))
    with torch_threads(options.get("threads")):
        model = build(c, data, device, dtype, channels_last=channels_last)
        if options.get("compile"):
            trainer = Trainer(model, torch.compile(model))
        else:  # the toy MLP trains on the ensemble's folded kernels, so ensemble members are their solo runs
            trainer = trainer_for([model])
        return train([c], trainer, data, device, on_epoch=hook, channels_last=channels_last)[0]
