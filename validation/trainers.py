"""Trainers: how the models of one training run take a step (Spec B, section 1).

A run trains through a trainer (``validation.run.train`` drives it): :class:`Trainer` holds one
plain module, :class:`EnsembleTrainer` holds G members of one architecture that share a step
(the same data, architecture, batch size and horizon; sigma_w, seed and the optimiser's
hyperparameters free: ``validation.batched``) as stacked tensors along a leading member axis
(``torch.func.stack_module_state``), member g on its own minibatch.  The loss sum_g CE_g has
gradient CE_g' in block g, so every member gets the gradient it would get alone.
:func:`trainer_for` chooses the trainer of a solo run or an ensemble.

Two engines for the forward pass:

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

Optimisers: the members of one setting are consecutive (``validation.batched.execute_group``
orders them).  Where the decay acts (the run config's ``decay_on``, a documented choice: Spec B
s. 1 leaves the decay's details open): ``all`` puts every parameter in one group with the config's
``weight_decay``; ``scale_invariant`` decays the scale-invariant kernels only, the conv and linear
kernels a norm layer follows (``validation.init.scale_invariant_kernels``: in ``validation.models``
the MLP's two hidden kernels and every conv of the ResNets), and puts the rest (BatchNorm gamma
and beta, the classifier head, any bias) in a second group with ``weight_decay`` 0.  That is the
mechanism the clock T_L2 = lambda sum eta models (Spec B s. 3: a kernel the loss does not see the
scale of forgets its initial norm like exp(-2 lambda sum eta)), and it leaves the head free to
scale its logits, so runs can interpolate under decay.  It applies to every optimiser's decay,
coupled (SGD, Adam, ...) or decoupled (AdamW, Muon: Muon's 1-D parameters are never decayed).
Elementwise optimisers (SGD, momentum, Nesterov, Adam, AdamW, RMSProp, sign descent) get one
torch optimiser per setting over views of its members' slice of the stacked tensors, so each
setting's update is torch.optim's own arithmetic on its slice; Muon is not elementwise
(Newton-Schulz acts on each whole matrix), so each Muon member gets its own optimiser over views
of its own slice.  Each member's kernel norms are taken on its own slice, as the solo run takes
them on its module (``validation.init``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from implicitbias.numerics.optim.optimizers import make_optimizer
from implicitbias.theory import params
from implicitbias.validation.init import (frobenius_norm, kernel_modules, kernel_norm_total, kernel_norms,
                                          scale_invariant_kernels)
from implicitbias.validation.models import Head, Network

__all__ = ["ELEMENTWISE", "Trainer", "EnsembleTrainer", "folds", "trainer_for"]

ELEMENTWISE = ("sgd", "sgd_momentum", "nesterov", "adam", "adamw", "rmsprop", "sign")
_FOLDED_LEAVES = (nn.Flatten, nn.Linear, nn.BatchNorm1d, nn.ReLU)


class Trainer:
    """The models of one training run in lockstep; here one plain module (G = 1 member).

    :class:`EnsembleTrainer` holds G members (configs that share a
    step: the same data, architecture, batch size and horizon; sigma_w, seed and the optimiser's
    hyperparameters free) as one vectorised model; ``validation.run.train`` drives either through this
    interface: ``members(x)`` maps per-member inputs (G, B, ...) to logits (G, B, K), ``shared(x)``
    one input (B, ...) seen by every member to (G, B, K); ``optimise(configs, settings)`` builds
    the optimisers (``settings``: the member indices of each hyperparameter setting),
    ``set_lr_factors``, ``zero_grad`` and ``step`` drive them; ``norms()`` gives each member's
    kernel norms (``validation.init.kernel_norms``).
    """

    size = 1

    def __init__(self, model: torch.nn.Module, forward: Callable | None = None):
        self.model = model
        self.forward = forward or model
        self.invariant = frozenset(name + ".weight" for name in scale_invariant_kernels(model))

    def members(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward(x[0])[None]

    def shared(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward(x)[None]

    def parameters(self) -> list[torch.Tensor]:
        return list(self.model.parameters())

    def parameter_names(self) -> list[str]:
        """The names of :meth:`parameters`, in order (``nn.Module.named_parameters``'s)."""
        return [name for name, _ in self.model.named_parameters()]

    def norms(self) -> list[dict[str, float]]:
        return [kernel_norms(self.model)]

    def train_mode(self, mode: bool) -> None:
        self.model.train(mode)

    def optimise(self, configs: Sequence[Mapping], settings: Sequence[Sequence[int]]) -> None:
        """Create the optimiser of the one member's config over this trainer's parameters."""
        self.optimizers = []
        self._groups: list[tuple[dict, float, int]] = []  # (param group, its base lr, its setting)
        self._add_optimizer(configs[0], self.parameters(), 0)

    def _add_optimizer(self, config: Mapping, parameters: Sequence[torch.Tensor], setting: int) -> torch.optim.Optimizer:
        opt = _optimizer(config, list(zip(self.parameter_names(), parameters)), self.invariant)
        self.optimizers.append(opt)
        self._groups += [(group, group["lr"], setting) for group in _param_groups(opt)]
        return opt

    def set_lr_factors(self, factors: Sequence[float]) -> None:
        """Every learning rate = its base value x its setting's factor (the schedule's eta_k / eta_0)."""
        for group, lr0, s in self._groups:
            group["lr"] = lr0 * factors[s]

    def zero_grad(self) -> None:
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=True)

    def step(self) -> None:
        for opt in self.optimizers:
            opt.step()


def _optimizer(config: Mapping, named: Sequence[tuple[str, torch.Tensor]], invariant: frozenset[str]) -> torch.optim.Optimizer:
    """The optimiser of ``config`` over the ``(name, tensor)`` pairs ``named``, its decay where
    ``decay_on`` puts it (module docstring): one group (``all``), or the kernels named in
    ``invariant`` with the decay and the rest with none (``scale_invariant``)."""
    c = config
    groups: list = [p for _, p in named]
    if c["decay_on"] == "scale_invariant":
        if not invariant:
            raise params.ParameterError("decay_on scale_invariant needs a conv or linear kernel followed by a norm layer; "
                                        "this model has none (use decay_on all)")
        decayed = [p for name, p in named if name in invariant]
        rest = [p for name, p in named if name not in invariant]
        groups = [{"params": decayed}] + ([{"params": rest, "weight_decay": 0.0}] if rest else [])
    return make_optimizer(c["optimizer"], groups, c["lr"], momentum=c["momentum"], weight_decay=c["weight_decay"])


def _param_groups(opt: torch.optim.Optimizer) -> list[dict]:
    return opt.param_groups + (opt.companion.param_groups if getattr(opt, "companion", None) else [])


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


class EnsembleTrainer(Trainer):
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

    def parameter_names(self):
        return list(self.params)

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


def trainer_for(models: list[nn.Module], engine: str = "auto") -> Trainer:
    """The trainer of ``models`` (one or more members of one architecture): the ``folded``
    engine whenever it covers them, one member included, so that a solo run and an ensemble
    member run the same kernels on the same shapes (only the member count differs, and ATen's CPU
    ``bmm`` computes each member's product on its own); else the plain module for one member and
    ``engine`` for several."""
    if engine == "folded" or (engine == "auto" and folds(models[0])):
        return EnsembleTrainer(models, "folded")
    return Trainer(models[0]) if len(models) == 1 else EnsembleTrainer(models, engine)
