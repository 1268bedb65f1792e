"""``implicitbias dynamics``: singular-value dynamics of the deep UFM under Hadamard initialisation.

    implicitbias dynamics trajectory --K 8 --L 1,2,4 --scale 1e-3 --eps 0.3 --out DIR
        integrates the derived balanced ODE from one perturbed-NC start for each depth and plots
        singular values, effective rank, KL to NC and margin against time (PNG + CSV).
    implicitbias dynamics basin --K 8 --L 1,2,3,4 --scales 1e-3,1e-2,1e-1,1 --eps 0.1,0.3,0.6 --out DIR
        basin-of-attraction map: fraction of perturbed-NC starts that end at NC (final effective
        rank >= K - 1.5) over (init scale, perturbation), one panel per depth, plus a table.

L counts weight matrices (N = L + 1 factors including the features).  Runs are cached in the store.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from implicitbias.executors import EXECUTORS, open_executor
from implicitbias.figures import markdown_table, plt, save_figure
from implicitbias.numerics.ufm.basin import basin_cell
from implicitbias.numerics.ufm.spectral_flow import trajectory_record
from implicitbias.store import Store
from implicitbias.theory import params
from implicitbias.theory.spectral_ode import SpectralODE


def parse_list(name: str, text: str, kind=float) -> list:
    """Comma-separated numbers; a bad item is a ParameterError naming ``name``."""
    try:
        values = [kind(v) for v in str(text).split(",") if v.strip()]
    except ValueError:
        raise params.ParameterError(f"{name} must be a comma-separated list of numbers, got {text!r}") from None
    if not values:
        raise params.ParameterError(f"{name} must not be empty")
    return values


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


def register(sub) -> None:
    p = sub.add_parser("dynamics", help="singular-value dynamics of the deep UFM (trajectories, basin map)")
    what = p.add_subparsers(dest="what", required=True, metavar="WHAT")
    common = {
        "--K": dict(type=int, default=8, help="number of classes, a power of two (default 8)"),
        "--L": dict(default="1,2,4", help="depths (weight matrices), comma-separated (default 1,2,4)"),
        "--n": dict(type=int, default=1, help="samples per class (default 1)"),
        "--margin": dict(type=float, default=20.0, help="stop when the margin reaches this (default 20)"),
        "--t-end": dict(type=float, default=1e8, help="longest flow time (default 1e8)"),
        "--out": dict(default="dynamics", help="output folder (default ./dynamics)"),
    }
    t = what.add_parser("trajectory", help="singular values, effective rank, KL and margin against time")
    b = what.add_parser("basin", help="basin-of-attraction map of NC over (init scale, perturbation)")
    for q in (t, b):
        for flag, kw in common.items():
            q.add_argument(flag, **kw)
    t.add_argument("--scale", type=float, default=1e-3, help="initial singular value scale (default 1e-3)")
    t.add_argument("--eps", type=float, default=0.3, help="log-normal perturbation of the spectrum (default 0.3)")
    t.add_argument("--seed", type=int, default=0)
    b.add_argument("--scales", default="1e-3,1e-2,1e-1,1", help="init scales, comma-separated")
    b.add_argument("--eps", default="0.1,0.3,0.6", help="perturbation sizes, comma-separated")
    b.add_argument("--seeds", type=int, default=4, help="starts per cell (default 4)")
    b.add_argument("--executor", default="inline", choices=EXECUTORS)
    b.add_argument("--workers", type=int, default=None)
    p.set_defaults(func=run)


def run(args) -> int:
    depths = parse_list("L", args.L, int)
    out = Path(args.out)
    with Store(args.store) as store:
        if args.what == "trajectory":
            configs = trajectory_configs(
                args.K, depths, args.n, args.scale, args.eps, args.seed, args.margin, args.t_end
            )
            records = store.map("dynamics.trajectory", trajectory_record, configs)
            path = trajectory_figure(out / "dynamics_trajectory.png", configs, records)
            rows = [
                [
                    c["L"],
                    f"{r['times'][-1]:.3g}",
                    f"{r['margin'][-1]:.3g}",
                    f"{r['effective_rank'][-1]:.3f}",
                    f"{r['kl'][-1]:.3g}",
                    r["event"] or "t_end",
                ]
                for c, r in zip(configs, records)
            ]
            print(markdown_table(["L", "final t", "margin", "effective rank", "KL to NC", "stopped by"], rows))
        else:
            configs = basin_configs(
                args.K,
                depths,
                args.n,
                parse_list("scales", args.scales),
                parse_list("eps", args.eps),
                args.seeds,
                args.margin,
                args.t_end,
            )
            with open_executor(args.executor, args.workers) as executor:
                records = store.map("dynamics.basin", basin_cell, configs, executor=executor)
            path, summary = basin_figure(out / "dynamics_basin.png", configs, records)
            print(
                markdown_table(
                    ["L", "fraction at NC"], [[L, f"{f:.3f}"] for L, f in sorted(summary["overall"].items())]
                )
            )
    print(path)
    return 0
