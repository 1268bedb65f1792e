"""Ensembles: the runs that can share a step (every sigma_w x seed x optimiser setting) as one model.

Runs that share data, architecture, batch size, horizon and evaluation epochs can step in
lockstep whatever their sigma_w, seed and optimiser hyperparameters (``STEP_FREE``: optimiser,
lr, momentum, decay, schedule): their parameters and BatchNorm buffers are stacked along a
leading member axis (``torch.func.stack_module_state``) and one forward pass evaluates all G
members, member g on its own minibatch (drawn from its own seed, exactly as its solo run draws
it; ``validation.data.batches``).  The loss sum_g CE_g has gradient CE_g' in block g, so every
member gets the gradient it would get alone; each hyperparameter setting then steps its own
members with its own optimiser and schedule (below).  Two engines for the forward pass:

- ``folded`` (networks of Flatten, bias-free Linear, BatchNorm1d, ReLU and the linear ``Head``:
  the toy MLP): each Linear is one ``torch.bmm`` over the member axis whose backward takes the
  orientation of ``F.linear``'s (``_MemberLinear``), each BatchNorm one ``F.batch_norm`` over the
  members' channels folded side by side ((B, G C), running statistics as views of the stacked
  buffers).  A solo run of such a model is this engine with one member (:func:`trainer_for`,
  called by ``validation.run.execute``), so a member and its solo run run the same kernels on the
  same shapes, and every kernel norm is ``validation.init.frobenius_norm`` of the member's slice:
  members are bit-for-bit their solo runs in float64 (``tests/test_batched_*.py``), weights and
  kernel norms included, on any CPU.  With ``_MemberLinear`` they also equal the plain
  ``nn.Module`` run bit-for-bit on the CPUs measured (AMD EPYC here); that is tested to rounding.
  Written by hand because ``torch.func.vmap``'s BatchNorm rule applies the affine transform
  outside the fused kernel, which changes the last bit, and its per-op batching costs about
  1.4x the time of these explicit calls on the toy MLP.
- ``vmap`` (anything else, the ResNets): ``vmap(functional_call)`` over the stacked state;
  equal to the solo runs to rounding (grouped convolutions sum in another order).

Optimisers: the members of one setting are consecutive (``execute_group`` orders them).
Elementwise optimisers (SGD, momentum, Nesterov, Adam, AdamW, RMSProp, sign descent) get one
torch optimiser per setting over views of its members' slice of the stacked tensors, so each
setting's update is torch.optim's own arithmetic on its slice; Muon is not elementwise
(Newton-Schulz acts on each whole matrix), so each Muon member gets its own optimiser over views
of its own slice.  Each member's kernel norms are taken on its own slice, as the solo run takes
them on its module (``validation.init``).

Speed: ``benchmarks/bench_batched.py`` (``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.theory import params
from implicitbias.validation import external
from implicitbias.validation import run as run_mod
from implicitbias.validation.groups import MEMBER_KEYS, group_by_setting, setting_key
from implicitbias.validation.init import frobenius_norm, kernel_modules, kernel_norm_total
from implicitbias.validation.models import Head, Network
from implicitbias.validation.precision import parameter_dtype

__all__ = ["GROUP_KIND", "ELEMENTWISE", "STEP_FREE", "MAX_CPU_MEMBERS", "EnsembleTrainer", "folds", "ensembles", "execute_group",
           "train_ensembles", "run_groups", "trainer_for"]

GROUP_KIND = "validation.ensemble"
ELEMENTWISE = ("sgd", "sgd_momentum", "nesterov", "adam", "adamw", "rmsprop", "sign")
STEP_FREE = (*MEMBER_KEYS, "optimizer", "lr", "momentum", "weight_decay", "schedule")  # members may differ in these
# Members per ensemble on a CPU: beyond about 50 the toy MLP's activations (b 64 x 64 units x G) leave a
# core's L2 cache and the images per CPU second fall (benchmarks/RESULTS.md, "Ensembles across settings").
MAX_CPU_MEMBERS = 48
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


class _MemberLinear(torch.autograd.Function):
    """out[g] = h[g] W[g]^T for every member g, with the backward products of ``F.linear`` on 2-D inputs.

    grad_h[g] = grad[g] W[g] and grad_W[g] = grad[g]^T h[g], the orientations torch's ``mm``
    backward chooses for ``h @ W.t()`` (it computes the kernel's gradient as grad^T h because
    W.t() is column-major); ``torch.bmm``'s own backward would compute h^T grad, the same sums in
    another BLAS orientation, which differs in the last bit on some CPUs.  Written by hand because
    no torch op batches a linear layer with F.linear's backward.
    """

    @staticmethod
    def forward(ctx, h, weight):
        ctx.save_for_backward(h, weight)
        return torch.bmm(h, weight.transpose(1, 2))

    @staticmethod
    def backward(ctx, grad):
        h, weight = ctx.saved_tensors
        grad_h = torch.bmm(grad, weight) if ctx.needs_input_grad[0] else None
        grad_w = torch.bmm(grad.transpose(1, 2), h) if ctx.needs_input_grad[1] else None
        return grad_h, grad_w


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
        return self._folded(self.base, "", x, "members")

    def shared(self, x):
        if self.engine == "vmap":
            return self._shared(self.params, self.buffers, x)
        return self._folded(self.base, "", x.expand(self.size, *x.shape), "members")

    def _folded(self, module: nn.Module, prefix: str, h: torch.Tensor, layout: str) -> torch.Tensor:
        """Member-axis forward of ``module`` on h: the kernels each solo run calls; logits (G, B, K).

        Layouts of h: ``members`` (G, B, ...); ``folded`` (B, G C), member g's channels in columns
        g C .. (g + 1) C - 1, as BatchNorm wants (a Linear reads it through a transposed view).
        """
        if isinstance(module, Network):
            h, layout = self._body(module.body, prefix + "body.", h, layout)
            return self._head(module.head, prefix + "head.", h, layout)
        h, layout = self._body(module, prefix, h, layout)
        return self._as_members(h, layout)

    def _body(self, module: nn.Module, prefix: str, h: torch.Tensor, layout: str) -> tuple[torch.Tensor, str]:
        if isinstance(module, nn.Sequential):
            for name, child in module.named_children():
                h, layout = self._body(child, f"{prefix}{name}.", h, layout)
            return h, layout
        if isinstance(module, Head):
            return self._head(module, prefix, h, layout), "members"
        if isinstance(module, nn.Flatten):
            return h.flatten(2), layout
        if isinstance(module, nn.Linear):
            return self._linear(prefix, h, layout)
        if isinstance(module, nn.ReLU):
            return torch.relu(h), layout
        return self._batch_norm(module, prefix, h, layout), "folded"

    def _head(self, head: Head, prefix: str, h: torch.Tensor, layout: str) -> torch.Tensor:
        h = self._as_members(h, layout)
        names = {id(layer): f"{prefix}layers.{i}." for i, layer in enumerate(head.layers)}
        return head.features(h, linear=lambda layer, t: self._linear(names[id(layer)], t, "members")[0])[-1]

    def _as_members(self, h: torch.Tensor, layout: str) -> torch.Tensor:
        return h.view(len(h), self.size, -1).transpose(0, 1) if layout == "folded" else h

    def _linear(self, prefix: str, h: torch.Tensor, layout: str) -> tuple[torch.Tensor, str]:
        weight, bias = self.params[prefix + "weight"], self.params.get(prefix + "bias")
        out = _MemberLinear.apply(self._as_members(h, layout), weight)
        return (out if bias is None else out + bias[:, None, :]), "members"

    def _batch_norm(self, bn: nn.BatchNorm1d, prefix: str, h: torch.Tensor, layout: str) -> torch.Tensor:
        if layout == "members":
            h = h.transpose(0, 1).reshape(h.shape[1], -1)
        if self._training and bn.track_running_stats:
            self.buffers[prefix + "num_batches_tracked"].add_(1)
        return F.batch_norm(
            h, self.buffers[prefix + "running_mean"].view(-1), self.buffers[prefix + "running_var"].view(-1),
            self.params[prefix + "weight"].reshape(-1), self.params[prefix + "bias"].reshape(-1),
            self._training, bn.momentum, bn.eps,
        )

    # -- state and optimiser -------------------------------------------------------------------
    def parameters(self):
        return list(self.params.values())

    @torch.no_grad()
    def norms(self):
        """Each member's kernel norms: ``validation.init.frobenius_norm`` of its own slice, the
        function a solo run applies to its module's weight."""
        return [kernel_norm_total({name.removesuffix(".weight"): frobenius_norm(self.params[name][g])
                                   for name in self._kernels}) for g in range(self.size)]

    def train_mode(self, mode):
        self._training = mode
        self.base.train(mode)

    def optimise(self, configs: Sequence[Mapping], settings: Sequence[Sequence[int]]) -> None:
        """One torch optimiser per setting (elementwise) or per member (Muon), over leaf views of
        its members' slice of the stacked tensors; the members of a setting must be consecutive."""
        self.optimizers, self._groups, self._slices = [], [], []
        for s, members in enumerate(settings):
            first, last = members[0], members[-1] + 1
            if list(members) != list(range(first, last)):
                raise ValueError(f"members of a setting must be consecutive (execute_group orders them), got {members}")
            config = configs[first]
            parts = [slice(first, last)] if config["optimizer"] in ELEMENTWISE else list(members)  # a member: its own matrices
            for part in parts:
                views = [p.detach()[part] for p in self.parameters()]
                self._add_optimizer(config, views, s)
                self._slices.append((part, views))

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = None
        super().zero_grad()

    def step(self) -> None:
        for part, views in self._slices:
            for view, p in zip(views, self.parameters()):
                view.grad = None if p.grad is None else p.grad[part]
        super().step()


