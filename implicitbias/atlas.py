"""The atlas of P(K, L): what ``implicitbias phase`` writes and the report's phase section shows.

From the column records of ``implicitbias.numerics.maxmargin.phase`` (one per K, every depth):

- ``phase_cells.csv``: one row per cell: verdict, structure name (from invariants), rank, order
  of its symmetry group, objective, closed form (named structures), certified lower bound and
  the gap to it, certificate, scipy status of the solve;
- ``phase_atlas.npz``: the best matrix Zbar of every cell (unit margin; key ``K{K}_L{L}``), with
  ``names`` and ``keys`` arrays naming each one;
- ``phase_heatmap.png``: verdict, rank of the best matrix and its gap to the certified bound;
- ``phase_structures.png``: the structure map, cells coloured by structure (unnamed codes by
  rank), rank written in;
- ``phase_codes_rank2.png`` / ``phase_codes_rank3.png``: the class vectors of every rank-2 and
  rank-3 optimum (one panel per K and structure);
- ``phase_crossovers.csv``: continuous-depth ties between every pair of structures optimal
  somewhere in a column; ``phase_boundary.csv``; ``phase.md`` with the tables.

Every PNG has a CSV of the plotted numbers next to it.  Depth L counts weight matrices; N = L + 1
factors including the features.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import Executor
from pathlib import Path

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from implicitbias.executors import InlineExecutor
from implicitbias.figures import markdown_table, new_figure, save_figure, subplots, target_axes, write_csv
from implicitbias.numerics.maxmargin.codes import class_vectors
from implicitbias.numerics.maxmargin.cells import CensusCell, PhaseCell
from implicitbias.numerics.maxmargin.phase import VERDICTS, boundary, cells_of
from implicitbias.theory import params

__all__ = [
    "write_outputs",
    "cell_rows",
    "PANELS",
    "heatmap_figure",
    "draw_heatmap",
    "draw_structure_map",
    "structure_family",
    "draw_codes",
    "cells_markdown",
    "large_k_markdown",
    "boundary_markdown",
    "crossover_rows",
    "crossovers_markdown",
    "draw_gd_census",
    "census_rows",
    "census_markdown",
]

SHORT = {"NC suboptimal": "r{rank}", "NC optimal": "NC", "NC best found": "nc?"}
PANELS = ("verdict", "rank", "gap")  # the panels of ``heatmap_figure``, in their default order
VERDICT_COLOURS = ListedColormap(["#d7301f", "#2b8cbe", "#bdbdbd"])  # NC suboptimal, NC optimal, NC best found


def _grid(cells: Sequence[PhaseCell]):
    cells = [c for c in cells if isinstance(c.L, int)]
    Ks = sorted({c.K for c in cells})
    Ls = sorted({c.L for c in cells})
    return cells, Ks, Ls


def cell_rows(cells: Sequence[PhaseCell]) -> list[dict]:
    """The rows of ``phase_cells.csv`` (``PhaseCell.row``)."""
    return [c.row() for c in cells]


def _extent(Ks, Ls):
    return (Ks[0] - 0.5, Ks[-1] + 0.5, Ls[0] - 0.5, Ls[-1] + 0.5)


def _axes(ax):
    """Integer ticks on both axes (K and L are integers on these grids), and their labels."""
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("K (classes)")
    ax.set_ylabel("L (weight matrices; N = L + 1)")


def _discrete(fig, ax, grid, extent, cmap, values, labels, title):
    """``grid`` of category indices 0..len(values)-1 drawn with one colour each, and a colourbar with
    one tick per category (a legend that stays inside the figure)."""
    norm = BoundaryNorm(np.arange(len(values) + 1) - 0.5, len(values))
    im = ax.imshow(grid, origin="lower", cmap=cmap, norm=norm, extent=extent, aspect="auto")
    bar = fig.colorbar(im, ax=ax, ticks=range(len(values)))
    bar.ax.set_yticklabels(labels)
    bar.ax.tick_params(labelsize=8)
    ax.set_title(title)


def heatmap_figure(cells: Sequence[PhaseCell], ax=None, panels: Sequence[str] = PANELS):
    """Panels over (K, integer L): ``verdict``, ``rank`` of the best matrix, ``gap`` to the certified
    bound (``PANELS``; ``panels`` picks some of them, in order).

    ``ax``: None (a new ``Figure``), a ``Figure`` to draw the panels into, or one Axes per panel
    (``implicitbias.figures.target_axes``).  Verdict and rank are categories: each has a colourbar
    with one tick per value, inside the figure.  Returns the figure drawn into and the plotted
    numbers (columns of its CSV)."""
    for name in panels:
        params.choice("panels", name, PANELS)
    cells, Ks, Ls = _grid(cells)
    if not cells:
        raise params.ParameterError("the diagram must hold integer depths L to draw its heatmap, got none")
    size = (max(4.0, (0.7 * len(Ks) + 6) / 3) * len(panels), 0.35 * len(Ls) + 3.0)
    fig, axes = target_axes(ax, len(panels), size, layout="constrained")
    grids = {name: np.full((len(Ls), len(Ks)), np.nan) for name in PANELS}
    for c in cells:
        i, j = Ls.index(c.L), Ks.index(c.K)
        grids["verdict"][i, j] = VERDICTS.index(c.verdict)
        grids["rank"][i, j] = c.rank
        grids["gap"][i, j] = c.gap
    extent = _extent(Ks, Ls)
    ranks = list(range(int(np.nanmin(grids["rank"])), int(np.nanmax(grids["rank"])) + 1))
    for name, axis in zip(panels, axes):
        if name == "verdict":
            _discrete(fig, axis, grids["verdict"], extent, VERDICT_COLOURS, VERDICTS, VERDICTS, "verdict")
        elif name == "rank":
            _discrete(fig, axis, grids["rank"] - ranks[0], extent, colormaps["viridis"].resampled(len(ranks)),
                      ranks, ranks, "rank of the best matrix")
        else:
            im = axis.imshow(grids["gap"], origin="lower", cmap="magma_r", vmin=0, vmax=1, extent=extent,
                             aspect="auto")
            fig.colorbar(im, ax=axis, label="(best - bound) / best")
            axis.set_title("gap to the certified lower bound")
        _axes(axis)
    flat = [(K, L) for L in Ls for K in Ks]
    return fig, {
        "K": [k for k, _ in flat], "L": [L for _, L in flat],
        "verdict": [VERDICTS[int(v)] if not np.isnan(v) else "" for v in grids["verdict"].ravel()],
        "best_rank": [int(x) if not np.isnan(x) else "" for x in grids["rank"].ravel()],
        "gap": [float(x) if not np.isnan(x) else "" for x in grids["gap"].ravel()],
    }


def draw_heatmap(cells: Sequence[PhaseCell], path: Path) -> Path:
    """``heatmap_figure`` saved as the PNG ``path`` with the CSV of its numbers beside it."""
    fig, columns = heatmap_figure(cells)
    return save_figure(fig, path, columns)


def structure_family(cell: PhaseCell) -> str:
    """The colour class of a cell in the structure map: NC, the K-gons, the cross-polytopes, each
    named polytope, and the unnamed codes grouped by rank."""
    if cell.key == "kgon":
        return "regular K-gon"
    if cell.key == "cross_polytope":
        return "cross-polytope (+ singleton for odd K)"
    return cell.structure if cell.key else f"unnamed rank-{cell.rank} code"


def draw_structure_map(cells: Sequence[PhaseCell], path: Path) -> Path:
    """Cells coloured by the family of their best structure (``structure_family``), rank written in."""
    cells, Ks, Ls = _grid(cells)
    families = sorted({structure_family(c) for c in cells},
                      key=lambda f: (f.startswith("unnamed"), -max(c.rank for c in cells if structure_family(c) == f), f))
    grid = np.full((len(Ls), len(Ks)), np.nan)
    for c in cells:
        grid[Ls.index(c.L), Ks.index(c.K)] = families.index(structure_family(c))
    palette = [colormaps["tab20"](i) for i in range(20)] + [colormaps["tab20b"](i) for i in range(20)]
    cmap = ListedColormap([palette[i % len(palette)] for i in range(len(families))])
    fig, ax = subplots(figsize=(max(8, 0.45 * len(Ks) + 5), 0.4 * len(Ls) + 2 + 0.12 * len(families)))
    ax.imshow(grid, origin="lower", cmap=cmap, vmin=-0.5, vmax=len(families) - 0.5, extent=_extent(Ks, Ls), aspect="auto")
    for c in cells:
        ax.text(c.K, c.L, str(c.rank), ha="center", va="center", fontsize=6)
    ax.legend(handles=[Patch(color=cmap(i), label=f) for i, f in enumerate(families)],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, title="best structure")
    ax.set_title("structure map of P(K, L): the best matrix of each cell, named from its invariants (rank written in)")
    _axes(ax)
    return save_figure(fig, path, {
        "K": [c.K for c in cells], "L": [c.L for c in cells], "family": [structure_family(c) for c in cells],
        "structure": [c.structure for c in cells], "rank": [c.rank for c in cells],
    })


def _distinct_optima(cells: Sequence[PhaseCell], rank: int) -> list[PhaseCell]:
    """One cell per (K, structure) whose best matrix has this rank (the middle depth of its range)."""
    groups: dict = {}
    for c in cells:
        if c.rank == rank:
            groups.setdefault((c.K, c.structure), []).append(c)
    out = []
    for key in sorted(groups):
        group = sorted(groups[key], key=lambda c: float(c.L))
        out.append(group[len(group) // 2])
    return out


def draw_codes(cells: Sequence[PhaseCell], rank: int, path: Path) -> Path | None:
    """Class vectors (rows of H, dots) and classifier rows (rows of W, crosses) of every optimum of
    this rank (2 or 3), from the balanced factorisation Zbar = W H^T; None if there is none."""
    chosen = _distinct_optima(cells, rank)
    if not chosen:
        return None
    cols = min(6, len(chosen))
    rows = math.ceil(len(chosen) / cols)
    fig = new_figure(figsize=(2.6 * cols, 2.7 * rows))
    columns: dict[str, list] = {"K": [], "L": [], "structure": [], "class": [], "kind": [],
                                **{f"x{i}": [] for i in range(rank)}}
    for n, c in enumerate(chosen):
        W, H = class_vectors(c.matrix)
        W, H = W[:, :rank], H[:, :rank]
        ax = fig.add_subplot(rows, cols, n + 1, **({"projection": "3d"} if rank == 3 else {}))
        ax.scatter(*H.T, s=14, color="#2b8cbe")
        ax.scatter(*W.T, s=14, marker="x", color="#d7301f")
        if rank == 2:
            ax.set_aspect("equal")
        spokes = np.full((3 * len(H), rank), np.nan)  # origin -> h_k, one line broken by NaN rows
        spokes[0::3], spokes[1::3] = 0.0, H
        ax.plot(*spokes.T, color="#2b8cbe", lw=0.4)
        ax.set_title(f"K = {c.K}, L = {c.L}\n{c.structure}", fontsize=7)
        # no ticks: the balanced factorisation's scale is arbitrary (the numbers are in the CSV beside the figure), and
        # the ticks took most of its time (the rank-3 panels 2 of 3.3 s at K <= 32, the rank-2 panels 1.2 of 1.8 s)
        ax.set(xticks=[], yticks=[], **({"zticks": []} if rank == 3 else {}))
        for kind, M in (("class vector h", H), ("classifier row w", W)):
            for k, v in enumerate(M):
                columns["K"].append(c.K)
                columns["L"].append(c.L)
                columns["structure"].append(c.structure)
                columns["class"].append(k)
                columns["kind"].append(kind)
                for i in range(rank):
                    columns[f"x{i}"].append(float(v[i]))
    fig.suptitle(f"rank-{rank} optima of P(K, L): class vectors (dots) and classifier rows (crosses)", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / (2.7 * rows)))  # 0.3 inch above the panels for the title
    return save_figure(fig, path, columns)


def crossover_rows(columns) -> list[dict]:
    """Rows of the crossover table (one per pair and tie depth; 'none' when the pair never ties)."""
    rows = []
    for col in columns:
        for x in col["crossovers"]:
            ties = x["ties"] or [math.inf]
            for t in ties:
                rows.append({"K": x["K"], "a": x["a"], "b": x["b"], "L_tie": t, "method": x["method"],
                             "a_optimal_at": " ".join(map(str, x["a_optimal_at"])),
                             "b_optimal_at": " ".join(map(str, x["b_optimal_at"]))})
    return rows


def crossovers_markdown(rows) -> str:
    return markdown_table(
        ["K", "structure a", "structure b", "tie depth L", "method", "a optimal at L", "b optimal at L"],
        [[r["K"], r["a"], r["b"], "never" if r["L_tie"] == math.inf else f"{r['L_tie']:.6f}", r["method"],
          r["a_optimal_at"], r["b_optimal_at"]] for r in rows],
    )


def cells_markdown(cells: Sequence[PhaseCell]) -> str:
    """Rows K, columns L: ``rR`` NC suboptimal (best rank R), ``NC`` optimal, ``nc?`` best found."""
    Ks = sorted({c.K for c in cells})
    Ls = sorted({c.L for c in cells}, key=float)
    table = {(c.K, c.L): SHORT[c.verdict].format(rank=c.rank) for c in cells}
    return markdown_table(["K \\ L", *Ls], [[K, *(table.get((K, L), "") for L in Ls)] for K in Ks])


def large_k_markdown(cells: Sequence[PhaseCell]) -> str:
    """One row per cell of a large-K column: verdict, S_p of the best code, NC's K - 1, rank, name,
    certified lower bound."""
    return markdown_table(
        ["K", "L", "verdict", "S_p of the best", "NC (K - 1)", "rank", "structure", "certified lower bound"],
        [[c.K, c.L, c.verdict, f"{c.value:.6f}", f"{c.nc_value:g}", c.rank, c.structure, f"{c.lower_bound:.4f}"]
         for c in cells],
    )


def _l_star(row) -> str:
    if row["L_star"] is not None:
        return str(row["L_star"])
    return "none: NC optimal" if row["nc_optimal_everywhere"] else f"> {row['Lmax_searched']}"


def boundary_markdown(rows) -> str:
    def fmt(x):
        return "never" if x == math.inf else f"{x:.4f}"

    return markdown_table(
        ["K", "L*(K)", "best structure at L*", "its rank", "certificate", "exact L: cross-polytope ties NC",
         "exact L: K-gon ties NC"],
        [[r["K"], _l_star(r), r["best_structure"] or "-", r["best_rank"] if r["best_rank"] is not None else "-",
          r["certificate"] or "-", fmt(r["threshold_cross_polytope"]), fmt(r["threshold_kgon"])] for r in rows],
    )


def write_outputs(columns, out: Path, stem: str = "phase", executor: Executor | None = None) -> dict[str, Path]:
    """Every atlas output (module docstring) into folder ``out``; returns their paths by name.

    ``executor``: a ``concurrent.futures.Executor`` whose workers share this folder (the local process pool of
    ``implicitbias phase``) draws the four figures, while this process writes the tables and computes the
    boundary; None draws them here.  Drawing was 3.75 of the 4.5 s the outputs of the K <= 32 atlas took in one
    process (benchmarks/RESULTS.md, "The atlas's figures drawn on its pool")."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cells = cells_of(columns)
    pool = executor or InlineExecutor()
    figures = {  # the longest first, so two workers finish together (0.1-0.2 s sooner than in listing order)
        "codes_rank3": pool.submit(draw_codes, cells, 3, out / f"{stem}_codes_rank3.png"),
        "heatmap": pool.submit(draw_heatmap, cells, out / f"{stem}_heatmap.png"),
        "codes_rank2": pool.submit(draw_codes, cells, 2, out / f"{stem}_codes_rank2.png"),
        "structures": pool.submit(draw_structure_map, cells, out / f"{stem}_structures.png"),
    }
    rows = cell_rows(cells)
    paths: dict[str, Path] = {}
    paths["cells"] = write_csv(out / f"{stem}_cells.csv", {k: [r[k] for r in rows] for k in rows[0]})
    np.savez_compressed(
        out / f"{stem}_atlas.npz",
        names=np.array([c.structure for c in cells]),
        keys=np.array([f"K{c.K}_L{c.L}" for c in cells]),
        **{f"K{c.K}_L{c.L}": c.matrix for c in cells},
    )
    paths["atlas"] = out / f"{stem}_atlas.npz"
    tables: dict[str, Path] = {}
    bound = boundary(cells)
    tables["boundary"] = write_csv(out / f"{stem}_boundary.csv", {k: [r[k] for r in bound] for k in bound[0]})
    cross = crossover_rows(columns)
    if cross:
        tables["crossovers"] = write_csv(out / f"{stem}_crossovers.csv", {k: [r[k] for r in cross] for k in cross[0]})
    md = out / f"{stem}.md"
    md.write_text(
        "# Atlas of P(K, L)\n\n"
        "Cells: `rR` NC suboptimal (best matrix has rank R), `NC` NC optimal (certificate), `nc?` NC best found.\n\n"
        f"{cells_markdown(cells)}\n\n## Boundary L*(K)\n\n{boundary_markdown(bound)}\n\n"
        f"## Crossovers\n\n{crossovers_markdown(cross) if cross else '(none)'}\n"
    )
    tables["markdown"] = md
    for name in ("heatmap", "structures", "codes_rank2", "codes_rank3"):  # listed after the tables of cells
        if (path := figures[name].result()) is not None:  # draw_codes: None where no optimum has that rank
            paths[name] = path
    return {**paths, **tables}


