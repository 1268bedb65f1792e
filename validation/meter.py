"""The forgetting clocks, kernel norms and epoch metrics measured inside your own PyTorch training
loop (Spec B, section 1; the clocks of C7).

Three added lines::

    meter = ForgettingMeter(model, optimizer, batch_size=128, n_train=45_000, sigma_w=0.5, seed=0)
    ...  # your loop: optimizer.step() as usual, schedulers included
    meter.epoch_end(train_acc=..., val_loss=..., val_acc=..., test_acc=...)   # once per epoch
    ...
    meter.save(store)   # or meter.record(), meter.rows()

The meter registers a step pre-hook on the optimiser (``torch.optim.Optimizer.register_step_pre_hook``)
that reads, just before each step, the learning rate and weight decay of every parameter group:
the rates the step is about to use, whatever set them (an ``lr_scheduler``, a hand-written
schedule, a warm-up).  At ``epoch_end`` it measures ||W||_F of every conv and linear kernel
(``validation.init.kernel_norms``) and keeps the metrics you pass.  An ``epoch_end`` before the
first step records epoch 0, the initialisation (as the package's own runs do); without it the
record starts at epoch 1.

Which parameter group feeds the clocks: the clocks T_SGD = (1/b) sum eta_k^2, T_L2 = lambda
sum eta_k, T_adapt = sum eta_k describe the radial dynamics of scale-invariant kernels (a norm
layer after them), so the meter takes eta_k and lambda from the group holding the most entries of
scale-invariant kernels (``validation.init.scale_invariant_kernels``, or your ``scale_invariant``
list of module names); when no kernel is scale-invariant, from the group holding the most kernel
entries; ``clock_group`` (an index) overrides it.  Every group's clocks are kept in the record
(``summary.clocks_by_group``).  Sums: ``theory.clocks.clocks_of_steps``, the calculator's own, so
a loop that takes the schedule's rates gets ``forgetting_clocks``' numbers exactly.  One lambda per
run: a weight decay that changes during training is refused.

The optimiser's name in the clocks' sense (``theory.clocks.OPTIMIZERS``) is read from its class
(SGD: ``sgd``, ``sgd_momentum`` or ``nesterov`` after its momentum; Adam, AdamW, RMSprop; the
package's Muon and SignDescent); pass ``optimizer_name`` for any other.

The record (``record()``) is ``validation.run.execute``'s (status, summary, history with the same
row keys but ``seconds``; ``train_loss`` and ``test_loss`` None when not passed), built by
``validation.runs_format.build_record`` as imported runs are, under ``config()``
(``runs_format.config_of``: schedule ``recorded``).  ``rows()`` gives the run in the documented
run format, with the recorded clocks, for a file to import elsewhere.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import torch
from torch import nn

from implicitbias.numerics.optim.optimizers import Muon, SignDescent
from implicitbias.theory import params
from implicitbias.theory.clocks import CLOCKS, OPTIMIZERS, Clocks, clocks_of_steps
from implicitbias.validation.init import kernel_modules, kernel_norms, scale_invariant_kernels
from implicitbias.validation.runs_format import FROM_STEPS, NORM_PREFIX, build_record, config_of, history_row, store_runs

__all__ = ["ForgettingMeter", "optimizer_name_of", "METRICS"]

METRICS = ("train_acc", "val_loss", "val_acc", "test_acc", "train_loss", "test_loss")


def optimizer_name_of(optimizer: torch.optim.Optimizer, group: int = 0) -> str | None:
    """The clocks' name of a torch optimiser (module docstring), None when its class is not known."""
    g = optimizer.param_groups[group]
    if isinstance(optimizer, torch.optim.SGD):
        return "nesterov" if g.get("nesterov") else ("sgd_momentum" if g.get("momentum", 0) else "sgd")
    for cls, name in ((torch.optim.AdamW, "adamw"), (torch.optim.Adam, "adam"), (torch.optim.RMSprop, "rmsprop"),
                      (Muon, "muon"), (SignDescent, "sign")):
        if isinstance(optimizer, cls):
            return name
    return None


