"""The forgetting clocks (Spec B, C7): cumulative sums of the learning-rate schedule.

With eta_k the learning rate of step k (k = 0, 1, ..., 0-based over all steps of training),
b the batch size and lambda the weight-decay coefficient:

    T_SGD   = (1/b) sum_k eta_k^2     finite-step minibatch noise (radial growth rho^4 - rho_0^4)
    T_L2    = lambda sum_k eta_k      explicit norm decay: initial norm forgotten as exp(-2 T_L2)
    T_adapt = sum_k eta_k             adaptive / normalised steps move ~ eta per step

(derivations with their prefactors in ``implicitbias.theory.radial``, whose law for sign-like steps
counts the norm's growth by sum_k eta_k^2 = b T_SGD, not by T_adapt).  Steps per epoch are
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from implicitbias.theory import params
from implicitbias.theory.display import Tabular

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "OPTIMIZERS",
    "CLOCKS",
    "ADAPTIVE",
    "Clocks",
    "forgetting_clocks",
    "clocks_of_steps",
    "governing_clock",
    "steps_per_epoch",
    "total_steps",
    "MAX_STEPS",
    "MAX_BATCH",
    "MAX_RATE",
]

OPTIMIZERS = ("sgd", "sgd_momentum", "nesterov", "adam", "adamw", "rmsprop", "sign", "muon")
ADAPTIVE = ("adam", "adamw", "rmsprop", "sign", "muon")
CLOCKS = ("T_SGD", "T_L2", "T_adapt")
MAX_STEPS = 10**8
MAX_BATCH = 2**53  # examples per minibatch: beyond, b is not exact in float64 (T_SGD divides by it); N is then
# bounded by MAX_STEPS steps of at most MAX_BATCH examples
# a learning rate or decay beyond this is no training run; with both capped here and at most
# MAX_STEPS steps every clock is finite: (1e100)^2 x 1e8 = 1e208 < 1.8e308, the largest float
MAX_RATE = 1e100


@dataclass(repr=False)
class Clocks(Tabular):
    r"""The forgetting clocks of a run, per epoch and cumulative, as :func:`forgetting_clocks` returns them.

    :math:`T_{\mathrm{SGD}} = \frac{1}{b}\sum_k \eta_k^2`, :math:`T_{L2} = \lambda \sum_k \eta_k`,
    :math:`T_{\mathrm{adapt}} = \sum_k \eta_k`; the lists are indexed by epoch - 1.
    ``to_frame()``: one row per epoch (``rows()``): the clocks' increments in that epoch
    (``T_SGD``, ``T_L2``, ``T_adapt``) and their running totals (``cumulative_T_SGD``...).

    Attributes
    ----------
    governing : str
        The clock that organises the optimiser's forgetting (``T_SGD``, ``T_L2`` or ``T_adapt``).
    per_epoch : dict of str to list of float
        Each clock's increment per epoch.
    cumulative : dict of str to list of float
        Each clock summed up to the end of each epoch.
    steps_per_epoch : int
        :math:`\lceil N/b \rceil` (:math:`\lfloor N/b \rfloor` with ``drop_last``).
    """

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

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=["epoch", *CLOCKS, *(f"cumulative_{c}" for c in CLOCKS)])

    def _caption(self) -> str:
        return (
            f"Clocks of {self.optimizer}: b = {self.batch_size}, N = {self.n_train}, {self.epochs} epochs of "
            f"{self.steps_per_epoch} steps, weight decay {self.weight_decay:g}; governing {self.governing} = "
            f"{self.total[self.governing]:.6g}"
        )

    def __repr__(self) -> str:
        totals = ", ".join(f"{c}={v:.6g}" for c, v in self.total.items())
        return f"Clocks({self.optimizer!r}, epochs={self.epochs}, governing={self.governing!r}, total: {totals})"


def steps_per_epoch(n_train: int, batch_size: int, drop_last: bool = False) -> int:
    """ceil(N / b) minibatches per epoch, floor(N / b) with ``drop_last``; needs 1 <= b <= N, b <= ``MAX_BATCH``."""
    n = params.integer("n_train", n_train, minimum=1)
    b = params.integer("batch_size", batch_size, minimum=1, maximum=min(n, MAX_BATCH))
    return n // b if params.boolean("drop_last", drop_last) else -(-n // b)


def total_steps(n_train: int, batch_size: int, epochs: int, drop_last: bool = False) -> int:
    """epochs x steps_per_epoch: the steps of a training run, checked before anything is built;
    more than ``MAX_STEPS`` is a ``ParameterError`` naming what sets it (epochs, n_train and
    batch_size), never a derived quantity the caller did not pass."""
    spe = steps_per_epoch(n_train, batch_size, drop_last)
    epochs = params.integer("epochs", epochs, minimum=1)
    if spe * epochs > MAX_STEPS:
        rounded = "floor" if drop_last else "ceil"
        name = "n_train" if spe > MAX_STEPS else "epochs"  # n_train alone is too large: one epoch is too long
        raise params.ParameterError(
            f"{name} must give at most {MAX_STEPS:g} steps, got {spe * epochs} (epochs x steps per epoch = {epochs} x "
            f"{spe}, from n_train {int(n_train)} and batch_size {int(batch_size)}: {rounded}(n_train / batch_size))"
        )
    return spe * epochs


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
    r"""The forgetting clocks of a training run, per epoch and cumulative (Spec B, C7).

    With :math:`\eta_k` the learning rate of (0-based, global) step :math:`k`, :math:`b` the batch
    size and :math:`\lambda` the weight decay,

    .. math::

        T_{\mathrm{SGD}} = \frac{1}{b} \sum_k \eta_k^2, \qquad
        T_{L2} = \lambda \sum_k \eta_k, \qquad
        T_{\mathrm{adapt}} = \sum_k \eta_k .

    Per-epoch sums use ``math.fsum``.

    Parameters
    ----------
    optimizer : str
        One of ``OPTIMIZERS`` (``sgd``, ``adam``, ...); it decides the governing clock.
    lr_schedule : float or callable
        A constant rate :math:`\eta > 0`, or a function of the global step :math:`k`, e.g.
        ``schedule("cosine", 0.1, epochs * steps_per_epoch(n_train, batch_size))``.
    batch_size : int
        :math:`b`, with :math:`1 \le b \le N`.
    n_train : int
        :math:`N`, the training set's size.
    epochs : int
        The number of epochs (at most :math:`10^8` steps in all).
    weight_decay : float
        :math:`\lambda \ge 0`.
    drop_last : bool
        Drop the short last minibatch: :math:`\lfloor N/b \rfloor` steps per epoch instead of
        :math:`\lceil N/b \rceil`.

    Returns
    -------
    Clocks
        ``per_epoch`` and ``cumulative`` values of each clock, ``total`` and the ``governing`` clock.

    Raises
    ------
    ParameterError
        An unknown optimiser, :math:`b > N`, :math:`\eta \le 0` or above ``MAX_RATE``, a negative
        decay or one above ``MAX_RATE``, or more than :math:`10^8` steps; within these limits every
        clock is finite.

    Examples
    --------
    >>> import implicitbias as ib
    >>> clocks = ib.forgetting_clocks("sgd", 0.1, batch_size=10, n_train=100, epochs=2)
    >>> clocks.governing, round(clocks.total["T_SGD"], 12)   # 20 steps of 0.1**2 / 10
    ('T_SGD', 0.02)
    """
    params.choice("optimizer", optimizer, OPTIMIZERS)
    steps = total_steps(n_train, batch_size, epochs, drop_last)
    spe = steps_per_epoch(n_train, batch_size, drop_last)
    epochs = steps // spe
    lam = params.real("weight_decay", weight_decay, minimum=0.0, maximum=MAX_RATE)
    if callable(lr_schedule):  # one epoch in memory at a time
        lrs = ([lr_schedule(e * spe + j) for j in range(spe)] for e in range(epochs))
    else:  # a constant rate: every epoch takes the same steps
        lr = params.real("lr", lr_schedule, minimum=0.0, open_minimum=True, maximum=MAX_RATE)
        lrs = itertools.repeat([lr] * spe, epochs)
    return clocks_of_steps(optimizer, lrs, batch_size, n_train, lam)


def _checked_rates(rates: Iterable[float]) -> list[float]:
    """One epoch's rates, each a finite real in [0, MAX_RATE], else ``ParameterError`` naming
    ``lr_schedule(k)``.  Floats are checked at once with numpy: ``params.real`` per step costs about
    20 us, and a run may take 10^8 steps; anything else (or a bad rate) goes through ``params.real``
    one by one, which converts it or names the first bad value."""
    import numpy as np  # here, not at the top: the command line's parsers import this module

    epoch = list(rates)
    if all(isinstance(eta, float) for eta in epoch):
        a = np.asarray(epoch, dtype=float)
        if np.all((a >= 0.0) & (a <= MAX_RATE)):  # NaN fails both comparisons
            return epoch
    return [params.real("lr_schedule(k)", eta, minimum=0.0, maximum=MAX_RATE) for eta in epoch]


def clocks_of_steps(
    optimizer: str,
    lrs: Iterable[Sequence[float]],
    batch_size: int,
    n_train: int,
    weight_decay: float = 0.0,
) -> Clocks:
    """The clocks of the learning rates actually taken: ``lrs[e]`` holds eta_k of every step of
    epoch e + 1 (the calculator's sums: per epoch (1/b) fsum eta_k^2, lambda fsum eta_k, fsum eta_k,
    cumulated over epochs).  :func:`forgetting_clocks` calls it on a schedule's steps, and
    ``validation.meter.ForgettingMeter`` on the rates it saw an optimiser take, so both add the
    same numbers in the same order.  ``lrs`` may be a generator (read once, an epoch at a time).
    ``steps_per_epoch`` of the result is that of the first epoch.
    """
    params.choice("optimizer", optimizer, OPTIMIZERS)
    lam = params.real("weight_decay", weight_decay, minimum=0.0, maximum=MAX_RATE)
    per_epoch: dict[str, list[float]] = {c: [] for c in CLOCKS}
    first: int | None = None
    for rates in lrs:
        epoch = _checked_rates(rates)
        first = len(epoch) if first is None else first
        s1, s2 = math.fsum(epoch), math.fsum(x * x for x in epoch)
        per_epoch["T_SGD"].append(s2 / batch_size)
        per_epoch["T_L2"].append(lam * s1)
        per_epoch["T_adapt"].append(s1)
    if first is None:
        raise params.ParameterError("lrs must hold the rates of at least one epoch, got none")
    cumulative = {c: list(itertools.accumulate(v)) for c, v in per_epoch.items()}
    return Clocks(
        optimizer=optimizer,
        batch_size=int(batch_size),
        n_train=int(n_train),
        epochs=len(per_epoch["T_adapt"]),
        weight_decay=lam,
        steps_per_epoch=first,
        governing=governing_clock(optimizer, lam),
        per_epoch=per_epoch,
        cumulative=cumulative,
    )