def _optimum_of(cells: Sequence[PhaseCell], K, L) -> PhaseCell | None:
    return next((c for c in cells if c.K == K and c.L == L), None)


def census_rows(census: Sequence[CensusCell], cells: Sequence[PhaseCell]) -> list[dict]:
    """Per (K, L): the optimum's name and value (``cells``: the phase diagram's) next to where
    gradient descent ended."""
    rows = []
    for rec in census:
        best = _optimum_of(cells, rec.K, rec.L)
        opt_name = best.structure if best else ""
        runs = [r for r in rec.runs if r.separated]
        at_opt = sum(r.name == opt_name for r in runs)
        rows.append({
            "K": rec.K, "L": rec.L, "seeds": rec.seeds, "optimum": opt_name,
            "optimum_objective": best.value if best else math.nan,
            "frequencies": "; ".join([f"{n}: {k}" for n, k in sorted(rec.frequencies.items(), key=lambda t: -t[1])]
                                     + _stalled(rec)),
            "fraction_at_optimum": at_opt / len(runs) if runs else math.nan,
            "unseparated": rec.unseparated,
            "mean_gd_over_optimum": float(np.mean([r.objective for r in runs])) / best.value
            if runs and best else math.nan,
        })
    return rows


def _stalled(rec: CensusCell) -> list[str]:
    """The seeds GD had not separated within its step budget, with their losses (a plateau such as
    log(2)/2 = 0.347 at K = 4 is a saddle where two pairs of classes share a logit direction)."""
    losses = [r.loss for r in rec.runs if not r.separated]
    if not losses:
        return []
    return [f"not separated after {rec.steps} steps: {len(losses)} (loss {min(losses):.3g}-{max(losses):.3g})"]


