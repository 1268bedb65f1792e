"""The forgetting clocks (Spec B, C7): cumulative sums of the learning-rate schedule.

With eta_k the learning rate of step k (k = 0, 1, ..., 0-based over all steps of training),
b the batch size and lambda the weight-decay coefficient:

    T_SGD   = (1/b) sum_k eta_k^2     finite-step minibatch noise (radial growth rho^4 - rho_0^4)
    T_L2    = lambda sum_k eta_k      explicit norm decay: initial norm forgotten as exp(-2 T_L2)
    T_adapt = sum_k eta_k             adaptive / normalised steps move ~ eta per step

(derivations with their prefactors in ``implicitbias.theory.radial``).  Steps per epoch are
ceil(N / b), or floor(N / b) with ``drop_last``; the nominal b is used for every step, also the
short last one (a documented choice: T_SGD is the clock's definition, not a noise estimate).

Which clock organises which optimiser (``governing_clock``): plain SGD and heavy ball without
decay -> T_SGD; SGD-family with coupled L2 decay -> T_L2; Adam, AdamW, RMSProp, sign descent and
Muon -> T_adapt (their per-step displacement is ~ eta whatever the gradient scale).

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (abstract and summary).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from implicitbias.theory import params
from implicitbias.theory.schedules import schedule

__all__ = [
    "OPTIMIZERS",
    "CLOCKS",
    "ADAPTIVE",
    "Clocks",
    "forgetting_clocks",
    "clocks_of_steps",
    "governing_clock",
    "steps_per_epoch",
]

OPTIMIZERS = ("sgd", "sgd_momentum", "nesterov", "adam", "adamw", "rmsprop", "sign", "muon")
ADAPTIVE = ("adam", "adamw", "rmsprop", "sign", "muon")
CLOCKS = ("T_SGD", "T_L2", "T_adapt")
MAX_STEPS = 10**8


@dataclass
class Clocks:
    """Clock values per epoch and cumulative (lists indexed by epoch - 1)."""

    optimizer: str
    batch_size: int
    n_train: int
    epochs: int
    weight_decay: float
    steps_per_epoch: int
    governing: str
    per_epoch: dict[str, list[float]] = field(default_factory=dict)
    cumulative: dict[str, list[float]] = field(default_factory=dict)

    @property
    def total(self) -> dict[str, float]:
        """The clocks at the end of training."""
        return {c: v[-1] for c, v in self.cumulative.items()}

    def rows(self) -> list[list]:
        """[epoch, per-epoch T_SGD, T_L2, T_adapt, cumulative T_SGD, T_L2, T_adapt] per epoch."""
        return [
            [e + 1, *(self.per_epoch[c][e] for c in CLOCKS), *(self.cumulative[c][e] for c in CLOCKS)]
            for e in range(self.epochs)
        ]


def steps_per_epoch(n_train: int, batch_size: int, drop_last: bool = False) -> int:
    """ceil(N / b) minibatches per epoch, floor(N / b) with ``drop_last``; needs 1 <= b <= N."""
    n = params.integer("n_train", n_train, minimum=1)
    b = params.integer("batch_size", batch_size, minimum=1, maximum=n)
    return n // b if drop_last else -(-n // b)


def governing_clock(optimizer: str, weight_decay: float = 0.0) -> str:
    """The clock that organises ``optimizer``'s forgetting (see the module docstring)."""
    params.choice("optimizer", optimizer, OPTIMIZERS)
    if optimizer in ADAPTIVE:
        return "T_adapt"
    return "T_L2" if weight_decay > 0 else "T_SGD"


def forgetting_clocks(
    optimizer: str,
    lr_schedule: float | Callable[[int], float],
    batch_size: int,
    n_train: int,
    epochs: int,
    weight_decay: float = 0.0,
    drop_last: bool = False,
) -> Clocks:
    """T_SGD, T_L2, T_adapt per epoch and cumulative for a training run.

    ``lr_schedule``: a number (constant rate) or a function of the 0-based global step k, e.g.
    ``schedule("cosine", 0.1, epochs * steps_per_epoch(n_train, batch_size))``.  Bad input
    (unknown optimiser, b > N, lr <= 0, negative decay, more than 1e8 steps) raises
    ``ParameterError``.  Per-epoch sums use ``math.fsum``.
    """
    params.choice("optimizer", optimizer, OPTIMIZERS)
    spe = steps_per_epoch(n_train, batch_size, drop_last)
    epochs = params.integer("epochs", epochs, minimum=1)
    lam = params.real("weight_decay", weight_decay, minimum=0.0)
    if spe * epochs > MAX_STEPS:
        raise params.ParameterError(f"epochs must give at most {MAX_STEPS:g} steps, got {spe * epochs} steps")
    if callable(lr_schedule):
        eta = lr_schedule
    else:
        eta = schedule("constant", params.real("lr", lr_schedule, minimum=0.0, open_minimum=True), spe * epochs)
    lrs = [[params.real("lr_schedule(k)", eta(e * spe + j), minimum=0.0) for j in range(spe)] for e in range(epochs)]
    return clocks_of_steps(optimizer, lrs, batch_size, n_train, lam)


def clocks_of_steps(
    optimizer: str,
    lrs: Sequence[Sequence[float]],
    batch_size: int,
    n_train: int,
    weight_decay: float = 0.0,
) -> Clocks:
    """The clocks of the learning rates actually taken: ``lrs[e]`` holds eta_k of every step of
    epoch e + 1 (the calculator's sums: per epoch (1/b) fsum eta_k^2, lambda fsum eta_k, fsum eta_k,
    cumulated over epochs).  :func:`forgetting_clocks` calls it on a schedule's steps, and
    ``validation.meter.ForgettingMeter`` on the rates it saw an optimiser take, so both add the
    same numbers in the same order.  ``steps_per_epoch`` of the result is that of the first epoch.
    """
    params.choice("optimizer", optimizer, OPTIMIZERS)
    lam = params.real("weight_decay", weight_decay, minimum=0.0)
    if not lrs:
        raise params.ParameterError("lrs must hold the rates of at least one epoch, got none")
    per_epoch: dict[str, list[float]] = {c: [] for c in CLOCKS}
    for epoch in lrs:
        s1, s2 = math.fsum(epoch), math.fsum(x * x for x in epoch)
        per_epoch["T_SGD"].append(s2 / batch_size)
        per_epoch["T_L2"].append(lam * s1)
        per_epoch["T_adapt"].append(s1)
    cumulative = {c: list(itertools.accumulate(v)) for c, v in per_epoch.items()}
    return Clocks(
        optimizer=optimizer,
        batch_size=int(batch_size),
        n_train=int(n_train),
        epochs=len(lrs),
        weight_decay=lam,
        steps_per_epoch=len(lrs[0]),
        governing=governing_clock(optimizer, lam),
        per_epoch=per_epoch,
        cumulative=cumulative,
    )
