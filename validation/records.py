"""The typed data of one training run: its config, its per-epoch log and its record (Spec B, section 1).

The store keeps a run under the hash of its canonical config and holds its record as JSON; these
frozen dataclasses are the same data read by attribute:

- :class:`RunConfig`: the 28 entries of a run config (``validation.run.DEFAULTS`` is
  ``RunConfig().canonical()``); :meth:`RunConfig.canonical` returns exactly the dict the store
  hashes, so a record keeps its identity whether it was made from a dict or from a ``RunConfig``.
- :class:`EpochLog`: one history row (epoch 0 = at initialisation): training loss and accuracy
  (the mean over the epoch's minibatches), validation and test loss and accuracy, the total kernel
  norm sqrt(sum_l ||W_l||_F^2) and each kernel's ||W_l||_F, the cumulative clocks T_SGD, T_L2,
  T_adapt, and the epoch's seconds.  A value that was not finite is None; a row of a run trained
  elsewhere (``validation.runs_format``) has no seconds.
- :class:`RunSummary` and :class:`RunRecord`: the status (``done`` or ``diverged``), the summary
  and the history.

``row()`` / ``to_dict()`` give the stored JSON, key for key; ``from_row`` / ``from_dict`` read it
back.  No torch here: the analysis reads records without loading the training stack.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

__all__ = ["RunConfig", "EpochLog", "RunSummary", "RunRecord"]


def _as_dict(obj, skip=()) -> dict:
    return {f.name: getattr(obj, f.name) for f in fields(obj) if f.name not in skip}


@dataclass(frozen=True)
class RunConfig:
    """A run config, every entry (``validation.run.canonical_config`` checks them; its module docstring
    says what each does).  Field order is the canonical dict's."""

    dataset: str = "digits"
    data_path: str | None = None
    data_seed: int = 0
    data_size: int | None = None
    train_size: int | None = None
    val_size: int | None = None
    test_size: int | None = None
    crop_padding: int = 0
    flip: bool = False
    arch: str = "resnet9"
    width: float = 1.0
    head_depth: int = 1
    head_width: int | None = None
    head_activation: str = "linear"
    sigma_w: float = 1.0
    scale_head: bool = True
    optimizer: str = "sgd"
    lr: float = 0.01
    momentum: float | None = None
    weight_decay: float = 0.0
    decay_on: str = "all"
    schedule: str = "constant"
    batch_size: int = 128
    epochs: int = 10
    seed: int = 0
    precision: str = "float32"
    eval_every: int = 1
    eval_dense_until: int = 0

    def canonical(self) -> dict:
        """The canonical dict: the store's key of this run (``Store.get(kind, config.canonical())``)."""
        return _as_dict(self)

    def evaluates(self, epoch: int) -> bool:
        """Whether the run evaluates at ``epoch``: every ``eval_every`` epochs, every epoch up to
        ``eval_dense_until``, and the last."""
        return epoch % self.eval_every == 0 or epoch <= self.eval_dense_until or epoch == self.epochs


@dataclass(frozen=True)
class EpochLog:
    """One history row of a run (module docstring); accuracies are fractions, losses cross-entropies."""

    epoch: int
    train_loss: float | None
    train_acc: float
    val_loss: float | None = None
    val_acc: float | None = None
    test_loss: float | None = None
    test_acc: float | None = None
    kernel_norm: float | None = None
    kernel_norms: Mapping[str, float | None] | None = None
    clocks: Mapping[str, float] | None = None
    seconds: float | None = None

    def row(self) -> dict:
        """The stored row (``seconds`` left out where there are none, as in a run trained elsewhere)."""
        return _as_dict(self, skip=() if self.seconds is not None else ("seconds",))

    @classmethod
    def from_row(cls, row: Mapping) -> EpochLog:
        return cls(**row)


_METRICS = ("selected_epoch", "selected_test_acc", "tau_interp", "repair_gap", "final_train_acc", "final_test_acc",
            "initial_kernel_norm", "final_kernel_norm")  # numerics.metrics.forgetting_metrics.run_summary's
_ELSEWHERE = ("run_id", "trained", "clocks_from")  # validation.runs_format's


@dataclass(frozen=True)
class RunSummary:
    """A run's summary: ``run_summary``'s metrics over its valid rows (None, and not stored, when it
    diverged at initialisation), where it diverged and why, its clocks at the horizon and the one
    that governs it, its steps per epoch, training images and final kernel norms; for a run trained
    elsewhere also its ``run_id``, ``trained`` and ``clocks_from``.  Every field may be missing from
    a stored summary (None here); ``to_dict`` gives back the engine's and the run format's summaries
    key for key."""

    diverged_epoch: int | None = None
    diverged_reason: str | None = None
    epochs_run: int | None = None
    clocks: Mapping[str, float] | None = None
    governing_clock: str | None = None
    steps_per_epoch: int | None = None
    n_train: int | None = None
    final_kernel_norms: Mapping[str, float | None] | None = None
    selected_epoch: int | None = None
    selected_test_acc: float | None = None
    tau_interp: int | None = None
    repair_gap: float | None = None
    final_train_acc: float | None = None
    final_test_acc: float | None = None
    initial_kernel_norm: float | None = None
    final_kernel_norm: float | None = None
    run_id: str | None = None
    trained: str | None = None
    clocks_from: str | None = None

    def to_dict(self) -> dict:
        skip = (_METRICS if self.selected_epoch is None else ()) + (_ELSEWHERE if self.trained is None else ())
        out = _as_dict(self, skip=skip)
        return {**{k: out.pop(k) for k in _METRICS if k in out}, **out}  # the stored order: metrics first


@dataclass(frozen=True)
class RunRecord:
    """A run's record: ``done`` or ``diverged`` (its history then ends at the row where it diverged),
    its summary and its history."""

    status: str
    summary: RunSummary
    history: tuple[EpochLog, ...]

    @property
    def diverged(self) -> bool:
        return self.status == "diverged"

    def to_dict(self) -> dict:
        return {"status": self.status, "summary": self.summary.to_dict(), "history": [r.row() for r in self.history]}

    @classmethod
    def from_dict(cls, record: Mapping) -> RunRecord:
        return cls(record["status"], RunSummary(**record["summary"]), tuple(map(EpochLog.from_row, record["history"])))
