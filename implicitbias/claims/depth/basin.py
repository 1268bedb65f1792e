"""Basin of attraction of NC (Spec A, section 4): depth shrinks it.

Source: Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), section 4 (with Theorem 4.3:
for L = 1 NC is stable along the whole trajectory).

Cells (``basin_cell``): start from a perturbed NC spectrum S_j(0) = scale exp(eps xi_j),
j = 1..K-1, xi_j ~ N(0, 1) seeded, integrate the derived balanced singular-value ODE
(``numerics.ufm.spectral_flow``; L counts weight matrices, N = L + 1 factors) until the smallest
margin reaches ``margin`` (or ``t_end``), and call the start "at NC" when the Roy-Vetterli
effective rank of the final spectrum is at least K - 1 - ``tolerance`` (NC has rank K - 1).
The configs, summary and figure are shared with ``implicitbias dynamics basin``.

The claim holds when the fraction of starts ending at NC never rises with depth and the deepest
basin is smaller than the shallowest with a one-sided Fisher exact p-value below ``significance``
(n = starts per depth, stated).  It is refuted when the deepest basin is not smaller; a drop that
is not significant, a rise between two depths, or a failed integration is inconclusive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive
from implicitbias.claims.depth import TheoremCheck
from implicitbias.claims.depth.kl_to_nc import FlowStart
from implicitbias.claims.rules import fisher_smaller
from implicitbias.figures import markdown_table, save_figure, subplots
from implicitbias.numerics.ufm.spectral_flow import integrate, perturbed_nc
from implicitbias.theory import params
from implicitbias.theory.spectral_ode import SpectralODE

KIND = "dynamics.basin"  # shared with `implicitbias dynamics basin`


def basin_cell(config: dict) -> dict:
    """Cell: {"K", "L", "n", "scale", "eps", "seed", "margin", "t_end", "tolerance"} -> final rank, KL, at_nc.

    Also solve_ivp's ``success`` and ``message``.
    """
    system = SpectralODE(config["K"], config["L"], config["n"], balanced=True)
    run = integrate(
        system,
        perturbed_nc(config["K"], config["scale"], config["eps"], config["seed"]),
        config["t_end"],
        margin=config["margin"],
        rtol=1e-8,
        atol=1e-10,
    )
    rank = float(run.effective_rank[-1])
    return {
        "effective_rank": rank,
        "kl_to_nc": float(run.kl[-1]),
        "margin": float(run.margin[-1]),
        "time": float(run.times[-1]),
        "at_nc": bool(rank >= config["K"] - 1 - config["tolerance"]),
        "success": run.success,
        "message": run.message,
    }


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


@dataclass(frozen=True)
class BasinRun(FlowStart):
    """One start (``basin_cell``'s config and record: ``FlowStart`` and the rank ``tolerance``):
    where it ended, effective rank, KL to NC, smallest ``margin`` and ``time``; whether that is NC;
    and solve_ivp's ``success`` and ``message``."""

    tolerance: float
    effective_rank: float
    kl_to_nc: float
    margin: float
    time: float
    at_nc: bool
    success: bool
    message: str


@dataclass(frozen=True)
class BasinSummary:
    """Per depth L: the fraction at NC over (scale, eps) (``maps``), over all starts (``overall``),
    the starts at NC (``hits``), the starts integrated (``starts``) and the failed integrations
    (``failed``: counted, not used in the fractions)."""

    maps: dict[int, dict[tuple[float, float], float]]
    overall: dict[int, float]
    hits: dict[int, int]
    starts: dict[int, int]
    failed: dict[int, int]


@dataclass(frozen=True)
class Measured:
    """The basin claim's evidence: every start, a ``BasinRun``."""

    runs: tuple[BasinRun, ...]


def basin_runs(configs: list[dict], records: list[dict]) -> tuple[BasinRun, ...]:
    """``basin_cell``'s configs and records as ``BasinRun``s (the record's final ``margin`` replaces
    the config's target)."""
    return tuple(BasinRun(**{**c, **r}) for c, r in zip(configs, records))


def basin_summary(runs: Sequence[BasinRun]) -> BasinSummary:
    """The fractions of starts at NC per depth and per (scale, eps) (``BasinSummary``)."""
    cells: dict = {}
    failed: dict = {}
    for run in runs:
        failed[run.L] = failed.get(run.L, 0) + (not run.success)
        if run.success:
            cells.setdefault(run.L, {}).setdefault((run.scale, run.eps), []).append(run.at_nc)
    maps = {L: {k: float(np.mean(v)) for k, v in grid.items()} for L, grid in cells.items()}
    hits = {L: int(sum(x for v in grid.values() for x in v)) for L, grid in cells.items()}
    starts = {L: sum(len(v) for v in grid.values()) for L, grid in cells.items()}
    overall = {L: hits[L] / starts[L] for L in cells}
    return BasinSummary(maps, overall, hits, starts, failed)


def basin_figure(path: Path, runs: Sequence[BasinRun]) -> tuple[Path, BasinSummary]:
    """One heatmap per depth: fraction of starts ending at NC over (init scale, perturbation)."""
    summary = basin_summary(runs)
    depths = sorted(summary.maps)
    scales = sorted({r.scale for r in runs})
    eps_values = sorted({r.eps for r in runs})
    fig, axes = subplots(1, len(depths), figsize=(3.2 * len(depths), 3.2), squeeze=False)
    columns: dict[str, list] = {"L": [], "scale": [], "eps": [], "fraction_at_nc": []}
    for ax, L in zip(axes[0], depths):
        grid = np.array([[summary.maps[L].get((s, e), np.nan) for s in scales] for e in eps_values])
        im = ax.imshow(grid, origin="lower", vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(scales)), [f"{s:g}" for s in scales], rotation=45)
        ax.set_yticks(range(len(eps_values)), [f"{e:g}" for e in eps_values])
        ax.set_title(f"L = {L}: {summary.overall[L]:.2f} at NC")
        ax.set_xlabel("init scale")
        for e in eps_values:
            for s in scales:
                columns["L"].append(L)
                columns["scale"].append(s)
                columns["eps"].append(e)
                columns["fraction_at_nc"].append(summary.maps[L].get((s, e), np.nan))
    axes[0, 0].set_ylabel("perturbation eps")
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="fraction ending at NC")
    fig.suptitle(f"Basin of NC (K = {runs[0].K}): final effective rank >= K - 1.5", y=1.04)
    return save_figure(fig, path, columns), summary


