"""Radial memory in Spec B's memory claims (C1-C5), and regimes matched in clock units (issue 27).

Every C1-C5 verdict states, per group at the checkpoint it judges, the radial memory
(``validation.analysis.radial_memory_of``, ``numerics.metrics.radial_memory``): the norm slope
d log||W|| / d log sigma_w with its t interval and the clock in units of the initial norm X of the
group's radial law (``theory.radial``) at the smallest and largest sigma_w.

A comparison with the low-lr SGD baseline is judged only where the clocks are on the paper's side
at the judged checkpoint (Das et al. arXiv 2605.29152: adaptive methods have forgotten their
initial norm where low-lr SGD keeps it); otherwise the verdict is ``inconclusive`` with the reason
``regime: clocks not matched`` and the numbers.  Targets (issue 27, item 3):

    FORGOTTEN_CLOCK = 3    a forgetting group's X at the largest sigma_w (memory 1 / (1 + X) <= 1/4
                           of the initial norm's share; exp(-X) <= 0.05 for the decay laws)
    FORGOTTEN_SLOPE = 0.1  its norm slope: a final norm nearly independent of sigma_w
    KEPT_SLOPE      = 0.8  the low-lr SGD baseline's norm slope: a norm nearly proportional to sigma_w

A claim applies the targets its thresholds name (``regime_misses``, called by
``forgetting_claim.ForgettingClaim``): with ``forgotten_clock`` and ``forgotten_slope`` (C3) every
compared group must meet both and every run of the baseline and of the groups must interpolate;
with ``kept_slope`` (C3, C4) the baseline must meet it.  The point
estimates are compared with the targets: they say whether the design reached its regime, the
intervals beside them are stated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from implicitbias.claims import Threshold
from implicitbias.numerics.metrics.radial_memory import RadialMemory
from implicitbias.validation.analysis import CHECKPOINTS, Group, GroupSummary, radial_memory_of

__all__ = ["FORGOTTEN_CLOCK", "FORGOTTEN_SLOPE", "KEPT_SLOPE", "NOT_MATCHED", "radial_by_checkpoint", "radial_context",
           "radial_numbers", "regime_misses", "regime_premise"]

FORGOTTEN_CLOCK = Threshold(3.0, "X at the largest sigma_w >= 3: at most 1/4 of the initial norm's share left "
                                 "(1 / (1 + X); exp(-X) <= 0.05 with decay): the group has forgotten its norm")
FORGOTTEN_SLOPE = Threshold(0.1, "norm slope <= 0.1: the final norm nearly independent of sigma_w (0 = a common norm)")
KEPT_SLOPE = Threshold(0.8, "low-lr SGD baseline norm slope >= 0.8: its norm stays nearly proportional to sigma_w "
                            "(1 = fully kept), as in the paper's low-lr SGD")
NOT_MATCHED = "regime: clocks not matched"


def radial_by_checkpoint(group: Group) -> dict[str, RadialMemory | None]:
    """The group's radial memory at every checkpoint of ``CHECKPOINTS``."""
    return {cp: radial_memory_of(group, cp) for cp in CHECKPOINTS}


def radial_context(labels: Sequence[str], radials: Sequence[RadialMemory | None], checkpoint: str) -> str:
    """``radial memory at the interpolating checkpoint: label: norm slope ...; label: ...``."""
    said = "; ".join(f"{label}: {'no run has this checkpoint' if r is None else r.describe()}"
                     for label, r in zip(labels, radials))
    return f"radial memory at the {checkpoint} checkpoint: {said}"


def radial_numbers(labels: Sequence[str], radials: Sequence[RadialMemory | None]) -> dict[str, dict | None]:
    """{label: the radial memory's fields} (a verdict's ``numbers``)."""
    return {label: None if r is None else r.numbers() for label, r in zip(labels, radials)}


def _x_hi(r: RadialMemory | None) -> float:
    return math.nan if r is None else r.x[1]


def _slope(r: RadialMemory | None) -> float:
    return math.nan if r is None else r.slope.estimate


def regime_misses(baseline: GroupSummary, base_radial: RadialMemory | None, groups: Sequence[GroupSummary],
                  group_radials: Sequence[RadialMemory | None], kept: float | None = None,
                  forgotten: tuple[float, float] | None = None) -> list[str]:
    """The targets the baseline and the compared groups miss (module docstring), as text: with
    ``kept``, the baseline's norm slope >= kept; with ``forgotten`` = (clock, slope), every group's X
    at the largest sigma_w >= clock and norm slope <= slope, and every run interpolating.  Summaries
    from ``validation.analysis.summarise``."""
    misses = []
    if kept is not None:
        slope = _slope(base_radial)
        if not slope >= kept:
            misses.append(f"low-lr SGD baseline norm slope {slope:.2f} < {kept:g}")
    if forgotten is not None:
        clock, flat = forgotten
        for g, r in zip(groups, group_radials):
            x, slope = _x_hi(r), _slope(r)
            if not x >= clock:
                where = f"sigma_w {r.sigma_w[1]:g}" if r is not None else "the largest sigma_w"
                misses.append(f"{g.label}: X at {where} {x:.2g} < {clock:g}")
            if not slope <= flat:
                misses.append(f"{g.label}: norm slope {slope:.2f} > {flat:g}")
        for s in (baseline, *groups):
            if not s.all_interpolate:
                misses.append(f"{s.label}: {s.n_interpolated}/{s.n_runs} runs interpolate")
    return misses


def regime_premise(misses: Sequence[str]) -> str:
    """``regime: clocks not matched (miss; miss)``, or "" when every target is met."""
    return f"{NOT_MATCHED} ({'; '.join(misses)})" if misses else ""
