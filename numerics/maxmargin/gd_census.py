"""What gradient descent actually finds: batched GD on the deep UFM, its end points named.

Model (Spec A, section 1): K classes, n = 1 sample per class, width d, L weight matrices and the
features, N = L + 1 factors [H, W_1, ..., W_L], logits Z = W_L ... W_1 H, unregularised mean
cross-entropy.  GD from small random initialisation converges in direction to a KKT point of
P(K, L) (Lyu & Li 2020; Ji & Telgarsky 2020), which need not be the global optimum: this is the
implicit bias, as opposed to the optimum.

``batched_gd`` runs B seeds at once (one tensor with a leading seed dimension; batched matrix
products, one backward pass for the sum of the B losses, which are independent, so each seed
gets its own gradient).  Each seed takes normalised steps of length lr,

    theta_b <- theta_b - lr grad l_b / ||grad l_b||     (norm over all its factors),

the ``normalized="gradient"`` rule of ``implicitbias.numerics.ufm.deep_ufm.gradient_descent``,
which a seed of the batch reproduces exactly (tested); a seed stops when its loss falls below
``loss_target``.  Initialisation: ``deep_ufm.gaussian_init`` per seed (N(0, scale^2/d)).

``census_cell`` names where each seed ends: its final Zbar (unit margin) is polished to the
nearest local minimum of P(K, L) (``solver.polish``, fine stages only, then
``solver.refine_exact``; GD's direction converges only like 1/log t, so its raw end point is
about 1e-3 from the KKT point it approaches) and named from invariants (``naming.identify``).
The record keeps the raw GD objective too.
"""

from __future__ import annotations

import collections
import math
import time

import numpy as np
import torch

from implicitbias.numerics.maxmargin.margin import min_margin, schatten_exponent
from implicitbias.numerics.maxmargin.naming import identify
from implicitbias.numerics.maxmargin.solver import WARM_SCHEDULE, polish, refine_exact, verify
from implicitbias.numerics.torch_threads import torch_threads
from implicitbias.numerics.ufm.deep_ufm import cross_entropy, gaussian_init, gradient_norm, logits
from implicitbias.theory import params

__all__ = ["KIND", "gd_settings", "census_config", "batched_gd", "batched_loss", "census_cell"]

KIND = "maxmargin.gd-census"


def gd_settings(K: int, L: int, d: int | None = None, scale: float = 0.1, lr: float = 0.005, steps: int = 8000,
                loss_target: float = 1e-250) -> dict:
    """Validated GD settings on the deep UFM (width d defaults to 2K), shared with ``gd_crosscheck``."""
    K = params.integer("K", K, minimum=2, maximum=64)
    return {
        "K": K,
        "L": params.integer("L", L, minimum=1, maximum=64),
        "d": params.integer("d", 2 * K if d is None else d, minimum=K, maximum=1024),
        "scale": params.real("scale", scale, minimum=0, open_minimum=True),
        "lr": params.real("lr", lr, minimum=0, open_minimum=True),
        "steps": params.integer("steps", steps, minimum=1, maximum=10**6),
        "loss_target": params.real("loss_target", loss_target, minimum=0),
    }


def census_config(K: int, L: int, seeds: int = 32, **settings) -> dict:
    """Canonical config of one census cell (``gd_settings`` and the number of seeds)."""
    return {**gd_settings(K, L, **settings), "seeds": params.integer("seeds", seeds, minimum=1, maximum=4096)}


def batched_loss(factors: list[torch.Tensor]) -> torch.Tensor:
    """Per-seed mean cross-entropy (shape [B]) of Z_b = W_L ... W_1 H (n = 1, labels 0..K-1):
    ``deep_ufm.cross_entropy`` of the batch of logits (exact down to losses of ~1e-300)."""
    return cross_entropy(logits(factors))


def batched_gd(K: int, L: int, d: int, seeds, scale: float, lr: float, steps: int,
               loss_target: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised GD of every seed at once; returns final Zbar [B, K, K], losses [B], steps [B]."""
    inits = [gaussian_init(K, L, d, 1, scale=scale, seed=int(s)) for s in seeds]
    theta = [torch.stack([init[i] for init in inits]).requires_grad_(True) for i in range(L + 1)]
    B = len(inits)
    done = torch.zeros(B, dtype=torch.bool)
    taken = torch.zeros(B, dtype=torch.long)
    with torch_threads(1):
        for _ in range(steps):
            losses = batched_loss(theta)
            done |= losses.detach() < loss_target
            if bool(done.all()):
                break
            grads = torch.autograd.grad(losses.sum(), theta)
            norm = gradient_norm(grads, batch_dims=1)  # per seed, over all its factors
            active = (~done) & (norm > 0)
            eta = torch.where(active, lr / torch.where(active, norm, torch.ones_like(norm)), torch.zeros_like(norm))
            with torch.no_grad():
                for p, g in zip(theta, grads):
                    p.sub_(eta.view(-1, *[1] * (g.dim() - 1)) * g)
            taken += active.long()
        final = batched_loss(theta).detach()
        Z = logits(theta)
    return Z.detach().numpy(), final.numpy(), taken.numpy()


def census_cell(config: dict) -> dict:
    """GD from ``seeds`` random initialisations at (K, L), each end point named (module docstring).

    Returns the per-seed records (raw GD objective, polished objective, name, rank, loss, steps)
    and the frequency of each name.  A pure function of ``config`` (seeds 0 .. seeds - 1).
    """
    c = census_config(**config)
    K, L = c["K"], c["L"]
    p = schatten_exponent(L)
    t0 = time.perf_counter()
    Zs, losses, taken = batched_gd(K, L, c["d"], range(c["seeds"]), c["scale"], c["lr"], c["steps"], c["loss_target"])
    gd_seconds = time.perf_counter() - t0
    runs = []
    for seed, (Z, loss, k) in enumerate(zip(Zs, losses, taken)):
        if not min_margin(Z) > 0:
            runs.append({"seed": seed, "separated": False, "loss": float(loss), "steps": int(k)})
            continue
        raw = verify(Z, p, "gradient descent")
        end = refine_exact(polish(raw.Z, p, "gradient descent", WARM_SCHEDULE))
        ident = identify(end.Z)
        runs.append({"seed": seed, "separated": True, "loss": float(loss), "steps": int(k),
                     "gd_objective": raw.objective, "objective": end.objective, "rank": end.rank,
                     "name": ident.name, "key": ident.key, "aut_order": ident.order})
    counts = collections.Counter(r["name"] for r in runs if r["separated"])
    return {
        **c,
        "runs": runs,
        "frequencies": dict(counts),
        "unseparated": sum(not r["separated"] for r in runs),
        "gd_seconds": gd_seconds,
        "seconds": time.perf_counter() - t0,
        "mean_relative_move": float(np.mean([(r["gd_objective"] - r["objective"]) / r["objective"]
                                             for r in runs if r["separated"]])) if counts else math.nan,
    }
