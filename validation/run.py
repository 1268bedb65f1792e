"""One training run of the forgetting experiments, as a recipe: config -> record (Spec B, section 1).

Read top to bottom, the run is: 0. its config (:class:`RunConfig`, checked by
:func:`canonical_config`), 1. the data, 2. the model, 3. the optimiser, its schedule and the
clocks, 4. the evaluation and the divergence rule, 5. the loop, 6. the record.  The same code
trains one run (:func:`execute`) and an ensemble of runs that share a step
(``validation.batched.execute_group``): :func:`train` drives G members through a trainer
(``validation.trainers``), G = 1 for a solo run.

A config is a flat dict (see :data:`DEFAULTS`, ``RunConfig().canonical()``); :func:`canonical_config` fills the defaults,
validates every entry (one ``ParameterError`` naming the entry) and returns the dict whose hash
keys the run in the store.  :func:`execute` trains it and returns the record
(``validation.records.RunRecord.to_dict``)::

    {"status": "done" | "diverged", "diverged_epoch": int | None,
     "history": [row per epoch, epoch 0 = at initialisation],
     "summary": {selected_test_acc, tau_interp, repair_gap, initial/final kernel norm, clocks, ...}}

Each history row (``validation.records.EpochLog``) holds train/val/test loss and accuracy (train: running mean over the epoch's
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import torch

from implicitbias.numerics.metrics.forgetting_metrics import run_summary
from implicitbias.numerics.optim.optimizers import OPTIMIZERS
from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params
from implicitbias.theory.clocks import MAX_RATE, Clocks, forgetting_clocks, steps_per_epoch
from implicitbias.theory.schedules import SCHEDULES, schedule
from implicitbias.validation import external
from implicitbias.validation.data import DATASETS, ImageData, batches, load_dataset, locate
from implicitbias.validation.groups import group_by_setting
from implicitbias.validation.init import scale_init_
from implicitbias.validation.models import ARCHITECTURES, HEAD_ACTIVATIONS, build_model
from implicitbias.validation.precision import parameter_dtype
from implicitbias.validation.records import EpochLog, RunConfig, RunRecord, RunSummary
from implicitbias.validation.trainers import Trainer, trainer_for

__all__ = ["DEFAULTS", "DECAY_ON", "KIND", "PRECISIONS", "canonical_config", "run_config", "execute", "dataset_for",
           "train", "divergence", "warmup_epochs", "build", "plan", "Steps", "require_data", "run_codes"]

KIND = "validation.run"
PRECISIONS = ("float32", "float64", "bf16")
DECAY_ON = ("all", "scale_invariant")  # which tensors weight_decay acts on (validation.trainers)
MAX_EPOCHS = 100_000
LOSS_BOUND = 10.0  # x the loss at initialisation: cross-entropy that grows tenfold is running away, not learning
CHANCE_MARGIN = 0.02  # training accuracy <= 1/K + this after warm-up: the network has stopped learning
WARMUP_FRACTION = 0.25  # of the epochs: slow starters (large sigma_w, small effective lr) get this long
WARMUP_MIN_EPOCHS = 5

DEFAULTS: dict = RunConfig().canonical()


# -- 0. the config ---------------------------------------------------------------------------------

def canonical_config(config: Mapping | RunConfig) -> dict:
    """``config`` with defaults filled in and every entry checked (``ParameterError`` otherwise): the
    dict whose hash keys the run in the store (``RunConfig.canonical``)."""
    if isinstance(config, RunConfig):
        config = config.canonical()
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


def run_config(config: Mapping | RunConfig) -> RunConfig:
    """``config`` checked (:func:`canonical_config`) and typed."""
    return RunConfig(**canonical_config(config))


def _typed(config: Mapping | RunConfig) -> RunConfig:
    """A canonical config (as the store holds it) read by attribute; not checked again.  Keys beyond
    the run's are left to their owner (a head-rank run's head keys, ``validation.head_rank``)."""
    return config if isinstance(config, RunConfig) else RunConfig(**{key: config[key] for key in DEFAULTS})


# -- 1. the data -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)  # a dataset is read (or generated) once per process, whatever the runs on it
def _cached_dataset(name, path, seed, size, train_size, val_size, test_size) -> ImageData:
    load = external.load_data if external.is_reference(name) else load_dataset
    return load(name, path=path, seed=seed, size=size, train_size=train_size, val_size=val_size, test_size=test_size)


def require_data(configs) -> None:
    """Check that the data files of every config are on this machine (nothing is read): a
    ``DataUnavailable`` that says where they were looked for and how to get them otherwise.  A
    config is checked here, when its run is about to need the data, never when it is read."""
    for dataset, path in {(c.dataset, c.data_path) for c in map(_typed, configs)}:
        if not external.is_reference(dataset):  # a loader finds its own files
            locate(dataset, path)


def dataset_for(config: Mapping | RunConfig) -> ImageData:
    """The dataset of a canonical config (cached per process, on the CPU, float32)."""
    c = _typed(config)
    return _cached_dataset(c.dataset, c.data_path, c.data_seed, c.data_size, c.train_size, c.val_size, c.test_size)


def _on_device(data: ImageData, device: torch.device, dtype: torch.dtype, channels_last: bool) -> ImageData:
    """The whole dataset moved once to the training device (every minibatch is then an index into it)."""
    data = data.to(device, dtype)
    if channels_last:  # NHWC layout: the one GPU convolutions run fastest in
        data.x_train = data.x_train.contiguous(memory_format=torch.channels_last)
    return data


# -- 2. the model ----------------------------------------------------------------------------------


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


def build(config: Mapping | RunConfig, data: ImageData, device: torch.device, dtype: torch.dtype, *,
          channels_last: bool = False):
    """The initialised model of a canonical config on ``device`` (sigma_w x He normal, seed); a model
    factory's (``arch = "module:factory"``, ``validation.external``) gets the same initialisation."""
    c = _typed(config)
    if external.is_reference(c.arch):
        model = external.build_model(c.arch, data.shape, data.num_classes, width=c.width, seed=c.seed)
    else:
        model = build_model(c.arch, data.shape, data.num_classes, width=c.width, head_depth=c.head_depth,
                            head_width=c.head_width, head_activation=c.head_activation)
    scale_init_(model, c.sigma_w, scale_head=c.scale_head, seed=c.seed)  # sigma_w x He normal: the run's knob
    model = model.to(device, dtype)
    return model.to(memory_format=torch.channels_last) if channels_last else model


