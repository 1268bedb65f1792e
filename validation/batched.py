"""Ensembles: the runs that can share a step (every sigma_w x seed x optimiser setting) as one model.

Runs that share data, architecture, batch size, horizon and evaluation epochs can step in
lockstep whatever their sigma_w, seed and optimiser hyperparameters (``STEP_FREE``: optimiser,
lr, momentum, decay and where it acts, schedule): their parameters and BatchNorm buffers are stacked along a
leading member axis (``torch.func.stack_module_state``) and one forward pass evaluates all G
members, member g on its own minibatch (drawn from its own seed, exactly as its solo run draws
it; ``validation.data.batches``).  The loss sum_g CE_g has gradient CE_g' in block g, so every
member gets the gradient it would get alone; each hyperparameter setting then steps its own
members with its own optimiser and schedule.  The step itself (the two engines of the forward
pass, each setting's optimiser on its members' slices) is ``validation.trainers.EnsembleTrainer``'s;
a solo run of the toy MLP takes it with one member, so a member is bit-for-bit its solo run.

Speed: ``benchmarks/bench_batched.py`` (``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor

from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params
from implicitbias.validation import external
from implicitbias.validation import run as run_mod
from implicitbias.validation.groups import MEMBER_KEYS, group_by_setting, setting_key
from implicitbias.validation.precision import parameter_dtype
from implicitbias.validation.trainers import trainer_for

__all__ = ["GROUP_KIND", "STEP_FREE", "MAX_CPU_MEMBERS", "ensembles", "execute_group", "train_ensembles", "run_groups"]

GROUP_KIND = "validation.ensemble"
STEP_FREE = (*MEMBER_KEYS, "optimizer", "lr", "momentum", "weight_decay", "decay_on", "schedule")  # members may differ in these
# Members per ensemble on a CPU: beyond about 50 the toy MLP's activations (b 64 x 64 units x G) leave a
# core's L2 cache and the images per CPU second fall (benchmarks/RESULTS.md, "Ensembles across settings").
MAX_CPU_MEMBERS = 48
def ensembles(configs: Sequence[Mapping], max_members: int | None = None) -> list[list[dict]]:
    """``configs`` (canonical run configs) grouped into ensembles: runs that can share a step
    (equal but for ``STEP_FREE``), first-seen order; a group of more than ``max_members`` runs is
    cut into the fewest ensembles of at most that many, their sizes within one of each other,
    each setting's runs kept together in order."""
    out = []
    for group in group_by_setting(configs, free=STEP_FREE):
        group = [c for members in group_by_setting(group) for c in members]
        n = len(group)
        k = math.ceil(n / max_members) if max_members else 1
        out += [group[i * n // k : (i + 1) * n // k] for i in range(k)]
    return out


def execute_group(group: Mapping, *, options: Mapping | None = None) -> dict:
    """Train ``group["runs"]`` (configs that share a step: equal but for ``STEP_FREE``) as one ensemble.

    Returns ``{"records": [...]}``, one run record (``validation.run``) per config, in order;
    a single run trains as its solo run does (``validation.trainers.trainer_for``).
    ``options`` as in ``validation.run.execute`` (device, threads) plus ``engine``
    (auto / folded / vmap).
    """
    options = dict(options or {})
    configs = [run_mod.run_config(c) for c in group["runs"]]
    if not configs:
        raise params.ParameterError("runs of an ensemble must be a non-empty list of run configs")
    canonical = [c.canonical() for c in configs]
    if len({setting_key(c, STEP_FREE) for c in canonical}) != 1:
        raise params.ParameterError(f"runs of an ensemble must differ only in {', '.join(STEP_FREE)}")
    order = [i for members in group_by_setting(range(len(configs)), lambda i: canonical[i]) for i in members]
    ordered = [configs[i] for i in order]
    device = run_mod.resolve_device(options.get("device"))
    data = run_mod.dataset_for(configs[0])
    dtype = parameter_dtype(configs[0].precision)
    with torch_threads(options.get("threads")):
        models = [run_mod.build(c, data, device, dtype) for c in ordered]
        trainer = trainer_for(models, options.get("engine", "auto"))
        trained = run_mod.train(ordered, trainer, data, device)
    records = [None] * len(configs)
    for i, record in zip(order, trained):
        records[i] = record
    return {"records": records}


def _cost(group: Sequence[Mapping]) -> float:
    """Relative cost of an ensemble (members x epochs x training images x width^2), to start long ones first."""
    c = group[0]
    return len(group) * c["epochs"] * len(run_mod.dataset_for(c).y_train) * c["width"] ** 2


def train_ensembles(configs: Sequence[Mapping], store, *, executor: Executor | None = None, progress: bool = True,
                    options: Mapping | None = None, desc: str = "ensembles") -> list[dict]:
    """The run records of ``configs`` (canonical), in order; the missing ones trained as ensembles.

    The runs whose record (kind ``validation.run``) is missing are grouped into ensembles
    (:func:`ensembles`; at most ``options["max_members"]`` each, by default ``MAX_CPU_MEMBERS`` on
    a CPU and all on a GPU), costly ones submitted first so a pool of workers finishes together;
    the ensemble (kind ``validation.ensemble``, keyed by its runs) is the unit of caching and
    resumption, and each finished ensemble's members are stored as ordinary run records of the
    same code as ``validation.run.execute``, so nothing completed is lost or repeated and a sweep
    run solo or batched reads the same records.
    """
    options = dict(options or {})
    on_cpu = run_mod.resolve_device(options.get("device")).type == "cpu"
    cap = options.pop("max_members", MAX_CPU_MEMBERS if on_cpu else None)
    code = run_mod.run_codes(store)
    records = [store.get(run_mod.KIND, c, code=code(c)) for c in configs]
    missing = [c for c, r in zip(configs, records) if r is None]
    todo = sorted(ensembles(missing, cap), key=_cost, reverse=True)
    fn = functools.partial(execute_group, options=options)
    results = store.map(GROUP_KIND, fn, [{"runs": g} for g in todo], executor=executor, progress=progress, desc=desc,
                        code=functools.partial(_group_code, store))
    for group, result in zip(todo, results):
        for config, record in zip(group, result["records"]):  # members are stored as ordinary runs of the same code
            store.put(run_mod.KIND, config, record, code=code(config))
    # only the runs that were missing are read back: what was found stays as it was read
    return [r if r is not None else store.get(run_mod.KIND, c, code=code(c)) for c, r in zip(configs, records)]


def _group_code(store, group: Mapping) -> str:
    """The code of an ensemble: :func:`execute_group`'s with the user modules its runs name (one
    model and one data set for every member)."""
    return store.code_of(execute_group, modules=external.modules(group["runs"][0]))


def run_groups(spec, store, *, executor: Executor | None = None, progress: bool = True,
               options: Mapping | None = None) -> list[dict]:
    """Run a spec's runs as ensembles (:func:`train_ensembles`); every record, in spec order."""
    return train_ensembles(spec.configs, store, executor=executor, progress=progress, options=options,
                           desc=f"sweep {spec.name} (ensembles)")
