"""Optimisers by name, for the forgetting experiments (Spec B, section 1 axes).

``make_optimizer(name, params, lr, ...)`` for ``name`` in ``OPTIMIZERS``:

- ``sgd``:           theta <- theta - lr (g + lambda theta)                 (torch.optim.SGD)
- ``sgd_momentum``:  heavy ball v <- mu v + g + lambda theta, theta <- theta - lr v (torch SGD)
- ``nesterov``:      the same with Nesterov's look-ahead (torch SGD, nesterov=True)
- ``adam``:          torch.optim.Adam; ``weight_decay`` is coupled L2 (added to the gradient)
- ``adamw``:         torch.optim.AdamW; ``weight_decay`` is decoupled: theta <- theta (1 - lr lambda)
- ``rmsprop``:       torch.optim.RMSprop (alpha = second-moment decay), coupled L2
- ``sign``:          sign descent theta <- theta - lr sign(g + lambda theta)   (``SignDescent``)
- ``muon``:          ``Muon``: momentum B <- mu B + g, Nesterov look-ahead g + mu B, orthogonalised
                     by Newton-Schulz, theta <- theta (1 - lr lambda) - lr s O with shape factor
                     s = sqrt(max(1, rows / cols)) (Keller Jordan 2024; torch.optim.Muon's defaults).

Coupled L2 decay (``sgd``, ``sgd_momentum``, ``nesterov``, ``adam``, ``rmsprop``, ``sign``) is
added to the gradient, so it passes through the momentum / preconditioner; decoupled decay
(``adamw``, ``muon``) shrinks the weights directly.  ``params`` may be tensors or torch's
param-group dicts; a group's own ``weight_decay`` overrides the optimiser's (so decay can act on
some tensors only: ``validation.trainers`` puts the kernels of ``decay_on = "scale_invariant"`` in
a group of their own and the rest in a group with ``weight_decay`` 0).

Muon's split (a documented choice): every parameter with ndim >= 2 (linear kernels, the head
included, and conv kernels flattened to (out, in * k * k)) is orthogonalised; every 1-D
parameter (biases, BatchNorm gamma and beta) goes to a companion AdamW with learning rate
``companion_lr`` (default: lr) and no decay.  There is no per-step renormalisation of the
weights (it would erase the sigma_w the experiments measure).

Muon on conv kernels, against the reference implementation (K. Jordan's ``muon_update``): both
orthogonalise the kernel flattened to (out, in * k * k).  The shape factor differs:
``shape_factor="flattened"`` (default here) takes rows / cols of that flattened matrix, so a
kernel with out > in k^2 gets sqrt(out / (in k^2)); the reference computes it from the last two
dimensions of the unflattened gradient, grad.size(-2) / grad.size(-1) = k_h / k_w, which is 1 for
square kernels (and sqrt(k_h / k_w) for tall ones); ``shape_factor="reference"`` reproduces that.
For 2-D weights the two agree.  The reference keeps its momentum as an average,
B <- mu B + (1 - mu) g with look-ahead (1 - mu) g + mu B: (1 - mu) times ours, which Newton-Schulz
(normalised by the Frobenius norm first) does not see.

Sources: torch.optim; Muon: K. Jordan, "Muon: an optimizer for hidden layers" (2024).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from implicitbias.theory import params as check
from implicitbias.theory.clocks import OPTIMIZERS

__all__ = ["OPTIMIZERS", "SHAPE_FACTORS", "make_optimizer", "newton_schulz", "Muon", "SignDescent", "MUON_COEFFICIENTS"]

MUON_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
DEFAULT_MOMENTUM = {"sgd_momentum": 0.9, "nesterov": 0.9, "muon": 0.95}
SHAPE_FACTORS = ("flattened", "reference")


def newton_schulz(G: torch.Tensor, steps: int = 5, coefficients=MUON_COEFFICIENTS, eps: float = 1e-7) -> torch.Tensor:
    """Approximate polar factor U V^T of G = U S V^T by the odd Newton-Schulz iteration.

    X_0 = G / ||G||_F (so ||X_0||_2 <= 1), X <- a X + (b A + c A^2) X with A = X X^T (on the
    wide orientation).  Each step maps X = U S V^T to U p(S) V^T with p(s) = a s + b s^3 + c s^5,
    so the singular vectors are exact and only the singular values are approximated: Muon's
    quintic (default coefficients) sends them into roughly [0.7, 1.2] in 5 steps; the cubic
    (1.5, -0.5, 0) converges to exactly 1 (the polar factor) as steps grow.

    Written here (not torch.optim.Muon's private helper) because that works only in bfloat16 on
    2-D tensors; this keeps the input dtype so float64 checks against scipy's polar factor work.
    """
    a, b, c = coefficients
    X = G / G.norm().clamp(min=eps)
    wide = X.shape[0] <= X.shape[1]
    if not wide:
        X = X.T
    for _ in range(steps):
        A = X @ X.T
        X = a * X + (b * A + c * A @ A) @ X
    return X if wide else X.T


class _Parameterwise(torch.optim.Optimizer):
    """step(): evaluate the closure, then ``_update(p, group)`` for every parameter with a gradient."""

    def _update(self, p: torch.Tensor, group: dict) -> None:
        raise NotImplementedError

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, group)
        return loss


def _param_groups(params) -> list[dict]:
    """``params`` as torch's list of param-group dicts: tensors become one group."""
    items = list(params)
    return items if items and isinstance(items[0], dict) else [{"params": items}]


class Muon(_Parameterwise):
    """Muon for parameters with ndim >= 2 plus a companion AdamW for the 1-D ones.

    Written here rather than used from torch.optim.Muon because that accepts 2-D parameters
    only (conv kernels must be flattened per step) and runs Newton-Schulz in bfloat16.
    """

    def __init__(
        self,
        params: Iterable[torch.Tensor],
        lr: float,
        *,
        momentum: float = 0.95,
        nesterov: bool = True,
        weight_decay: float = 0.0,
        ns_steps: int = 5,
        companion_lr: float | None = None,
        shape_factor: str = "flattened",
    ):
        check.choice("shape_factor", shape_factor, SHAPE_FACTORS)
        groups = _param_groups(params)
        matrices = [{**g, "params": [p for p in g["params"] if p.ndim >= 2]} for g in groups]
        matrices = [g for g in matrices if g["params"]]
        vectors = [p for g in groups for p in g["params"] if p.ndim < 2]
        if not matrices:
            raise check.ParameterError("params must contain at least one parameter with ndim >= 2 for muon")
        defaults = dict(lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay, ns_steps=ns_steps,
                        shape_factor=shape_factor)
        super().__init__(matrices, defaults)
        self.companion = (
            torch.optim.AdamW(vectors, lr=companion_lr or lr, weight_decay=0.0) if vectors else None
        )

    def _update(self, p: torch.Tensor, group: dict) -> None:
        lr, mu = group["lr"], group["momentum"]
        g = p.grad.reshape(p.shape[0], -1)
        buf = self.state[p].setdefault("momentum_buffer", torch.zeros_like(g))
        buf.mul_(mu).add_(g)
        update = g + mu * buf if group["nesterov"] else buf
        O = newton_schulz(update, group["ns_steps"])
        rows, cols = (g.shape if group["shape_factor"] == "flattened" else p.shape[-2:])
        scale = math.sqrt(max(1.0, rows / cols))
        p.mul_(1.0 - lr * group["weight_decay"])
        p.add_(O.reshape(p.shape), alpha=-lr * scale)

    def step(self, closure=None):
        loss = super().step(closure)
        if self.companion is not None:
            self.companion.step()
        return loss

    def zero_grad(self, set_to_none: bool = True):
        super().zero_grad(set_to_none)
        if self.companion is not None:
            self.companion.zero_grad(set_to_none)


class SignDescent(_Parameterwise):
    """theta <- theta - lr sign(g + lambda theta) (coupled L2).

    Written by hand: torch.optim has no sign-descent optimiser (it is one line per step).
    """

    def __init__(self, params: Iterable[torch.Tensor], lr: float, *, weight_decay: float = 0.0):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay))

    def _update(self, p: torch.Tensor, group: dict) -> None:
        p.add_(torch.sign(p.grad + group["weight_decay"] * p), alpha=-group["lr"])


