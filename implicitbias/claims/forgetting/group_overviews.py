"""The exhibits of the report's Spec B sections: the groups of runs each experiment's overview shows.

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).

The clocks section shows, before the claims C1-C5, every experiment its report tier runs
(``forgetting.experiments.REPORT_TIERS``): :func:`report_experiments` first trains (or finds in the
store) every block that these experiments and the section's claims (C1-C6) measure, every ensemble at
once so a pool of workers shares them (``forgetting.training.train_experiments``), then reads the
experiment's blocks but the deep ResNets.  The clock-collapse section shows, before C7, the grids C7 measures that the clocks
section does not show already (:func:`collapse_grids`).  Training goes through
``forgetting.training.measure_groups`` (cached, resumable, fingerprinted run records, the ones
``implicitbias sweep`` writes too); the sections lay the groups out (``forgetting.analyse.overview``).
"""

from __future__ import annotations

from dataclasses import dataclass

from implicitbias.claims import registry
from implicitbias.claims.forgetting import experiments
from implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads import CLAIM as C7
from implicitbias.claims.forgetting.group_claim import GroupClaim
from implicitbias.claims.forgetting.training import measure_groups, train_experiments
from implicitbias.validation.analysis import Group

__all__ = ["ExperimentGroups", "train_section", "report_experiments", "collapse_grids"]


@dataclass(frozen=True)
class ExperimentGroups:
    """An experiment and the groups of the blocks a section shows of it."""

    experiment: experiments.Experiment
    groups: list[Group]


def _shown(ctx) -> list[tuple[experiments.Experiment, tuple[str, ...]]]:
    """The experiments report tier ``ctx.tier`` runs, each with its blocks but the deep ResNets."""
    return [(experiments.experiment(spec), experiments.shallow_blocks(spec))
            for spec in experiments.REPORT_TIERS.get(ctx.tier, experiments.REPORT_TIERS["default"])]


def train_section(ctx, section: str) -> None:
    """Train (or find in the store) in one pool what report section ``section`` shows and measures:
    the report tier's experiments and every block the Spec B claims of ``section`` measure in
    ``ctx.tier`` (``forgetting.training.train_experiments``); nothing is analysed."""
    measured = [r for c in registry().values() if isinstance(c, GroupClaim) and c.section == section
                for r in c.config(ctx.tier).resolved()]
    train_experiments(ctx, _shown(ctx) + measured)


def report_experiments(ctx, section: str) -> list[ExperimentGroups]:
    """Every experiment report tier ``ctx.tier`` runs, with the groups of its blocks but the deep ResNets,
    after :func:`train_section` has trained those and what the claims of report section ``section``
    measure."""
    train_section(ctx, section)
    return [ExperimentGroups(t, measure_groups(ctx, t, blocks)) for t, blocks in _shown(ctx)]


def collapse_grids(ctx) -> list[ExperimentGroups]:
    """The experiments C7 measures in ``ctx.tier`` that :func:`report_experiments` does not hold, with
    the groups of the blocks C7 measures (each experiment once)."""
    shown = set(experiments.REPORT_TIERS.get(ctx.tier, experiments.REPORT_TIERS["default"]))
    out = []
    for t, blocks in C7.config(ctx.tier).resolved():
        if t.spec not in shown:
            shown.add(t.spec)
            out.append(ExperimentGroups(t, measure_groups(ctx, t, blocks)))
    return out
