"""The atlas of P(K, L): per-cell table, heatmap, boundary L*(K), written by ``implicitbias phase``
and shown by the report's phase section.

Depth L counts weight matrices; N = L + 1 factors including the features.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from implicitbias.figures import markdown_table, plt, save_figure, write_csv
from implicitbias.numerics.maxmargin.phase import VERDICTS, best_rank, boundary

__all__ = ["write_outputs", "draw_heatmap", "cells_markdown", "boundary_markdown"]

SHORT = {"NC suboptimal": "r{rank}", "NC optimal": "NC", "NC best found": "nc?"}


def _cell_rows(records):
    rows = []
    for r in records:
        best = r["best"] or {}
        cert = r["certificate"]
        rows.append(
            {
                "K": r["K"],
                "L": r["L"],
                "p": r["p"],
                "verdict": r["verdict"],
                "nc_objective": r["nc_objective"],
                "best_structure": best.get("structure", ""),
                "best_rank": best_rank(r),
                "best_objective": best.get("objective", math.nan),
                "certificate": cert["kind"],
                "certificate_structure": cert.get("structure", ""),
                "starts": len(r["starts"]),
                "seed": r["seed"],
                "effort": r["effort"],
            }
        )
    return rows


def draw_heatmap(records, path: Path) -> Path:
    """Two panels over (K, integer L): the verdict (colour) and the rank of the best solution."""
    cells = [r for r in records if isinstance(r["L"], int)]
    Ks = sorted({r["K"] for r in cells})
    Ls = sorted({r["L"] for r in cells})
    verdict_grid = np.full((len(Ls), len(Ks)), np.nan)
    rank = np.full((len(Ls), len(Ks)), np.nan)
    for r in cells:
        i, j = Ls.index(r["L"]), Ks.index(r["K"])
        verdict_grid[i, j] = VERDICTS.index(r["verdict"])
        rank[i, j] = best_rank(r)
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 0.5 * len(Ks) + 4), 0.35 * len(Ls) + 2.5))
    cmap = plt.matplotlib.colors.ListedColormap(["#d7301f", "#2b8cbe", "#bdbdbd"])
    extent = (Ks[0] - 0.5, Ks[-1] + 0.5, Ls[0] - 0.5, Ls[-1] + 0.5)
    axes[0].imshow(verdict_grid, origin="lower", cmap=cmap, vmin=-0.5, vmax=2.5, extent=extent, aspect="auto")
    axes[0].legend(
        handles=[plt.matplotlib.patches.Patch(color=cmap(i), label=v) for i, v in enumerate(VERDICTS)],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.15),
        ncol=3,
        fontsize=8,
    )
    axes[0].set_title("verdict")
    im = axes[1].imshow(rank, origin="lower", cmap="viridis", extent=extent, aspect="auto")
    fig.colorbar(im, ax=axes[1], label="rank of the best solution")
    axes[1].set_title("rank of the best solution found")
    for ax in axes:
        ax.xaxis.set_major_locator(plt.matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_xlabel("K (classes)")
        ax.set_ylabel("L (weight matrices; N = L + 1)")
    flat = [(K, L) for L in Ls for K in Ks]
    return save_figure(
        fig,
        path,
        {
            "K": [k for k, _ in flat],
            "L": [L for _, L in flat],
            "verdict": [VERDICTS[int(v)] if not np.isnan(v) else "" for v in verdict_grid.ravel()],
            "best_rank": [int(x) if not np.isnan(x) else "" for x in rank.ravel()],
        },
    )


def cells_markdown(records) -> str:
    """Rows K, columns L: ``rR`` NC suboptimal (best rank R), ``NC`` optimal, ``nc?`` best found."""
    Ks = sorted({r["K"] for r in records})
    Ls = sorted({r["L"] for r in records}, key=float)
    table = {(r["K"], r["L"]): SHORT[r["verdict"]].format(rank=best_rank(r)) for r in records}
    return markdown_table(["K \\ L", *Ls], [[K, *(table.get((K, L), "") for L in Ls)] for K in Ks])


def _l_star(row) -> str:
    if row["L_star"] is not None:
        return str(row["L_star"])
    return "none: NC optimal" if row["nc_optimal_everywhere"] else f"> {row['Lmax_searched']}"


def boundary_markdown(rows) -> str:
    def fmt(x):
        return "never" if x == math.inf else f"{x:.4f}"

    return markdown_table(
        ["K", "L*(K)", "best structure at L*", "its rank", "certificate", "exact L: cross-polytope ties NC", "exact L: K-gon ties NC"],
        [
            [
                r["K"],
                _l_star(r),
                r["best_structure"] or "-",
                r["best_rank"] if r["best_rank"] is not None else "-",
                r["certificate"] or "-",
                fmt(r["threshold_cross_polytope"]),
                fmt(r["threshold_kgon"]),
            ]
            for r in rows
        ],
    )


def write_outputs(records, out: Path, stem: str = "phase") -> dict[str, Path]:
    """Cells CSV, heatmap PNG (+ CSV), boundary CSV and a Markdown file with both tables."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = _cell_rows(records)
    cells_csv = write_csv(out / f"{stem}_cells.csv", {k: [r[k] for r in rows] for k in rows[0]})
    heatmap = draw_heatmap(records, out / f"{stem}_heatmap.png")
    bound = boundary(records)
    boundary_csv = write_csv(out / f"{stem}_boundary.csv", {k: [r[k] for r in bound] for k in bound[0]})
    md = out / f"{stem}.md"
    md.write_text(
        "# Phase diagram of P(K, L)\n\n"
        "Cells: `rR` NC suboptimal (best solution found has rank R), `NC` NC optimal "
        "(certificate), `nc?` NC best found.\n\n"
        f"{cells_markdown(records)}\n\n## Boundary L*(K)\n\n{boundary_markdown(bound)}\n"
    )
    return {"cells": cells_csv, "heatmap": heatmap, "boundary": boundary_csv, "markdown": md}
