"""The base of Spec B's claims: a claim judged from groups of runs, an experiment's blocks or any sweep's.

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).

A claim measures the blocks of its plan's experiments (``forgetting.experiments.Plan``) through
``forgetting.training.measure_groups`` (cached, resumable, fingerprinted) and judges what they
show; the same rule judges every experiment, and ``implicitbias analyse`` judges a sweep's runs with it
(``forgetting.analyse``).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from collections.abc import Callable, Sequence

from implicitbias.claims import Claim, Evidence, Threshold
from implicitbias.claims.forgetting.experiments import Plan
from implicitbias.claims.forgetting.training import measure_groups
from implicitbias.validation.analysis import Group
from implicitbias.validation.data import DataUnavailable

__all__ = ["MIN_SEEDS", "GroupClaim"]

MIN_SEEDS = Threshold(3, "complete seeds a group needs: fewer leave the ANOVA's seed noise nearly unmeasured")


class GroupClaim(Claim):
    """A Spec B claim: judged from groups of runs, whether an experiment's blocks or any sweep's runs.

    ``evidence(groups, label)`` reads its groups' roles (:func:`roles`) and measures what it
    judges; ``measure`` trains (or reads) the blocks of its plan's experiments and calls it, one
    Evidence per experiment; ``implicitbias analyse`` calls ``evidences`` on a sweep's runs (one
    Evidence, unless a claim judges several data sets in them, as C7 its optimiser families).
    """

    def evidence(self, groups: Sequence[Group], label: str = "") -> Evidence:
        raise NotImplementedError

    def evidences(self, groups: Sequence[Group], label: str = "") -> list[Evidence]:
        return [self.evidence(groups, label)]

    def measure(self, ctx, config: Plan) -> list[Evidence]:
        return [e for t, blocks in config.resolved()
                for e in self.evidences_of(lambda: measure_groups(ctx, t, blocks), t.name)]

    def evidences_of(self, measure: Callable[[], list[Group]], label: str) -> list[Evidence]:
        """``evidences`` of the groups ``measure()`` trains or reads, each with the verdicts on two
        seed halves (:meth:`halves`) for claims with simulated operating characteristics; one
        ``not run`` Evidence (``missing``) when their data files are not on this machine, so other
        experiments still run."""
        try:
            groups = measure()
        except DataUnavailable as exc:
            return [Evidence(f"{label}: needs its data files", {}, label, missing=str(exc))]
        return self.stable_evidences(groups, label)

    def stable_evidences(self, groups: Sequence[Group], label: str = "") -> list[Evidence]:
        """``evidences``, each with the verdicts on two seed halves (:meth:`halves`, computed once)
        for claims with simulated operating characteristics (their evidence's ``halves`` field)."""
        out = self.evidences(groups, label)
        if not hasattr(self, "oc_sims"):
            return out
        halves = self.halves(groups, label)
        return [replace(e, data=replace(e.data, halves=[(part, verdicts.get(e.label, "not run")) for part, verdicts in halves]))
                for e in out]

    def halves(self, groups: Sequence[Group], label: str = "") -> list[tuple[list[int], dict[str, str]]]:
        """Stability: the verdicts of the same rule (its intervals, no simulation) on two disjoint
        halves of the seeds, each group split in its own sorted seeds (the first half of every
        group's seeds, then the second), ``[(seeds, {evidence label: verdict}), (seeds, {...})]``;
        empty when a group has fewer than 2 x ``min_seeds`` seeds (``Group.seed_halves``: built once per
        group, so are their summaries).  The halves are judged by a copy of
        the claim without simulation (``oc_sims = 0``): the claim itself, shared by every caller and
        thread, is never changed by judging."""
        if not groups or min(len(g.seeds) for g in groups) < 2 * self.threshold("min_seeds"):
            return []
        unsimulated = copy.copy(self)
        unsimulated.oc_sims = 0
        out = []
        for half in (0, 1):
            sub = [g.seed_halves[half] for g in groups]
            out.append((sorted(set().union(*(g.seeds for g in sub))),
                        {e.label: unsimulated.judge(e).verdict for e in self.evidences(sub, label)}))
        return out
