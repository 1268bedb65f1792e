"""A sigma_w group trained as one vectorised model (torch.func.vmap over stacked parameters).

The runs of a sweep that differ only in sigma_w share data, minibatch order, augmentation and the
unscaled He draw (same seed), so they can step in lockstep: the G models' parameters and
BatchNorm buffers are stacked along a leading axis (``torch.func.stack_module_state``) and one
``vmap(functional_call)`` evaluates all G networks on the same minibatch, giving logits of shape
(G, B, K).  The loss sum_g CE_g has gradient CE_g' in block g, and the optimiser is elementwise
(SGD, momentum, Nesterov, Adam, AdamW, RMSProp, sign descent), so every block takes exactly the
step it would take alone.  BatchNorm's running statistics are batched buffers, updated in place
per model inside vmap.  Muon is not elementwise (Newton-Schulz acts on each whole matrix), so a
Muon group is trained one model at a time (same record format).
``tests/test_batched_sigma.py`` checks batched == one-by-one to float tolerance.

Speed (``benchmarks/bench_batched.py``): on a 2-core CPU a group of 6 tiny ResNet-9s trains about
2x faster batched than one by one; the per-step Python overhead is shared, but vmap's grouped
convolutions and their backward are slower per model than plain convolutions on CPU.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from concurrent.futures import Executor

import torch
from torch.func import functional_call, stack_module_state, vmap

from implicitbias.validation.init import kernel_norms
from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params
from implicitbias.validation import run as run_mod
from implicitbias.validation.sweep import sigma_groups

__all__ = ["GROUP_KIND", "StackedTrainer", "execute_group", "run_groups"]

GROUP_KIND = "validation.sigma_group"


class StackedTrainer(run_mod.Trainer):
    """G copies of one architecture as stacked tensors, evaluated with ``vmap(functional_call)``."""

    def __init__(self, models: list[torch.nn.Module]):
        super().__init__(models[0])
        self.params, self.buffers = stack_module_state(models)
        self.base = copy.deepcopy(models[0]).to("meta")

        def call(p, b, x):
            return functional_call(self.base, (p, b), (x,))

        self._vmapped = vmap(call, in_dims=(0, 0, None))

    def logits(self, x):
        return self._vmapped(self.params, self.buffers, x)

    def parameters(self):
        return list(self.params.values())

    @torch.no_grad()
    def norms(self):
        out = []
        for g in range(len(next(iter(self.params.values())))):
            for name, p in self.model.named_parameters():
                p.copy_(self.params[name][g])
            out.append(kernel_norms(self.model))
        return out

    def train_mode(self, mode):
        self.base.train(mode)


def execute_group(group: Mapping, *, options: Mapping | None = None) -> dict:
    """Train ``group["runs"]`` (configs equal except sigma_w) together; ``{"records": [...]}`` in order.

    ``options`` as in ``validation.run.execute`` (device, threads).
    """
    options = dict(options or {})
    configs = [run_mod.canonical_config(c) for c in group["runs"]]
    rest = {json.dumps({k: v for k, v in c.items() if k != "sigma_w"}, sort_keys=True) for c in configs}
    if len(rest) != 1:
        raise params.ParameterError("runs of a batched group must differ only in sigma_w")
    if configs[0]["optimizer"] == "muon":  # not elementwise: its group runs one model at a time
        return {"records": [run_mod.execute(c, options=options) for c in configs]}
    device = run_mod.resolve_device(options.get("device"))
    data = run_mod.dataset_for(configs[0])
    dtype = torch.float64 if configs[0]["precision"] == "float64" else torch.float32
    with torch_threads(options.get("threads")):
        models = [run_mod.build(c, data, device, dtype) for c in configs]
        return {"records": run_mod.train(configs, StackedTrainer(models), data, device)}


def run_groups(spec, store, *, executor: Executor | None = None, progress: bool = True,
               options: Mapping | None = None) -> list[dict]:
    """Run a spec's sigma_w groups batched; store each member's record as a normal run record.

    The group (kind ``validation.sigma_group``) is the unit of caching: groups whose members are
    all done are skipped; a finished group's members are written under ``validation.run``.
    """
    code = store.code_of(run_mod.execute)  # members are stored as ordinary runs of the same code
    todo = [g for g in sigma_groups(spec.configs) if any(store.get(run_mod.KIND, c, code=code) is None for c in g)]
    fn = functools.partial(execute_group, options=options)
    results = store.map(GROUP_KIND, fn, [{"runs": g} for g in todo], executor=executor, progress=progress,
                        desc=f"sweep {spec.name} (batched)")
    for group, result in zip(todo, results):
        for config, record in zip(group, result["records"]):
            store.put(run_mod.KIND, config, record, code=code)
    return [store.get(run_mod.KIND, c, code=code) for c in spec.configs]
