"""KL divergence to NC (Spec A, section 4): a Lyapunov function of the shallow model that can
diverge in deep ones.  Holds the trajectory cells' configs and figure, shared with
``implicitbias dynamics trajectory``.  L counts weight matrices (N = L + 1 factors).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from implicitbias.figures import plt, save_figure
from implicitbias.theory import params
from implicitbias.theory.spectral_ode import SpectralODE


def trajectory_configs(
    K: int, depths, n: int, scale: float, eps: float, seed: int, margin: float, t_end: float
) -> list[dict]:
    """Validated configs of ``trajectory_record`` cells, one per depth (L counts weight matrices)."""
    for L in depths:
        SpectralODE(K, L, n)  # validates K (power of two), L >= 1, n
    params.real("scale", scale, minimum=0, open_minimum=True)
    params.real("eps", eps, minimum=0)
    params.real("margin", margin, minimum=0, open_minimum=True)
    params.real("t_end", t_end, minimum=0, open_minimum=True)
    return [
        {
            "K": K,
            "L": L,
            "n": n,
            "scale": scale,
            "eps": eps,
            "seed": seed,
            "margin": margin,
            "t_end": t_end,
            "points": 160,
        }
        for L in depths
    ]


def trajectory_figure(path: Path, configs: list[dict], records: list[dict]) -> Path:
    """2 x 2 panels against time: normalised singular values, effective rank, KL to NC, margin."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    columns: dict[str, list] = {"L": [], "t": [], "margin": [], "effective_rank": [], "kl_to_nc": [], "S_min/S_max": []}
    colours = plt.cm.viridis(np.linspace(0, 0.9, len(configs)))
    for cfg, rec, colour in zip(configs, records, colours):
        t = np.asarray(rec["times"])
        S = np.asarray(rec["singular_values"])
        label = f"L = {cfg['L']}"
        axes[0, 0].plot(t, S / S.max(axis=1, keepdims=True), color=colour, lw=0.8)
        axes[0, 1].plot(t, rec["effective_rank"], color=colour, label=label)
        axes[1, 0].plot(t, rec["kl"], color=colour, label=label)
        axes[1, 1].plot(t, rec["margin"], color=colour, label=label)
        columns["L"] += [cfg["L"]] * len(t)
        columns["t"] += list(t)
        columns["margin"] += list(rec["margin"])
        columns["effective_rank"] += list(rec["effective_rank"])
        columns["kl_to_nc"] += list(rec["kl"])
        columns["S_min/S_max"] += list(S.min(axis=1) / S.max(axis=1))
    K = configs[0]["K"]
    axes[0, 0].set_ylabel("S_j / max S (all modes)")
    axes[0, 1].set_ylabel("effective rank (Roy-Vetterli)")
    axes[0, 1].axhline(K - 1, color="grey", ls=":", lw=0.8)
    axes[1, 0].set_ylabel("KL(uniform || S / sum S)")
    axes[1, 1].set_ylabel("margin")
    axes[1, 1].set_yscale("log")
    for ax in axes.ravel():
        ax.set_xscale("log")
    for ax in axes[1]:
        ax.set_xlabel("time t (gradient-flow clock)")
    axes[0, 1].legend()
    fig.suptitle(
        f"Balanced Hadamard flow, K = {K}, start S_j = {configs[0]['scale']:g} exp({configs[0]['eps']:g} xi_j)"
    )
    return save_figure(fig, path, columns)