# -- 3. the optimiser, its schedule and the clocks -------------------------------------------------


@dataclass(frozen=True)
class Steps:
    """What a run steps through: the learning rate eta(k) of each global step k
    (``theory.schedules``) and the forgetting clocks it adds up to (``theory.clocks``)."""

    eta: Callable[[int], float]
    clocks: Clocks

    @property
    def steps_per_epoch(self) -> int:
        return self.clocks.steps_per_epoch


def plan(config: Mapping | RunConfig, data: ImageData) -> Steps:
    """What a run of ``config`` on ``data`` steps through, checked before it trains (``sweep.check_data``
    checks every run of a sweep with it, so a dry run refuses what the run would).  ``ParameterError``
    when a validation or test split is empty (nothing to measure), the batch is larger than the
    training split or leaves a last minibatch of one image (BatchNorm needs two), or the clocks
    overflow (a learning rate or decay so large that its squares summed over the steps are not
    finite)."""
    c = _typed(config)
    for split, y in (("validation", data.y_val), ("test", data.y_test)):
        if len(y) == 0:
            raise params.ParameterError(f"data_size must leave images in every split: the {split} split of "
                                        f"{c.dataset} is empty ({len(data.y_train)} training images)")
    n, b = len(data.y_train), c.batch_size
    if b > n:
        raise params.ParameterError(f"batch_size must be <= the {n} training images of {c.dataset}, got {b}")
    if n % b == 1:
        raise params.ParameterError(
            f"batch_size must not leave a last minibatch of one image (BatchNorm needs two): {n} training images, b = {b}"
        )
    eta = schedule(c.schedule, c.lr, steps_per_epoch(n, b) * c.epochs)
    return Steps(eta, forgetting_clocks(c.optimizer, eta, b, n, c.epochs, c.weight_decay))


