"""Basin of attraction of NC (Spec A, section 4): depth shrinks it.  Holds the basin cells'
configs, summary and figure, shared with ``implicitbias dynamics basin``.  L counts weight
matrices (N = L + 1 factors).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from implicitbias.figures import plt, save_figure
from implicitbias.theory import params
from implicitbias.theory.spectral_ode import SpectralODE


def basin_configs(K: int, depths, n: int, scales, eps_values, seeds: int, margin: float, t_end: float) -> list[dict]:
    """Validated ``basin_cell`` configs over depth x scale x perturbation x seed."""
    for L in depths:
        SpectralODE(K, L, n)
    seeds = params.integer("seeds", seeds, minimum=1, maximum=1000)
    for s in scales:
        params.real("scales", s, minimum=0, open_minimum=True)
    for e in eps_values:
        params.real("eps", e, minimum=0)
    if len(depths) * len(scales) * len(eps_values) * seeds > 20_000:
        raise params.ParameterError("the basin grid must have at most 20000 cells (depths x scales x eps x seeds)")
    return [
        {"K": K, "L": L, "n": n, "scale": s, "eps": e, "seed": r, "margin": margin, "t_end": t_end, "tolerance": 0.5}
        for L in depths
        for s in scales
        for e in eps_values
        for r in range(seeds)
    ]


def basin_summary(configs: list[dict], records: list[dict]) -> dict:
    """{L: {(scale, eps): fraction at NC}} and {L: overall fraction}."""
    cells: dict = {}
    for cfg, rec in zip(configs, records):
        cells.setdefault(cfg["L"], {}).setdefault((cfg["scale"], cfg["eps"]), []).append(rec["at_nc"])
    maps = {L: {k: float(np.mean(v)) for k, v in grid.items()} for L, grid in cells.items()}
    overall = {L: float(np.mean([x for v in grid.values() for x in v])) for L, grid in cells.items()}
    return {"maps": maps, "overall": overall}


def basin_figure(path: Path, configs: list[dict], records: list[dict]) -> tuple[Path, dict]:
    """One heatmap per depth: fraction of starts ending at NC over (init scale, perturbation)."""
    summary = basin_summary(configs, records)
    depths = sorted(summary["maps"])
    scales = sorted({c["scale"] for c in configs})
    eps_values = sorted({c["eps"] for c in configs})
    fig, axes = plt.subplots(1, len(depths), figsize=(3.2 * len(depths), 3.2), squeeze=False)
    columns: dict[str, list] = {"L": [], "scale": [], "eps": [], "fraction_at_nc": []}
    for ax, L in zip(axes[0], depths):
        grid = np.array([[summary["maps"][L][(s, e)] for s in scales] for e in eps_values])
        im = ax.imshow(grid, origin="lower", vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(scales)), [f"{s:g}" for s in scales], rotation=45)
        ax.set_yticks(range(len(eps_values)), [f"{e:g}" for e in eps_values])
        ax.set_title(f"L = {L}: {summary['overall'][L]:.2f} at NC")
        ax.set_xlabel("init scale")
        for e in eps_values:
            for s in scales:
                columns["L"].append(L)
                columns["scale"].append(s)
                columns["eps"].append(e)
                columns["fraction_at_nc"].append(summary["maps"][L][(s, e)])
    axes[0, 0].set_ylabel("perturbation eps")
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="fraction ending at NC")
    fig.suptitle(f"Basin of NC (K = {configs[0]['K']}): final effective rank >= K - 1.5", y=1.04)
    return save_figure(fig, path, columns), summary