def make_optimizer(
    name: str,
    params: Iterable[torch.Tensor],
    lr: float,
    *,
    momentum: float | None = None,
    weight_decay: float = 0.0,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    alpha: float = 0.99,
    ns_steps: int = 5,
    companion_lr: float | None = None,
    shape_factor: str = "flattened",
) -> torch.optim.Optimizer:
    """The optimiser ``name`` (one of ``OPTIMIZERS``) over ``params``; see the module docstring.

    ``params``: tensors, or param-group dicts (a group's ``weight_decay`` overrides ``weight_decay``).
    ``momentum`` defaults to 0.9 (sgd_momentum, nesterov) and 0.95 (muon); ``betas`` and ``eps``
    are Adam/AdamW's, ``alpha`` RMSProp's second-moment decay, ``shape_factor`` Muon's (see the
    module docstring).  Bad input raises ParameterError.
    """
    check.choice("optimizer", name, OPTIMIZERS)
    lr = check.real("lr", lr, minimum=0.0, open_minimum=True)
    wd = check.real("weight_decay", weight_decay, minimum=0.0)
    mu = check.real("momentum", DEFAULT_MOMENTUM.get(name, 0.0) if momentum is None else momentum, minimum=0.0, maximum=0.9999)
    b1 = check.real("beta1", betas[0], minimum=0.0, maximum=0.9999)
    b2 = check.real("beta2", betas[1], minimum=0.0, maximum=0.99999999)
    eps = check.real("eps", eps, minimum=0.0, open_minimum=True)
    ps = list(params)
    if name in ("sgd", "sgd_momentum", "nesterov"):
        if name != "sgd" and mu == 0:
            raise check.ParameterError(f"momentum must be > 0 for {name}, got 0")
        return torch.optim.SGD(ps, lr=lr, momentum=0.0 if name == "sgd" else mu, nesterov=name == "nesterov", weight_decay=wd)
    if name == "adam":
        return torch.optim.Adam(ps, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    if name == "adamw":
        return torch.optim.AdamW(ps, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    if name == "rmsprop":
        return torch.optim.RMSprop(ps, lr=lr, alpha=check.real("alpha", alpha, minimum=0.0, maximum=0.99999999), eps=eps, weight_decay=wd)
    if name == "sign":
        return SignDescent(ps, lr, weight_decay=wd)
    ns_steps = check.integer("ns_steps", ns_steps, minimum=1, maximum=50)
    if companion_lr is not None:
        companion_lr = check.real("companion_lr", companion_lr, minimum=0.0, open_minimum=True)
    return Muon(ps, lr, momentum=mu, weight_decay=wd, ns_steps=ns_steps, companion_lr=companion_lr,
                shape_factor=shape_factor)