@dataclass(frozen=True)
class _Settings:
    """The hyperparameter settings among the members of one lockstep (``validation.groups``): each
    setting's member indices (consecutive), first config and steps, and each member's setting."""

    members: list[list[int]]
    heads: list[RunConfig]
    steps: list[Steps]
    of_member: dict[int, int]

    @classmethod
    def of(cls, runs: Sequence[RunConfig], data: ImageData) -> _Settings:
        members = group_by_setting(range(len(runs)), lambda g: runs[g].canonical())
        heads = [runs[m[0]] for m in members]
        steps = [plan(h, data) for h in heads]  # each setting's checks, schedule and clocks
        return cls(members, heads, steps, {g: s for s, m in enumerate(members) for g in m})

    def lr_factors(self, step: int) -> list[float]:
        """Each setting's schedule at global step k as a factor of its base rate: eta_k / eta_0."""
        return [s.eta(step) / h.lr for s, h in zip(self.steps, self.heads)]

    def clocks(self, g: int) -> Clocks:
        return self.steps[self.of_member[g]].clocks


# -- 4. the evaluation and the divergence rule -----------------------------------------------------


def _evaluate(trainer: Trainer, x, y, autocast, batch: int = 2048) -> tuple[list[float], list[float]]:
    """Mean cross-entropy and accuracy of each of the G members on (x, y), in eval mode (BatchNorm
    on its running statistics), every member on the same images (``trainer.shared``)."""
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
    training accuracy within ``CHANCE_MARGIN`` of chance (1 / K).  A key missing from ``row`` was
    not measured (the rows between evaluations hold the training split only).
    """
    values = [row.get(k) for k in ("train_loss", "val_loss", "test_loss", "kernel_norm") if k in row]
    if any(v is None or not math.isfinite(v) for v in values):
        return "non-finite loss or weights"
    if row["train_loss"] > LOSS_BOUND * initial_loss:
        return f"training loss {row['train_loss']:.3g} > {LOSS_BOUND:g} x its start {initial_loss:.3g}"
    if epoch > warmup and row["train_acc"] <= 1.0 / num_classes + CHANCE_MARGIN:
        return f"training accuracy {row['train_acc']:.3f} at chance (1/{num_classes}) after {warmup} warm-up epochs"
    return None


# -- 5. the loop -----------------------------------------------------------------------------------


@dataclass
class _Lockstep:
    """G members training in lockstep and what they have logged so far: each member's history
    (:class:`EpochLog` rows), where it diverged and why, and its training loss at initialisation."""

    runs: list[RunConfig]
    trainer: Trainer
    data: ImageData
    device: torch.device
    autocast: Callable
    settings: _Settings
    on_epoch: Callable[[int, int, dict], None] | None
    histories: list[list[EpochLog]] = field(init=False)
    diverged: list[tuple[int, str] | None] = field(init=False)
    initial_loss: list[float] = field(init=False)
    warmup: int = field(init=False)  # of the chance rule (warmup_epochs)

    def __post_init__(self):
        G = len(self.runs)
        self.histories, self.diverged, self.initial_loss = [[] for _ in range(G)], [None] * G, [math.inf] * G
        self.warmup = warmup_epochs(self.runs[0].epochs)

    @property
    def live(self) -> list[int]:
        return [g for g, d in enumerate(self.diverged) if d is None]

    def _diverges(self, g: int, row: Mapping, epoch: int) -> str | None:
        return divergence(row, initial_loss=self.initial_loss[g], num_classes=self.data.num_classes, epoch=epoch,
                          warmup=self.warmup)

    def train_epoch(self, epoch: int, generators: list[torch.Generator]) -> tuple[list[float], list[float]]:
        """One epoch of minibatch steps; each member's mean training loss and accuracy over it."""
        c, trainer = self.runs[0], self.trainer
        trainer.train_mode(True)
        loss_sum = torch.zeros(len(self.runs), device=self.device, dtype=torch.float64)
        correct = torch.zeros(len(self.runs), device=self.device, dtype=torch.float64)
        first_step = (epoch - 1) * self.settings.steps[0].steps_per_epoch
        # member g's minibatch (G, B, ...) drawn from its own generator, augmented (random crop, flip) as the config says
        minibatches = batches(self.data.x_train, self.data.y_train, c.batch_size, generators,
                              crop_padding=c.crop_padding, flip=c.flip)
        for k, (xb, yb) in enumerate(minibatches, first_step):
            trainer.set_lr_factors(self.settings.lr_factors(k))  # the schedule: each setting's eta_k
            with external.guest("arch", c.arch, f"the forward and backward pass at epoch {epoch}"):
                with self.autocast():
                    z = trainer.members(xb).float()
                    losses = torch.nn.functional.cross_entropy(z.transpose(1, 2), yb, reduction="none").mean(1)
                trainer.zero_grad()
                losses.sum().backward()  # sum_g CE_g: block g of the gradient is member g's own CE_g'
            trainer.step()
            with torch.no_grad():  # running sums on the device: no host sync per step
                loss_sum += losses.detach() * yb.shape[1]
                correct += (z.argmax(-1) == yb).sum(1)
        n = len(self.data.y_train)
        return (loss_sum / n).tolist(), (correct / n).tolist()

    def measure(self, epoch: int, train_loss: list[float], train_acc: list[float], seconds: float, evaluate: bool):
        """Log epoch ``epoch`` of every live member: evaluate them where the config evaluates or where
        the training split alone shows a member diverging, and mark the members that diverged."""
        trained = [{"train_loss": _finite(loss), "train_acc": acc} for loss, acc in zip(train_loss, train_acc)]
        fresh = [g for g in self.live if epoch and self._diverges(g, trained[g], epoch)]
        if not (evaluate or fresh):
            return
        with external.guest("arch", self.runs[0].arch, f"the evaluation at epoch {epoch}"):
            val = _evaluate(self.trainer, self.data.x_val, self.data.y_val, self.autocast)
            test = _evaluate(self.trainer, self.data.x_test, self.data.y_test, self.autocast)
        norms = self.trainer.norms()
        for g in self.live:
            log = EpochLog(
                epoch, **trained[g], val_loss=_finite(val[0][g]), val_acc=val[1][g], test_loss=_finite(test[0][g]),
                test_acc=test[1][g], kernel_norm=_finite(norms[g]["total"]),
                kernel_norms={k: _finite(v) for k, v in norms[g].items() if k != "total"},
                clocks={k: (v[epoch - 1] if epoch else 0.0) for k, v in self.settings.clocks(g).cumulative.items()},
                seconds=seconds,
            )
            self._append(g, log)

    def _append(self, g: int, log: EpochLog) -> None:
        row = log.row()
        if log.epoch == 0:
            self.initial_loss[g] = log.train_loss if log.train_loss is not None else math.inf
        why = self._diverges(g, row, log.epoch)
        if why:
            self.diverged[g] = (log.epoch, why)
        self.histories[g].append(log)
        if self.on_epoch:
            self.on_epoch(g, log.epoch, row)

    # -- 6. the record -----------------------------------------------------------------------------

    def records(self) -> list[RunRecord]:
        """Each member's record: its status, its summary over the rows before it diverged, its history."""
        out = []
        for g, history in enumerate(self.histories):
            epoch, why = self.diverged[g] or (None, None)
            kept = [r.row() for r in history if r.epoch != epoch]
            clocks = self.settings.clocks(g)
            summary = RunSummary(
                # a run that diverged at epoch 0 (non-finite at initialisation) has no valid row to summarise
                **(run_summary(kept) if kept else {}), diverged_epoch=epoch, diverged_reason=why,
                epochs_run=history[-1].epoch, clocks=clocks.total, governing_clock=clocks.governing,
                steps_per_epoch=clocks.steps_per_epoch, n_train=len(self.data.y_train),
                final_kernel_norms=history[-1].kernel_norms,
            )
            out.append(RunRecord("diverged" if epoch is not None else "done", summary, tuple(history)))
        return out


