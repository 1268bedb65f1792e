"""Training orchestration of Spec B's claims: the runs of an experiment's blocks, trained or read, grouped.

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).

Every run is an ordinary run record (kind ``validation.run``, the records ``implicitbias sweep``
writes too), cached, resumable and fingerprinted; with an experiment's ``ensembles`` the runs that
can share a step train together (``validation.batched.train_ensembles``).  :func:`train_experiments`
trains the runs of several experiments in one pool (the report's Spec B sections: no worker waits
for the last ensemble of one experiment before the next starts); :func:`measure_groups` then reads them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from implicitbias.claims.forgetting.experiments import Experiment
from implicitbias.store import canonical_json
from implicitbias.validation import run as run_mod
from implicitbias.validation.analysis import Group, group_runs
from implicitbias.validation.batched import train_ensembles
from implicitbias.validation.data import DataUnavailable

__all__ = ["measure_groups", "train_experiments"]


def train_experiments(ctx, plans: Sequence[tuple[Experiment, Sequence[str]]]) -> None:
    """Train the missing runs of every ``(experiment, blocks)`` of ``plans`` that trains as ensembles,
    in one ``train_ensembles`` call per set of runtime options (one pool, costly ensembles first,
    a run named by several plans trained once).  Experiments whose data are not on this machine are
    left out: the claims that need them say ``not run`` when they measure."""
    pooled: dict[str, tuple[dict, dict[str, dict]]] = {}
    for experiment, blocks in plans:
        configs = [c for b in blocks for c in experiment.configs(b)]
        try:
            run_mod.require_data(configs)
        except DataUnavailable:
            continue
        if experiment.ensembles:
            options, runs = pooled.setdefault(canonical_json(experiment.options), (dict(experiment.options), {}))
            runs.update((canonical_json(c), c) for c in configs)
    for options, runs in pooled.values():
        train_ensembles(list(runs.values()), ctx.store, executor=ctx.executor, progress=ctx.progress, options=options,
                        desc="Spec B ensembles")


def measure_groups(ctx, experiment: Experiment, blocks: Sequence[str]) -> list[Group]:
    """Train (or read from the store) the runs of ``blocks`` of ``experiment``; their groups.

    Every run is stored as an ordinary run record (kind ``validation.run``, the records
    ``implicitbias sweep`` writes too).  With ``experiment.ensembles`` the missing runs train as
    ensembles (``validation.batched.train_ensembles``: every run of these blocks that can share
    a step in one model, costly ensembles first so a pool of workers finishes together);
    otherwise every run is its own cell.  ``DataUnavailable`` before anything runs when the
    blocks' data files are not on this machine.  A group already built in ``ctx`` (the same runs, read
    by another claim) is that group (``Context.groups``), so its summaries are computed once per context.
    """
    configs = [c for b in blocks for c in experiment.configs(b)]
    run_mod.require_data(configs)
    if experiment.ensembles:
        records = train_ensembles(configs, ctx.store, executor=ctx.executor, progress=ctx.progress,
                                  options=experiment.options, desc=f"{experiment.name} ensembles")
    else:
        records = ctx.map(run_mod.KIND, functools.partial(run_mod.execute, options=dict(experiment.options)), configs,
                          desc=f"{experiment.name} runs")
    return [ctx.groups.setdefault(canonical_json([c for c, _ in g.runs]), g) for g in group_runs(list(zip(configs, records)))]