def _number(name: str, value) -> float:
    """A metric as a float: a Python or numpy number or a one-element tensor (NaN and inf kept)."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise params.ParameterError(f"{name} must be a number (or a one-element tensor), got {value!r}")
    value = float(value)
    if name.endswith("_acc") and math.isfinite(value) and not 0.0 <= value <= 1.0:
        raise params.ParameterError(f"{name} must be a fraction in [0, 1] (not percent), got {value:g}")
    return value


class ForgettingMeter:
    r"""Clocks, kernel norms and epoch metrics of a training loop you write (module docstring).

    The clocks :math:`T_{\mathrm{SGD}} = \frac{1}{b}\sum_k \eta_k^2`,
    :math:`T_{L2} = \lambda \sum_k \eta_k` and :math:`T_{\mathrm{adapt}} = \sum_k \eta_k` are summed
    from the rates each optimiser step actually took.

    Parameters
    ----------
    model : torch.nn.Module
        The network being trained (at least one conv or linear kernel).
    optimizer : torch.optim.Optimizer
        Its optimiser; a step pre-hook reads every step's rates.
    batch_size : int
        :math:`b` (nominal), for :math:`T_{\mathrm{SGD}}`.
    n_train : int
        :math:`N`, the training set's size.
    sigma_w : float
        The run's initialisation scale (:math:`\sigma_w` times He-normal kernels:
        ``validation.init.scale_init_`` draws them).
    seed : int
        The run's seed.
    optimizer_name : str or None
        The optimiser's name among ``theory.clocks.OPTIMIZERS``; ``None``: read from its class.
    clock_group : int or None
        The parameter group whose rates feed the clocks; ``None``: the group holding the most
        scale-invariant kernel entries (module docstring).
    scale_invariant : iterable of str or None
        The names of the kernel modules a norm layer follows; ``None``: inferred from module order.
    run_id, dataset, arch : str or None
        Labels (``run_id`` by default: optimiser, initial lr, decay, b, :math:`\sigma_w`, seed; name
        runs that share these yourself).
    num_classes : int or None
        :math:`K`, for the divergence rule; ``None``: the last linear layer's outputs.

    See Also
    --------
    implicitbias.import_runs : runs recorded elsewhere, from a file.
    implicitbias.forgetting_clocks : the calculator whose sums the meter shares.

    Examples
    --------
    >>> import torch
    >>> import implicitbias as ib
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 3))
    >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> meter = ib.ForgettingMeter(model, optimizer, batch_size=10, n_train=20, sigma_w=1.0, seed=0)
    >>> x, y = torch.randn(20, 4), torch.randint(0, 3, (20,))
    >>> for batch in (slice(0, 10), slice(10, 20)):
    ...     optimizer.zero_grad()
    ...     torch.nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
    ...     optimizer.step()
    >>> meter.epoch_end(train_acc=0.5, val_loss=1.0, val_acc=0.5, test_acc=0.5)
    >>> round(meter.clocks().total["T_SGD"], 12)   # 2 steps of 0.1**2 / 10
    0.002
    """

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, *, batch_size: int, n_train: int,
                 sigma_w: float, seed: int, optimizer_name: str | None = None, clock_group: int | None = None,
                 scale_invariant: Iterable[str] | None = None, run_id: str | None = None, dataset: str | None = None,
                 arch: str | None = None, num_classes: int | None = None):
        if not isinstance(model, nn.Module):
            raise params.ParameterError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise params.ParameterError(f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}")
        kernels = dict(kernel_modules(model))
        if not kernels:
            raise params.ParameterError("model must contain a conv or linear layer (sigma_w scales their kernels)")
        self.n_train = params.integer("n_train", n_train, minimum=1)
        self.batch_size = params.integer("batch_size", batch_size, minimum=1, maximum=self.n_train)
        self.sigma_w = params.real("sigma_w", sigma_w, minimum=0.0, open_minimum=True)
        self.seed = params.seed("seed", seed)
        for name, value in (("run_id", run_id), ("dataset", dataset), ("arch", arch)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise params.ParameterError(f"{name} must be a non-empty name or None, got {value!r}")
        self.dataset, self.arch = dataset, arch
        if scale_invariant is None:
            self.scale_invariant = scale_invariant_kernels(model)
        else:
            if isinstance(scale_invariant, str) or not isinstance(scale_invariant, Iterable):
                raise params.ParameterError(f"scale_invariant must be a list of kernel module names, got {scale_invariant!r}")
            self.scale_invariant = list(scale_invariant)
            for name in self.scale_invariant:
                params.choice("scale_invariant", name, kernels)
        head = list(kernels.values())[-1]
        if num_classes is None:
            self.num_classes = head.out_features if isinstance(head, nn.Linear) and head.out_features >= 2 else None
        else:
            self.num_classes = params.integer("num_classes", num_classes, minimum=2)
        self.clock_group = self._clock_group(optimizer, kernels, self.scale_invariant, clock_group)
        name = optimizer_name_of(optimizer, self.clock_group) if optimizer_name is None else optimizer_name
        if name is None:
            raise params.ParameterError(f"optimizer_name must be given for a {type(optimizer).__name__} (one of "
                                        f"{', '.join(OPTIMIZERS)}: the family whose clock it follows)")
        self.optimizer_name = params.choice("optimizer_name", name, OPTIMIZERS)
        group = optimizer.param_groups[self.clock_group]
        self.run_id = run_id or (f"{self.optimizer_name}-lr{float(group['lr']):g}-wd{group.get('weight_decay', 0.0):g}-"
                                 f"b{self.batch_size}-sigma_w{self.sigma_w:g}-seed{self.seed}")
        self.model, self.optimizer = model, optimizer
        self._epoch_lrs: list[list[list[float]]] = []  # per epoch, per group: eta_k of each step
        self._current: list[list[float]] = [[] for _ in optimizer.param_groups]
        self._decays: list[set[float]] = [set() for _ in optimizer.param_groups]
        self._rows: list[tuple[int, dict, dict]] = []  # (epoch, metrics, kernel norms)
        self._initial_norms = kernel_norms(model)
        self._handle = optimizer.register_step_pre_hook(self._before_step)

    @staticmethod
    def _clock_group(optimizer, kernels, scale_invariant, clock_group) -> int:
        groups = optimizer.param_groups
        if clock_group is not None:
            return params.integer("clock_group", clock_group, minimum=0, maximum=len(groups) - 1)
        invariant = {id(m.weight) for n, m in kernels.items() if n in scale_invariant}
        weights = {id(m.weight) for m in kernels.values()}

        def entries(group, ids):
            return sum(p.numel() for p in group["params"] if id(p) in ids)

        by = invariant if any(entries(g, invariant) for g in groups) else weights
        return max(range(len(groups)), key=lambda i: entries(groups[i], by))

    def _before_step(self, optimizer, args, kwargs) -> None:
        if len(optimizer.param_groups) != len(self._current):
            raise params.ParameterError("optimizer param groups must stay as they were when the meter was created "
                                        f"({len(self._current)}, now {len(optimizer.param_groups)})")
        for i, group in enumerate(optimizer.param_groups):
            self._current[i].append(float(group["lr"]))
            self._decays[i].add(float(group.get("weight_decay", 0.0)))

    def epoch_end(self, *, train_acc, val_loss, val_acc, test_acc, train_loss=None, test_loss=None) -> None:
        """Close an epoch: keep its metrics (fractions in [0, 1] for accuracies; numbers or one-element
        tensors; NaN and inf are kept and make the run diverged) and measure the kernel norms.  Called
        before the first step it records epoch 0 (the initialisation)."""
        given = dict(train_acc=train_acc, val_loss=val_loss, val_acc=val_acc, test_acc=test_acc, train_loss=train_loss,
                     test_loss=test_loss)
        metrics = {k: None if v is None and k in ("train_loss", "test_loss") else _number(k, v) for k, v in given.items()}
        metrics = {k: v if v is None or math.isfinite(v) else None for k, v in metrics.items()}
        steps = len(self._current[self.clock_group])
        if steps == 0 and (self._rows or self._epoch_lrs):
            raise params.ParameterError("epoch_end must follow at least one optimizer step (none since the last call)")
        if steps:
            self._epoch_lrs.append(self._current)
            self._current = [[] for _ in self.optimizer.param_groups]
        self._rows.append((len(self._epoch_lrs), metrics, kernel_norms(self.model)))

    def close(self) -> None:
        """Remove the step hook (the meter records no further steps)."""
        self._handle.remove()

    @property
    def epochs(self) -> int:
        """Epochs closed by ``epoch_end`` so far (epoch 0 not counted)."""
        return len(self._epoch_lrs)

    def _weight_decay(self, group: int) -> float:
        decays = self._decays[group]
        if len(decays) > 1:
            raise params.ParameterError(f"weight_decay of param group {group} must stay constant during training for "
                                        f"the clock T_L2 = lambda sum eta_k; it took {sorted(decays)}")
        return next(iter(decays), 0.0)

    def clocks(self, group: int | None = None) -> Clocks:
        """The clocks so far of the clock group (or of param group ``group``)."""
        g = self.clock_group if group is None else params.integer("group", group, minimum=0,
                                                                    maximum=len(self._current) - 1)
        if not self._epoch_lrs:
            raise params.ParameterError("epoch_end must have closed an epoch of training before clocks exist")
        return clocks_of_steps(self.optimizer_name, [e[g] for e in self._epoch_lrs], self.batch_size, self.n_train,
                               self._weight_decay(g))

    def _history(self) -> tuple[list[dict], Clocks]:
        if not self._epoch_lrs:
            raise params.ParameterError("epoch_end must have closed an epoch of training before a record exists")
        clocks = self.clocks()
        history = []
        for epoch, metrics, norms in self._rows:
            at = {c: clocks.cumulative[c][epoch - 1] if epoch else 0.0 for c in CLOCKS}
            history.append(history_row(epoch, metrics, norms, at))
        return history, clocks

    def _peak_lrs(self) -> list[float]:
        """The largest rate of each epoch of the clock group."""
        return [max(e[self.clock_group]) for e in self._epoch_lrs]

    def config(self) -> dict:
        """The config the run is stored under (``runs_format.config_of``: schedule ``recorded``, lr the
        peak rate, ``lr_per_epoch`` each epoch's largest rate)."""
        _, clocks = self._history()
        peaks = self._peak_lrs()
        return config_of(sigma_w=self.sigma_w, seed=self.seed, optimizer=self.optimizer_name,
                         batch_size=self.batch_size, weight_decay=clocks.weight_decay, n_train=self.n_train,
                         epochs=self.epochs, lr=max(peaks), schedule="recorded", lr_per_epoch=peaks,
                         dataset=self.dataset, arch=self.arch)

    def record(self) -> dict:
        """The run's record, as ``validation.run.execute`` returns one (module docstring)."""
        history, clocks = self._history()
        record = build_record(history, optimizer=self.optimizer_name, weight_decay=clocks.weight_decay,
                              n_train=self.n_train, steps_per_epoch=clocks.steps_per_epoch,
                              run_id=self.run_id, clocks_from=FROM_STEPS, num_classes=self.num_classes)
        record["summary"]["clocks_by_group"] = [self.clocks(g).total for g in range(len(self._current))]
        record["summary"]["clock_group"] = self.clock_group
        record["summary"]["scale_invariant"] = list(self.scale_invariant)
        return record

    def rows(self) -> list[dict]:
        """The run in the documented run format (``validation.runs_format``): one dict per recorded
        epoch, with the recorded clocks, ready for ``pandas.DataFrame(rows).to_csv(...)``."""
        history, clocks = self._history()
        lrs = self._peak_lrs()
        out = []
        for row in history:
            e = row["epoch"]
            out.append({"run_id": self.run_id, "sigma_w": self.sigma_w, "seed": self.seed,
                        "optimizer": self.optimizer_name, "batch_size": self.batch_size,
                        "weight_decay": clocks.weight_decay, "n_train": self.n_train, "epoch": e,
                        "lr": lrs[max(e, 1) - 1],
                        **{k: row[k] for k in METRICS if row[k] is not None}, "kernel_norm": row["kernel_norm"],
                        **({"dataset": self.dataset} if self.dataset else {}), **({"arch": self.arch} if self.arch else {}),
                        **({"num_classes": self.num_classes} if self.num_classes else {}), **row["clocks"],
                        **{NORM_PREFIX + k: v for k, v in row["kernel_norms"].items()}})
        return out

    def save(self, store) -> tuple[dict, dict]:
        """Put the run in ``store`` (an open ``implicitbias.store.Store``; ``ib.ForgettingMeter.save``
        also takes a path), where ``implicitbias analyse`` judges it; returns (config, record)."""
        if not (hasattr(store, "put") and hasattr(store, "require_writable")):
            raise params.ParameterError(f"store must be an open implicitbias Store, got {type(store).__name__}")
        config, record = self.config(), self.record()
        store_runs([(config, record)], store)
        return config, record

    def __repr__(self) -> str:
        return (f"ForgettingMeter({self.run_id!r}, {self.optimizer_name}, b={self.batch_size}, epochs={self.epochs}, "
                f"clock group {self.clock_group})")

