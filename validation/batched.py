"""Ensembles: the runs of one setting (every sigma_w x seed) trained as one vectorised model.

The runs of a sweep that differ only in sigma_w and seed share data, architecture, optimiser,
schedule, batch size and horizon, so they can step in lockstep: their parameters and BatchNorm
buffers are stacked along a leading member axis (``torch.func.stack_module_state``) and one
forward pass evaluates all G members, member g on its own minibatch (drawn from its own seed,
exactly as its solo run draws it; ``validation.data.batches``).  The loss sum_g CE_g has
gradient CE_g' in block g, so every member takes the step it would take alone.  Two engines:

- ``folded`` (networks of Flatten, bias-free Linear, BatchNorm1d, ReLU and the linear ``Head``:
  the toy MLP): each Linear is one ``torch.bmm`` over the member axis, each BatchNorm one
  ``F.batch_norm`` over the members' channels folded side by side ((B, G C), running statistics
  as views of the stacked buffers).  ATen's CPU ``bmm`` computes each member's product on its
  own, the same way whatever the number of members, so a member's numbers do not depend on the
  ensemble it is in; a solo run of such a model is this engine with one member
  (:func:`trainer_for`, called by ``validation.run.execute``), so every member is bit-for-bit its
  solo run on any CPU (``tests/test_batched_sigma.py``, float64).  Against the plain module
  (``nn.Linear``'s ``addmm``, whose BLAS kernel may sum in another order than ``bmm`` on some
  CPUs) it agrees to float64 rounding.
  Written by hand because ``torch.func.vmap``'s BatchNorm rule applies the affine transform
  outside the fused kernel, which changes the last bit, and its per-op batching costs about
  1.4x the time of these explicit calls on the toy MLP.
- ``vmap`` (anything else, the ResNets): ``vmap(functional_call)`` over the stacked state;
  equal to the solo runs to rounding (grouped convolutions sum in another order).

Optimisers: elementwise ones (SGD, momentum, Nesterov, Adam, AdamW, RMSProp, sign descent) step
the stacked tensors directly.  Muon is not elementwise (Newton-Schulz acts on each whole
matrix), so each member gets its own optimiser over views of its slice of the stacked tensors.

Speed: ``benchmarks/bench_batched.py`` (``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from concurrent.futures import Executor

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params
from implicitbias.validation import run as run_mod
from implicitbias.validation.groups import group_by_setting, setting_key
from implicitbias.validation.init import frobenius_norm, kernel_modules, kernel_norm_total
from implicitbias.validation.models import Head, Network

__all__ = ["GROUP_KIND", "ELEMENTWISE", "EnsembleTrainer", "folds", "trainer_for", "execute_group", "run_groups"]

GROUP_KIND = "validation.ensemble"
ELEMENTWISE = ("sgd", "sgd_momentum", "nesterov", "adam", "adamw", "rmsprop", "sign")
_FOLDED_LEAVES = (nn.Flatten, nn.Linear, nn.BatchNorm1d, nn.ReLU)


def folds(model: nn.Module) -> bool:
    """Whether the ``folded`` engine covers ``model`` (Flatten, Linear, BatchNorm1d, ReLU, Head)."""
    def ok(m):
        if isinstance(m, (Network, nn.Sequential)):
            return all(ok(c) for c in m.children())
        if isinstance(m, Head):
            return all(ok(layer) for layer in m.layers)
        return isinstance(m, _FOLDED_LEAVES) and not (isinstance(m, nn.Flatten) and m.start_dim != 1)
    return ok(model)


class EnsembleTrainer(run_mod.Trainer):
    """G members of one architecture as stacked tensors (see the module docstring)."""

    def __init__(self, models: list[nn.Module], engine: str = "auto"):
        super().__init__(models[0])
        params.choice("engine", engine, ("auto", "folded", "vmap"))
        if engine == "folded" and not folds(models[0]):
            raise params.ParameterError("engine folded covers Flatten, Linear, BatchNorm1d, ReLU and Head only")
        self.engine = "folded" if engine == "auto" and folds(models[0]) else engine if engine != "auto" else "vmap"
        self.size = len(models)
        self.params, self.buffers = stack_module_state(models)
        self.base = copy.deepcopy(models[0]).to("meta")
        self._kernels = [name + ".weight" for name, _ in kernel_modules(models[0])]
        self._training = True
        if self.engine == "vmap":
            def call(p, b, x):
                return functional_call(self.base, (p, b), (x,))

            self._members = vmap(call, in_dims=(0, 0, 0))
            self._shared = vmap(call, in_dims=(0, 0, None))

    # -- forward ------------------------------------------------------------------------------
    def members(self, x):
        if self.engine == "vmap":
            return self._members(self.params, self.buffers, x)
        return self._folded(self.base, "", x)

    def shared(self, x):
        if self.engine == "vmap":
            return self._shared(self.params, self.buffers, x)
        return self._folded(self.base, "", x.expand(self.size, *x.shape))

    def _folded(self, module: nn.Module, prefix: str, h: torch.Tensor) -> torch.Tensor:
        """Member-axis forward of ``module`` on h (G, B, ...): the kernels each solo run calls."""
        if isinstance(module, (Network, nn.Sequential)):
            for name, child in module.named_children():
                h = self._folded(child, f"{prefix}{name}.", h)
            return h
        if isinstance(module, Head):
            layer_names = {id(layer): f"{prefix}layers.{i}." for i, layer in enumerate(module.layers)}
            return module.features(h, linear=lambda layer, t: self._linear(layer_names[id(layer)], t))[-1]
        if isinstance(module, nn.Flatten):
            return h.flatten(2)
        if isinstance(module, nn.Linear):
            return self._linear(prefix, h)
        if isinstance(module, nn.ReLU):
            return torch.relu(h)
        return self._batch_norm(module, prefix, h)

    def _linear(self, prefix: str, h: torch.Tensor) -> torch.Tensor:
        out = torch.bmm(h, self.params[prefix + "weight"].transpose(1, 2))
        bias = self.params.get(prefix + "bias")
        return out if bias is None else out + bias[:, None, :]

    def _batch_norm(self, bn: nn.BatchNorm1d, prefix: str, h: torch.Tensor) -> torch.Tensor:
        G, B, C = h.shape
        folded = h.transpose(0, 1).reshape(B, G * C)
        training = self._training
        if training and bn.track_running_stats:
            self.buffers[prefix + "num_batches_tracked"].add_(1)
        out = F.batch_norm(
            folded, self.buffers[prefix + "running_mean"].view(-1), self.buffers[prefix + "running_var"].view(-1),
            self.params[prefix + "weight"].reshape(-1), self.params[prefix + "bias"].reshape(-1),
            training, bn.momentum, bn.eps,
        )
        return out.view(B, G, C).transpose(0, 1)

    # -- state and optimiser -------------------------------------------------------------------
    def parameters(self):
        return list(self.params.values())

    @torch.no_grad()
    def norms(self):
        return [kernel_norm_total({name.removesuffix(".weight"): frobenius_norm(self.params[name][g])
                                   for name in self._kernels}) for g in range(self.size)]

    def train_mode(self, mode):
        self._training = mode
        self.base.train(mode)

    def optimise(self, config: Mapping) -> None:
        if config["optimizer"] in ELEMENTWISE:
            return super().optimise(config)
        # one optimiser per member, over leaf views of its slice of the stacked tensors
        self._views = [[p.detach()[g] for p in self.parameters()] for g in range(self.size)]
        self.optimizers = [run_mod._optimizer(config, views) for views in self._views]
        self._groups = [grp for opt in self.optimizers for grp in run_mod._param_groups(opt)]
        self._base_lr = [grp["lr"] for grp in self._groups]

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = None
        super().zero_grad()

    def step(self) -> None:
        if hasattr(self, "_views"):
            for g, views in enumerate(self._views):
                for view, p in zip(views, self.parameters()):
                    view.grad = None if p.grad is None else p.grad[g]
        super().step()


def trainer_for(models: list[nn.Module], engine: str = "auto") -> run_mod.Trainer:
    """The trainer of ``models`` (one or more members of one architecture): the ``folded``
    engine whenever it covers them, one member included, so that a solo run and an ensemble
    member compute alike; else the plain module for one member and ``engine`` for several."""
    if engine == "folded" or (engine == "auto" and folds(models[0])):
        return EnsembleTrainer(models, "folded")
    return run_mod.Trainer(models[0]) if len(models) == 1 else EnsembleTrainer(models, engine)


def execute_group(group: Mapping, *, options: Mapping | None = None) -> dict:
    """Train ``group["runs"]`` (configs equal except sigma_w and seed) as one ensemble.

    Returns ``{"records": [...]}``, one run record (``validation.run``) per config, in order;
    a single run trains as its solo run does (:func:`trainer_for`).
    ``options`` as in ``validation.run.execute`` (device, threads) plus ``engine``
    (auto / folded / vmap).
    """
    options = dict(options or {})
    configs = [run_mod.canonical_config(c) for c in group["runs"]]
    if not configs:
        raise params.ParameterError("runs of an ensemble must be a non-empty list of run configs")
    if len({setting_key(c) for c in configs}) != 1:
        raise params.ParameterError("runs of an ensemble must differ only in sigma_w and seed")
    device = run_mod.resolve_device(options.get("device"))
    data = run_mod.dataset_for(configs[0])
    dtype = torch.float64 if configs[0]["precision"] == "float64" else torch.float32
    with torch_threads(options.get("threads")):
        models = [run_mod.build(c, data, device, dtype) for c in configs]
        trainer = trainer_for(models, options.get("engine", "auto"))
        return {"records": run_mod.train(configs, trainer, data, device)}


def run_groups(spec, store, *, executor: Executor | None = None, progress: bool = True,
               options: Mapping | None = None) -> list[dict]:
    """Run a spec's settings as ensembles; store each member's record as a normal run record.

    The ensemble (kind ``validation.ensemble``) is the unit of caching: ensembles whose members
    are all done are skipped; a finished ensemble's members are written under ``validation.run``.
    """
    code = store.code_of(run_mod.execute)  # members are stored as ordinary runs of the same code
    todo = [g for g in group_by_setting(spec.configs) if any(store.get(run_mod.KIND, c, code=code) is None for c in g)]
    fn = functools.partial(execute_group, options=options)
    results = store.map(GROUP_KIND, fn, [{"runs": g} for g in todo], executor=executor, progress=progress,
                        desc=f"sweep {spec.name} (ensembles)")
    for group, result in zip(todo, results):
        for config, record in zip(group, result["records"]):
            store.put(run_mod.KIND, config, record, code=code)
    return [store.get(run_mod.KIND, c, code=code) for c in spec.configs]
