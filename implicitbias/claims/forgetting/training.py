"""Training orchestration of Spec B's claims: the runs of a tier's blocks, trained or read, grouped.

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).

Every run is an ordinary run record (kind ``validation.run``, the records ``implicitbias sweep``
writes too), cached, resumable and fingerprinted; with a tier's ``ensembles`` the runs that can
share a step train together (``validation.batched.train_ensembles``).  :func:`train_tiers` trains
the runs of several tiers in one pool (the report's Spec B sections: no worker waits for the last
ensemble of one tier before the next tier starts); :func:`measure_groups` then reads them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from implicitbias.claims.forgetting.tiers import Tier
from implicitbias.store import canonical_json
from implicitbias.validation import run as run_mod
from implicitbias.validation.analysis import Group, group_runs
from implicitbias.validation.batched import train_ensembles
from implicitbias.validation.data import DataUnavailable

__all__ = ["measure_groups", "train_tiers"]


def train_tiers(ctx, plans: Sequence[tuple[Tier, Sequence[str]]]) -> None:
    """Train the missing runs of every ``(tier, blocks)`` of ``plans`` that trains as ensembles,
    in one ``train_ensembles`` call per set of runtime options (one pool, costly ensembles first,
    a run named by several plans trained once).  Tiers whose data are not on this machine are
    left out: the claims that need them say ``not run`` when they measure."""
    pooled: dict[str, tuple[dict, dict[str, dict]]] = {}
    for tier, blocks in plans:
        configs = [c for b in blocks for c in tier.configs(b)]
        try:
            run_mod.require_data(configs)
        except DataUnavailable:
            continue
        if tier.ensembles:
            options, runs = pooled.setdefault(canonical_json(tier.options), (dict(tier.options), {}))
            runs.update((canonical_json(c), c) for c in configs)
    for options, runs in pooled.values():
        train_ensembles(list(runs.values()), ctx.store, executor=ctx.executor, progress=ctx.progress, options=options,
                        desc="Spec B ensembles")


def measure_groups(ctx, tier: Tier, blocks: Sequence[str]) -> list[Group]:
    """Train (or read from the store) the runs of ``blocks`` of ``tier``; their groups.

    Every run is stored as an ordinary run record (kind ``validation.run``, the records
    ``implicitbias sweep`` writes too).  With ``tier.ensembles`` the missing runs train as
    ensembles (``validation.batched.train_ensembles``: every run of these blocks that can share
    a step in one model, costly ensembles first so a pool of workers finishes together);
    otherwise every run is its own cell.  ``DataUnavailable`` before anything runs when the
    blocks' data files are not on this machine.
    """
    configs = [c for b in blocks for c in tier.configs(b)]
    run_mod.require_data(configs)
    if tier.ensembles:
        records = train_ensembles(configs, ctx.store, executor=ctx.executor, progress=ctx.progress,
                                  options=tier.options, desc=f"{tier.name} ensembles")
    else:
        records = ctx.map(run_mod.KIND, functools.partial(run_mod.execute, options=dict(tier.options)), configs,
                          desc=f"{tier.name} runs")
    return group_runs(list(zip(configs, records)))