def trainer_for(models: list[nn.Module], engine: str = "auto") -> run_mod.Trainer:
    """The trainer of ``models`` (one or more members of one architecture): the ``folded``
    engine whenever it covers them, one member included, so that a solo run and an ensemble
    member run the same kernels on the same shapes (only the member count differs, and ATen's CPU
    ``bmm`` computes each member's product on its own); else the plain module for one member and
    ``engine`` for several."""
    if engine == "folded" or (engine == "auto" and folds(models[0])):
        return EnsembleTrainer(models, "folded")
    return run_mod.Trainer(models[0]) if len(models) == 1 else EnsembleTrainer(models, engine)


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
    a single run trains as its solo run does (:func:`trainer_for`).
    ``options`` as in ``validation.run.execute`` (device, threads) plus ``engine``
    (auto / folded / vmap).
    """
    options = dict(options or {})
    configs = [run_mod.canonical_config(c) for c in group["runs"]]
    if not configs:
        raise params.ParameterError("runs of an ensemble must be a non-empty list of run configs")
    if len({setting_key(c, STEP_FREE) for c in configs}) != 1:
        raise params.ParameterError(f"runs of an ensemble must differ only in {', '.join(STEP_FREE)}")
    order = [i for members in group_by_setting(range(len(configs)), lambda i: configs[i]) for i in members]
    ordered = [configs[i] for i in order]
    device = run_mod.resolve_device(options.get("device"))
    data = run_mod.dataset_for(configs[0])
    dtype = parameter_dtype(configs[0]["precision"])
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
