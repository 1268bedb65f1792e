"""Radial memory as a measurement: how much of its initial norm a group of runs still carries at a
checkpoint, and the clock in units of the initial norm its radial law (``theory.radial``) puts there.

A group is the runs of one setting over sigma_w x seeds; ``validation.analysis.radial_memory_of``
reads each run at a checkpoint into a :class:`RadialRun`.  Of the group (:func:`radial_memory`):

    slope     d log rho_c / d log sigma_w per seed (``forgetting_metrics.norm_slope``; rho_c the joint
              norm of the scale-invariant kernels at the checkpoint c, the norm the radial laws and X
              describe; the total kernel norm ||W_c|| for runs whose records do not say which kernels
              are scale-invariant), its mean over seeds with a t interval
              (``memory_stats.t_interval``): 1 a norm proportional to the initial one, 0 a common one.
              The head is not scale-invariant and its norm follows the logits' growth, not the radial
              dynamics: on the toy its slope is 0.1-0.5 where the kernels' is 0.85 (benchmarks/RESULTS.md,
              "A probe for issue 27 item 3"), so the total norm would mix two mechanisms
    X         the clock in units of the initial norm at c (``theory.radial.in_units``), of the
              scale-invariant kernels together (scaling all of them leaves the loss unchanged, so
              the laws hold for their concatenation: rho^2 the sum of their squared norms, D the sum
              of their sizes): adam D sum eta^2 / rho_0^2, coupled or decoupled decay 2 T_L2, heavy
              ball 2 T_L2 / (1 - beta).  SGD's 2 tr Sigma T_SGD / rho_0^4 needs tr Sigma, which is
              not measured: its X is the realised one (below), which equals 2 sum eta^2 gamma^2 /
              rho_0^4 under the recursion
    realised  rho_c^p / rho_0^p - 1 for the laws that add increments of rho^p (sgd p = 4, adam 2):
              the X the norms show; NaN for the decay laws (their equilibrium hides u_0's share)
    memory    the law's memory fraction at X (1 / (1 + X) or exp(-X))

X, realised and memory at the smallest and the largest sigma_w (each the mean over that sigma_w's
runs).  Source: Hoffer et al. (2018), van Laarhoven (2017), Li & Arora (2020) (the radial
dynamics); Das et al. arXiv 2605.29152 (the clocks); issue 27 (memory in units of the initial norm).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from implicitbias.numerics.metrics.forgetting_metrics import norm_slope
from implicitbias.numerics.metrics.memory_stats import Interval, t_interval
from implicitbias.theory import params
from implicitbias.theory.radial import LAWS, derive, in_units, memory_fraction

__all__ = ["RadialRun", "RadialMemory", "radial_memory", "seed_slopes"]


@dataclass(frozen=True)
class RadialRun:
    """One run at a checkpoint: its sigma_w and seed, its total kernel norm there (``norm``), the
    scale-invariant kernels' joint norm at initialisation (``rho0``) and there (``rho``), their size
    D (``size``: entries, Muon rows), the law's clock there (T_SGD, T_L2 or sum eta^2) and the
    momentum ``beta``; NaN where a record does not say."""

    sigma_w: float
    seed: int
    norm: float
    rho0: float = math.nan
    rho: float = math.nan
    size: float = math.nan
    clock: float = math.nan
    beta: float = 0.0


@dataclass(frozen=True)
class RadialMemory:
    """The radial memory of a group at a checkpoint (module docstring): the norm ``slope`` over
    ``n`` seeds, and at the (smallest, largest) ``sigma_w`` the clock ``x`` in units of the initial
    norm, the ``realised`` X of the norms and the law's ``memory`` fraction; ``measured``: X is the
    realised one (sgd: tr Sigma unknown)."""

    law: str
    checkpoint: str
    slope: Interval
    n: int
    sigma_w: tuple[float, float]
    x: tuple[float, float]
    realised: tuple[float, float]
    memory: tuple[float, float]
    measured: bool

    def describe(self) -> str:
        """``norm slope 0.30 [0.28, 0.32] (4 seeds); X 12 at sigma_w 0.25, 0.31 at 2.5 (adam law:
        D sum eta^2 / rho_0^2; realised 5.1, 0.2; memory 0.08, 0.76)`` at its checkpoint."""
        s = self.slope
        (lo, hi), (xlo, xhi) = self.sigma_w, self.x
        law = f"{self.law} law: {_X_TEXT[self.law] if self.law == 'sgd' or not self.measured else _MEASURED}"
        realised = "" if self.measured or math.isnan(self.realised[0] + self.realised[1]) else (
            f"; realised {_g(self.realised[0])}, {_g(self.realised[1])}")
        return (f"norm slope {s.estimate:.2f} [{s.lo:.2f}, {s.hi:.2f}] ({self.n} seeds); X {_g(xlo)} at sigma_w "
                f"{lo:g}, {_g(xhi)} at {hi:g} ({law}{realised}; memory {_g(self.memory[0])}, {_g(self.memory[1])})")

    def numbers(self) -> dict:
        """The fields as plain numbers (a verdict's ``numbers``)."""
        return asdict(self)


_X_TEXT = {"sgd": "realised rho^4 / rho_0^4 - 1, tr Sigma unknown", "sgd_l2": "2 T_L2", "adamw": "2 T_L2",
           "heavy_ball_l2": "2 T_L2 / (1 - beta)", "adam": "D sum eta^2 / rho_0^2"}


_MEASURED = "realised rho^p / rho_0^p - 1, the law's clock not used for this optimiser"


def _g(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.2g}"


def _mean(values) -> float:
    v = [x for x in values if math.isfinite(x)]
    return float(np.mean(v)) if v else math.nan


def seed_slopes(runs: Sequence[RadialRun]) -> dict[int, float]:
    """Per seed, d log rho / d log sigma_w at the runs' checkpoint (``forgetting_metrics.norm_slope``):
    ``rho`` where it is known, else the total norm ``norm`` (module docstring); seeds with at least two
    sigma_w."""
    by_seed: dict[int, dict[float, float]] = {}
    for r in runs:
        by_seed.setdefault(r.seed, {})[r.sigma_w] = r.rho if math.isfinite(r.rho) else r.norm
    return {seed: norm_slope(sorted(t), [t[s] for s in sorted(t)]) for seed, t in by_seed.items() if len(t) >= 2}


def radial_memory(law: str, checkpoint: str, runs: Sequence[RadialRun], measured: bool = False) -> RadialMemory:
    """The radial memory of a group's ``runs`` at ``checkpoint`` under radial law ``law`` (module
    docstring); a seed's slope needs two of its sigma_w, and reads ``rho`` where it is known, else
    ``norm``.  ``measured``: X is the realised one although the law names a clock, for an optimiser
    whose steps break the law's premise (Muon: its orthogonalised step is not orthogonal to W, so the
    norm also moves at first order; on the toy its realised X is 30-60x the adam law's)."""
    params.choice("law", law, LAWS)
    if not runs:
        raise params.ParameterError("runs must hold at least one run of the group")
    rule = derive(law)
    slopes = list(seed_slopes(runs).values())
    rho0, rho = np.array([r.rho0 for r in runs]), np.array([r.rho for r in runs])
    with np.errstate(divide="ignore", invalid="ignore"):
        realised = (rho / rho0) ** rule.power - 1 if rule.power else np.full(len(runs), math.nan)
    measured = measured or law == "sgd"
    if measured:
        x = realised
    else:
        x = in_units(law, [r.clock for r in runs], rho_0=rho0, D=[r.size for r in runs], beta=[r.beta for r in runs])
    sigmas = sorted({r.sigma_w for r in runs})
    ends = (sigmas[0], sigmas[-1])
    at = [[i for i, r in enumerate(runs) if r.sigma_w == s] for s in ends]
    xs = tuple(_mean(x[i] for i in idx) for idx in at)
    return RadialMemory(law, checkpoint, t_interval(slopes), len(slopes), ends, xs,
                        tuple(_mean(realised[i] for i in idx) for idx in at),
                        tuple(float(memory_fraction(law, v)) for v in xs), measured)