@dataclass(frozen=True)
class Config:
    K: int = 8
    depths: tuple[int, ...] = (1, 2, 3, 4)
    n: int = 1
    scales: tuple[float, ...] = (1e-3, 1e-2, 1e-1, 1.0)
    eps: tuple[float, ...] = (0.1, 0.3, 0.6)
    seeds: int = 2
    margin: float = 20.0
    t_end: float = 1e8


class Basin(TheoremCheck):
    id = "Basin of NC (s. 4)"
    statement = "depth shrinks the basin of attraction of NC"
    source = "Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), section 4"
    section = "dynamics"
    order = 60
    thresholds = {
        "significance": Threshold(0.05, "one-sided Fisher exact test on the starts of the shallowest and deepest "
                                        "depth: the conventional 5% level, n stated with the verdict"),
    }
    configs = {"default": Config(), "gpu": Config(seeds=6)}
    configs["full"] = configs["gpu"]

    def measure(self, ctx, config: Config) -> Evidence:
        configs = basin_configs(config.K, list(config.depths), config.n, list(config.scales), list(config.eps),
                                config.seeds, config.margin, config.t_end)
        records = ctx.map(KIND, basin_cell, configs, desc="basin of NC")
        check = (f"K = {config.K}, S_j(0) = scale exp(eps xi_j), {len(config.scales)} scales x {len(config.eps)} eps "
                 f"x {config.seeds} seeds per depth, balanced flow to margin {config.margin:g}")
        return Evidence(check, Measured(basin_runs(configs, records)))

    def judge(self, evidence: Evidence) -> Verdict:
        s = basin_summary(evidence.data.runs)
        depths = sorted(s.overall)
        shallow, deep = depths[0], depths[-1]
        p = fisher_smaller(s.hits[shallow], s.starts[shallow], s.hits[deep], s.starts[deep])
        fractions = [s.overall[L] for L in depths]
        failed = sum(s.failed.values())
        measured = (f"fraction at NC for L = {shallow}..{deep}: " + ", ".join(f"{f:.2f}" for f in fractions)
                    + f" (n = {s.starts[shallow]} starts per depth); Fisher p = {p:.1e}")
        numbers = {"fractions": dict(zip(map(str, depths), fractions)), "starts": s.starts[shallow],
                   "fisher_p": p, "failed": failed}
        if failed:
            return inconclusive(f"{failed} integrations failed", measured, **numbers)
        if fractions[-1] >= fractions[0]:
            return disagrees(f"the basin at L = {deep} is not smaller than at L = {shallow}", measured, **numbers)
        rises = [L for L, a, b in zip(depths[1:], fractions, fractions[1:]) if b > a]
        if rises:
            return inconclusive(f"the basin grows again at L = {rises}", measured, **numbers)
        if p >= self.threshold("significance"):
            return inconclusive(f"the drop is not significant (p = {p:.2g})", measured, **numbers)
        return agrees("the fraction of starts reaching NC never rises with depth and drops significantly",
                      measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        path, summary = basin_figure(ctx.path("dynamics_basin.png"), evidence.data.runs)
        return "\n".join([
            f"![basin]({ctx.link(path)})",
            "",
            markdown_table(["L", "starts", "at NC", "fraction", "failed integrations"],
                           [[L, summary.starts[L], summary.hits[L], f"{f:.3f}", summary.failed[L]]
                            for L, f in sorted(summary.overall.items())]),
        ])


CLAIM = Basin()
