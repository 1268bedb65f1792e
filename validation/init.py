"""Scaled initialisation and kernel norms (Spec B, section 1, the sigma_w sweep).

``scale_init_(model, sigma_w)`` sets, in place (a documented choice of the spec):

    every conv and linear kernel  W = sigma_w * W_He,  W_He ~ N(0, 2 / fan_in)  (Kaiming normal,
                                                         fan_in mode, gain sqrt 2)
    BatchNorm / other norm layers gamma = 1, beta = 0
    every bias                    0

so ||W||_F at initialisation is about sigma_w sqrt(2 fan_out) per layer.  The classifier head
(the last linear layer in module order) is scaled too unless ``scale_head=False``, in which case
it gets the plain He draw (sigma_w = 1).  ``kernel_norms(model)`` returns ||W||_F per kernel,
keyed by the module name, plus ``"total"`` = sqrt(sum of squares) over all kernels.

Source: He, Zhang, Ren, Sun 2015 (Kaiming init); Das et al. arXiv 2605.29152 (sigma_w sweep).
"""

from __future__ import annotations

import math

import torch
from implicitbias.theory import params
from torch import nn

__all__ = ["scale_init_", "frobenius_norm", "kernel_norms", "kernel_norm_total", "kernel_modules",
           "scale_invariant_kernels"]

_KERNELS = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d)
_NORMS = (nn.modules.batchnorm._NormBase, nn.GroupNorm, nn.LayerNorm)


def kernel_modules(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The (name, module) pairs of every conv and linear layer, in module order."""
    return [(n, m) for n, m in model.named_modules() if isinstance(m, _KERNELS)]


def scale_invariant_kernels(model: nn.Module) -> list[str]:
    """The names of the kernels a norm layer follows, inferred from module order: a conv or linear
    layer is taken as scale-invariant (the loss does not see ||W||) when the next conv, linear or
    norm layer that ``named_modules`` lists after it is a norm layer (BatchNorm, GroupNorm,
    LayerNorm), as ResNets register ``conv -> bn``.  Module order is not the forward's order in
    every model: ``validation.meter.ForgettingMeter`` takes a list of its own instead."""
    layers = [(n, m) for n, m in model.named_modules() if isinstance(m, _KERNELS + _NORMS)]
    return [n for (n, m), (_, after) in zip(layers, layers[1:]) if isinstance(m, _KERNELS) and isinstance(after, _NORMS)]


@torch.no_grad()
def scale_init_(model: nn.Module, sigma_w: float, *, scale_head: bool = True, seed: int | None = None) -> nn.Module:
    """Initialise ``model`` in place as sigma_w x He-normal kernels (see module docstring).

    ``seed`` makes the draw reproducible (same seed, same weights, whatever sigma_w: only the
    scale changes between runs of a sigma_w sweep).  Returns the model.
    """
    sigma_w = params.real("sigma_w", sigma_w, minimum=0.0, open_minimum=True)
    kernels = kernel_modules(model)
    if not kernels:
        raise params.ParameterError("model must contain at least one conv or linear layer")
    gen = torch.Generator().manual_seed(int(seed)) if seed is not None else None
    head = kernels[-1][1] if any(isinstance(m, nn.Linear) for _, m in kernels) else None
    for _, m in kernels:
        nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu", generator=gen)
        if m is not head or scale_head:
            m.weight.mul_(sigma_w)
        if m.bias is not None:
            m.bias.zero_()
    for m in model.modules():
        if isinstance(m, _NORMS) and getattr(m, "weight", None) is not None:
            m.weight.fill_(1.0)
            m.bias.zero_()
    return model


@torch.no_grad()
def frobenius_norm(kernel: torch.Tensor) -> float:
    """||W||_F = sqrt(sum_ij W_ij^2) of one kernel, always reduced the same way: over a fresh
    contiguous 1-D copy (the allocator's alignment, whatever the kernel is a view of).  A solo run
    applies it to its module's weight and an ensemble to each member's slice of the stacked
    tensor, so both feed the reduction identical memory and get the same bits on any CPU."""
    return float(torch.linalg.vector_norm(kernel.detach().reshape(-1).clone()))


@torch.no_grad()
def kernel_norms(model: nn.Module) -> dict[str, float]:
    """||W||_F of every conv and linear kernel by module name, plus ``total``."""
    return kernel_norm_total({name: frobenius_norm(m.weight) for name, m in kernel_modules(model)})


def kernel_norm_total(norms: dict[str, float]) -> dict[str, float]:
    """``norms`` (||W||_F per kernel) plus ``total`` = sqrt(sum of their squares)."""
    return {**norms, "total": math.sqrt(sum(v * v for v in norms.values()))}
