"""Section 5 on the deep UFM: after unregularised gradient descent the effective rank of the
mean-logit matrix falls with depth and rises with width.

Source: Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5.

Cells (``trained_rank``): deep UFM (``numerics.ufm.deep_ufm``), K classes, n per class, width d,
depth L = number of weight matrices (N = L + 1 factors), Gaussian init N(0, scale^2/d), plain
gradient descent on the mean cross-entropy.  After ``steps`` steps the mean-logit matrix Zbar
(K x K) is summarised by its Roy-Vetterli effective rank exp(H(sigma / sum sigma)) (primary; the
other definitions of ``numerics.metrics.rank`` are recorded), its margin, the KL divergence to NC
and NC1-NC4 of the last hidden features W_{L-1} ... W_1 H against the classifier W_L; a run whose
loss became non-finite is recorded as diverged and left out of the means (counted).

The claim holds when, in the grid of seed means, every depth step lowers the rank and every width
step raises it by more than ``trend_step``; it is refuted when some step goes the other way by
more than that; steps within it, or a grid cell without a converged run, are inconclusive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from implicitbias.claims import Evidence, Threshold, Verdict, inconclusive
from implicitbias.claims.depth import TheoremCheck
from implicitbias.claims.rules import trend_verdict
from implicitbias.figures import markdown_table, save_figure, subplots
from implicitbias.numerics.maxmargin.margin import class_means, labels, min_margin
from implicitbias.numerics.metrics.kl_to_nc import kl_to_nc_of_matrix
from implicitbias.numerics.metrics.nc_metrics import nc_metrics
from implicitbias.numerics.metrics.rank import effective_ranks
from implicitbias.numerics.ufm.deep_ufm import gaussian_init, gradient_descent, logits

KIND = "section_5_deep_ufm.trained_rank"
NC_KEYS = ("nc1", "nc2", "nc3", "nc4_agreement")


@dataclass(frozen=True)
class Config:
    K: int = 10
    depths: tuple[int, ...] = (1, 3, 6)
    widths: tuple[int, ...] = (16, 64)
    seeds: int = 2
    steps: int = 1500
    lr: float = 0.2
    scale: float = 1.0


def trained_rank(config: dict) -> dict:
    """Cell: {"K", "L", "d", "n", "scale", "lr", "steps", "seed"} -> ranks, loss, margin, KL, NC1-NC4.

    L counts weight matrices (N = L + 1 factors).
    """
    factors = gaussian_init(config["K"], config["L"], config["d"], config["n"], config["scale"], config["seed"])
    run = gradient_descent(factors, config["lr"], config["steps"], record_every=config["steps"] or 1)
    if not run.success:
        return {"diverged": True, "message": run.message}
    Zbar = class_means(run.logits[-1], config["n"])
    features = logits(run.factors[:-1]).numpy().T  # (K n) x d: the input of the classifier W_L
    nc = nc_metrics(features, labels(config["K"], config["n"]), run.factors[-1].numpy())
    return {
        **nc.as_dict(),
        "diverged": False,
        **effective_ranks(Zbar),
        "loss": float(run.loss[-1]),
        "margin": min_margin(Zbar),
        "kl_to_nc": kl_to_nc_of_matrix(Zbar),
    }


@dataclass(frozen=True)
class TrainedRun:
    """One ``trained_rank`` run with its config (K, depth L, width d, n, init ``scale``, ``lr``,
    ``steps``, ``seed``): whether it diverged (then ``message`` says why and the rest is None), else
    the NC metrics of its last hidden features (``NCMetrics``' fields), the effective ranks of its
    mean logits (``rank.DEFINITIONS``), its final loss, margin and KL to NC."""

    K: int
    L: int
    d: int
    n: int
    scale: float
    lr: float
    steps: int
    seed: int
    diverged: bool
    message: str | None = None
    nc1: float | None = None
    nc2: float | None = None
    nc2_equinorm: float | None = None
    nc2_equiangularity: float | None = None
    nc3: float | None = None
    nc4_agreement: float | None = None
    roy_vetterli: float | None = None
    roy_vetterli_squared: float | None = None
    stable: float | None = None
    threshold: float | None = None
    loss: float | None = None
    margin: float | None = None
    kl_to_nc: float | None = None


@dataclass(frozen=True)
class Measured:
    """Section 5's evidence: every run of the depth x width x seed grid."""

    cells: tuple[TrainedRun, ...]


def rank_grid(cells: Sequence[TrainedRun]) -> tuple[list[int], list[int], np.ndarray, int]:
    """(depths, widths, mean Roy-Vetterli rank per (L, d) over converged seeds (nan if none), diverged runs)."""
    depths = sorted({c.L for c in cells})
    widths = sorted({c.d for c in cells})
    grid = np.full((len(depths), len(widths)), np.nan)
    for i, L in enumerate(depths):
        for j, d in enumerate(widths):
            vals = [c.roy_vetterli for c in cells if c.L == L and c.d == d and not c.diverged]
            grid[i, j] = np.mean(vals) if vals else np.nan
    return depths, widths, grid, sum(c.diverged for c in cells)


class Section5DeepUFM(TheoremCheck):
    id = "Section 5 (deep UFM)"
    statement = "effective rank of the mean logits falls with depth, rises with width"
    source = "Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5"
    section = "dynamics"
    order = 80
    thresholds = {
        "trend_step": Threshold(0.1, "effective-rank units: seed-to-seed spread of the mean over 2 seeds is a few "
                                     "hundredths; the trends the source reports are whole ranks"),
    }
    configs = {"default": Config(),
               "gpu": Config(depths=(1, 2, 3, 4, 5, 6), widths=(16, 32, 64, 128, 256), seeds=3, steps=2000)}
    configs["full"] = configs["gpu"]

    def measure(self, ctx, config: Config) -> Evidence:
        configs = [{"K": config.K, "L": L, "d": d, "n": 1, "scale": config.scale, "lr": config.lr,
                    "steps": config.steps, "seed": s}
                   for L in config.depths for d in config.widths for s in range(config.seeds)]
        records = ctx.map(KIND, trained_rank, configs, desc="section 5 (deep UFM)")
        check = (f"GD from Gaussian init, no regularisation, K = {config.K}, L in {list(config.depths)}, "
                 f"d in {list(config.widths)}, {config.seeds} seeds, lr {config.lr:g}, {config.steps} steps")
        return Evidence(check, Measured(tuple(TrainedRun(**c, **r) for c, r in zip(configs, records))))

    def judge(self, evidence: Evidence) -> Verdict:
        depths, widths, grid, diverged = rank_grid(evidence.data.cells)
        tol = self.threshold("trend_step")
        measured = (f"rank {grid[0, 0]:.2f} (L = {depths[0]}, d = {widths[0]}) ... {grid[-1, 0]:.2f} (L = {depths[-1]}); "
                    f"{grid[-1, -1]:.2f} at d = {widths[-1]}; {diverged} diverged runs")
        numbers = {"grid": grid.tolist(), "depths": depths, "widths": widths, "diverged": diverged}
        if np.isnan(grid).any():
            return inconclusive("a grid cell has no converged run", measured, **numbers)
        steps = np.concatenate([(grid[:-1] - grid[1:]).ravel(), (grid[:, 1:] - grid[:, :-1]).ravel()])
        return trend_verdict(  # positive steps: falls with depth, rises with width
            steps, tol, measured,
            holds=f"every depth step lowers and every width step raises the rank by more than {tol:g}",
            reversed=f"some depth or width step moves the rank against the claim by more than {tol:g}",
            unclear=f"some step is within {tol:g} rank units", **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        cells = evidence.data.cells
        depths, widths, grid, _ = rank_grid(cells)
        fig, ax = subplots(figsize=(6, 3.8))
        columns: dict[str, list] = {"d": [], "L": [], "effective_rank": []}
        for j, d in enumerate(widths):
            ax.plot(depths, grid[:, j], "o-", label=f"d = {d}")
            columns["d"] += [d] * len(depths)
            columns["L"] += depths
            columns["effective_rank"] += list(grid[:, j])
        ax.set_xlabel("depth L")
        ax.set_ylabel("effective rank of mean logits (Roy-Vetterli)")
        ax.set_title(f"Deep UFM, K = {cells[0].K}, GD lr {cells[0].lr:g}, {cells[0].steps} steps")
        ax.legend()
        path = save_figure(fig, ctx.path("dynamics_section5.png"), columns)

        def mean_nc(L):
            rows = [c for c in cells if c.L == L and c.d == widths[-1] and not c.diverged]
            return [float(np.mean([getattr(c, k) for c in rows])) if rows else float("nan") for k in NC_KEYS]

        return "\n".join([
            f"![section 5]({ctx.link(path)})",
            "",
            markdown_table(["L \\ d", *widths], [[L, *[f"{v:.2f}" for v in grid[i]]] for i, L in enumerate(depths)]),
            "",
            f"NC1-NC4 (Papyan et al.; `implicitbias.numerics.metrics.nc_metrics`) of the last hidden features, "
            f"d = {widths[-1]}, mean over seeds (n = 1 sample per class, so NC1 = 0 by construction; NC2/NC3 grow "
            "with depth as the means leave the simplex ETF):",
            "",
            markdown_table(["L", *NC_KEYS], [[L, *[f"{v:.3g}" for v in mean_nc(L)]] for L in depths]),
        ])


CLAIM = Section5DeepUFM()