def census_markdown(rows) -> str:
    def share(x, fmt):
        return "-" if math.isnan(x) else format(x, fmt)

    return markdown_table(
        ["K", "L", "seeds", "optimum (best found)", "GD end points (polished, named)", "at the optimum",
         "mean GD value / optimum"],
        [[r["K"], r["L"], r["seeds"], f"{r['optimum']} ({r['optimum_objective']:.4f})", r["frequencies"],
          share(r["fraction_at_optimum"], ".0%"), share(r["mean_gd_over_optimum"], ".4f")] for r in rows],
    )


def draw_gd_census(census: Sequence[CensusCell], cells: Sequence[PhaseCell], path: Path) -> Path:
    """Stacked bars: how often GD from small random initialisation ends at each named structure,
    one bar per (K, L); the optimum's share outlined in black."""
    rows = census_rows(census, cells)
    names = sorted({n for rec in census for n in rec.frequencies})
    colours = colormaps["tab20"].resampled(max(len(names), 2))
    fig, ax = subplots(figsize=(max(7, 0.45 * len(census) + 3), 4.2))
    columns: dict[str, list] = {"K": [], "L": [], "structure": [], "fraction": [], "is_optimum": []}
    for i, (rec, row) in enumerate(zip(census, rows)):
        total = sum(rec.frequencies.values()) or 1
        bottom = 0.0
        for j, name in enumerate(names):
            share = rec.frequencies.get(name, 0) / total
            if share:
                optimum = name == row["optimum"]
                ax.bar(i, share, bottom=bottom, color=colours(j % 20), edgecolor="black" if optimum else "none",
                       linewidth=1.5 if optimum else 0)
                bottom += share
                columns["K"].append(rec.K)
                columns["L"].append(rec.L)
                columns["structure"].append(name)
                columns["fraction"].append(share)
                columns["is_optimum"].append(optimum)
    ax.set_xticks(range(len(census)), [f"K{r.K}\nL{r.L}" for r in census], fontsize=7)
    ax.set_ylabel("fraction of seeds")
    ax.set_ylim(0, 1)
    ax.legend(handles=[Patch(color=colours(j % 20), label=n) for j, n in enumerate(names)],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, title="GD ends at")
    ax.set_title("gradient descent on the deep UFM (small random init, width 2K): where it ends; "
                 "black outline = the optimum", fontsize=9)
    return save_figure(fig, path, columns)