def train(configs: Sequence[Mapping | RunConfig], trainer: Trainer, data: ImageData, device: torch.device, *,
          on_epoch: Callable[[int, int, dict], None] | None = None, channels_last: bool = False) -> list[dict]:
    """Train the G members of ``trainer`` (configs that share a step); G records (``RunRecord.to_dict``).

    The members may differ in sigma_w, seed and the optimiser's hyperparameters (optimiser, lr,
    momentum, decay, schedule: each member follows its own schedule and its own clocks); the
    rest (data, network, batch size, horizon, evaluation epochs) is ``configs[0]``'s.  Member g draws its minibatches and augmentation from its own seed, exactly as its solo run
    would.  At the epochs the config evaluates (``eval_every``, ``eval_dense_until``), at the last
    epoch and at an epoch where a member diverges, each member is evaluated (val/test loss and accuracy, kernel norms) and its row
    recorded; ``on_epoch(g, epoch, row)`` is called for each row (the sweep stores it).  A member
    that diverges (:func:`divergence`) keeps its history up to that epoch and is recorded as
    ``diverged`` with the epoch and the reason; the others train on.
    """
    runs = [_typed(c) for c in configs]
    c = runs[0]
    # bf16: the forward pass under autocast, the parameters and the optimiser in float32 (validation.precision)
    autocast = functools.partial(torch.autocast, device_type=device.type, dtype=torch.bfloat16,
                                 enabled=c.precision == "bf16")
    data = _on_device(data, device, parameter_dtype(c.precision), channels_last)
    settings = _Settings.of(runs, data)
    trainer.optimise([r.canonical() for r in runs], settings.members)  # one optimiser per setting, on its members
    generators = [torch.Generator(device=device).manual_seed(r.seed) for r in runs]
    loop = _Lockstep(runs, trainer, data, device, autocast, settings, on_epoch)
    m = len(data.y_val)
    with external.guest("arch", c.arch, "the evaluation at initialisation"):
        initial = _evaluate(trainer, data.x_train[:m], data.y_train[:m], autocast)  # epoch 0: len(val) training images
    loop.measure(0, *initial, 0.0, evaluate=True)
    for epoch in range(1, c.epochs + 1):
        if not loop.live:
            break
        t0 = time.perf_counter()
        train_loss, train_acc = loop.train_epoch(epoch, generators)
        loop.measure(epoch, train_loss, train_acc, time.perf_counter() - t0, evaluate=c.evaluates(epoch))
    return [record.to_dict() for record in loop.records()]


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


def execute(config: Mapping | RunConfig, *, options: Mapping | None = None,
            on_epoch: Callable[[int, dict], None] | None = None) -> dict:
    """Train one run (config is canonicalised first) and return its record (module docstring).

    ``options``: runtime settings that do not enter the hash: ``device`` (default: cuda if
    available), ``threads`` (torch intra-op threads), ``channels_last``, ``compile``
    (``torch.compile`` the forward; pays on GPUs for long runs).
    ``on_epoch(epoch, row)`` is called after every epoch (epoch 0 = initialisation).
    """
    options = dict(options or {})
    c = run_config(config)
    device = resolve_device(options.get("device"))
    data = dataset_for(c)
    hook = None if on_epoch is None else (lambda g, epoch, row: on_epoch(epoch, row))
    channels_last = bool(options.get("channels_last"))
    with torch_threads(options.get("threads")):
        model = build(c, data, device, parameter_dtype(c.precision), channels_last=channels_last)
        if options.get("compile"):
            trainer = Trainer(model, torch.compile(model))
        else:  # the toy MLP trains on the ensemble's folded kernels, so ensemble members are their solo runs
            trainer = trainer_for([model])
        return train([c], trainer, data, device, on_epoch=hook, channels_last=channels_last)[0]
