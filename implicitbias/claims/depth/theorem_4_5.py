"""Theorem 4.5: under random initialisation with large width d the initial logit velocity dZ/dt(0)
aligns with the simplex ETF (the NC signature); concentration of measure does it, so the
alignment improves with width and degrades with depth.

Source: Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 4.5.

Cells (``alignment_cell``): Gaussian init N(0, scale^2/d) of the deep UFM (``numerics.ufm.deep_ufm``;
L counts weight matrices, N = L + 1 factors), dZ/dt(0) = J_Z(theta)(-grad l) by a torch
Jacobian-vector product, and its cosine and chordal gap sqrt(2 - 2 cos) to the ETF direction
(I - 11^T/K) kron 1_n^T (``numerics.ufm.etf_alignment``).  Concentration predicts gap ~ d^(-1/2).

The claim holds when the mean cosine (over seeds) rises at every width step, falls at every depth
step, and the fitted gap exponent lies within ``exponent_window`` of -1/2; otherwise it is
refuted.  A 95% bootstrap interval of the exponent over seeds is reported with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from implicitbias.claims import Evidence, Threshold, Verdict, decide
from implicitbias.claims.depth import TheoremCheck
from implicitbias.figures import markdown_table, save_figure, subplots
from implicitbias.numerics.metrics.memory_stats import Interval
from implicitbias.numerics.ufm.deep_ufm import gaussian_init, logit_velocity
from implicitbias.numerics.ufm.etf_alignment import alignment, fit_exponent

KIND = "theorem_4_5.alignment"
CONCENTRATION_EXPONENT = -0.5  # gap ~ d^(-1/2): fluctuations of A A^T and B^T B around multiples of I


@dataclass(frozen=True)
class Config:
    K: int = 4
    n: int = 2
    scale: float = 0.1
    width_depth: int = 2
    widths: tuple[int, ...] = (16, 64, 256, 1024)
    depth_width: int = 64
    depths: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    seeds: int = 3


@dataclass(frozen=True)
class AlignmentCell:
    """One initialisation (K, depth L, width d, n, init ``scale``, ``seed``): the cosine of dZ/dt(0)
    with the ETF direction and the gap ||v/|v| - E/|E|||."""

    K: int
    L: int
    d: int
    n: int
    scale: float
    seed: int
    cosine: float
    gap: float


@dataclass(frozen=True)
class Measured:
    """Theorem 4.5's evidence: the cells along width (at ``width_depth``) and along depth (at ``depth_width``)."""

    width: tuple[AlignmentCell, ...]
    depth: tuple[AlignmentCell, ...]


def alignment_cell(config: dict) -> dict:
    """Cell {"K", "L", "d", "n", "scale", "seed"} -> {"cosine", "gap"} of dZ/dt(0) with the ETF direction."""
    factors = gaussian_init(config["K"], config["L"], config["d"], config["n"], config["scale"], config["seed"])
    cos, gap = alignment(logit_velocity(factors).numpy(), config["n"])
    return {"cosine": cos, "gap": gap}


def _bootstrap_exponent(widths, gaps_by_width, resamples: int = 1000, seed: int = 0) -> Interval:
    """The fitted exponent of gap ~ d^beta with its 95% percentile interval when the seeds of every
    width are resampled."""
    rng = np.random.default_rng(seed)
    betas = []
    for _ in range(resamples):
        means = [np.mean(rng.choice(g, size=len(g))) for g in gaps_by_width]
        betas.append(fit_exponent(widths, means)[0])
    lo, hi = np.percentile(betas, [2.5, 97.5])
    return Interval(fit_exponent(widths, [np.mean(g) for g in gaps_by_width])[0], float(lo), float(hi), 0.95,
                    method="percentile bootstrap over the seeds of every width")


class Theorem45(TheoremCheck):
    id = "Theorem 4.5"
    statement = "wide random init: dZ/dt(0) aligns with the simplex ETF, better with width, worse with depth"
    source = "Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 4.5"
    section = "dynamics"
    order = 70
    outcomes = ("agrees", "disagrees")
    thresholds = {
        "exponent_window": Threshold(0.15, "concentration gives gap ~ d^(-1/2); with 3 seeds and 4 widths the fitted "
                                           "exponent scatters by about +-0.1"),
    }
    configs = {"default": Config(), "gpu": Config(widths=(16, 32, 64, 128, 256, 512, 1024))}
    configs["full"] = configs["gpu"]

    def measure(self, ctx, config: Config) -> Evidence:
        base = {"K": config.K, "n": config.n, "scale": config.scale}
        width_cfgs = [{**base, "L": config.width_depth, "d": d, "seed": s}
                      for d in config.widths for s in range(config.seeds)]
        depth_cfgs = [{**base, "L": L, "d": config.depth_width, "seed": s}
                      for L in config.depths for s in range(config.seeds)]
        records = ctx.map(KIND, alignment_cell, width_cfgs + depth_cfgs, desc="Theorem 4.5")
        cells = tuple(AlignmentCell(**c, **r) for c, r in zip(width_cfgs + depth_cfgs, records))
        check = (f"torch JVP of the logits, Gaussian init var scale^2/d, K = {config.K}, n = {config.n}, "
                 f"L = {config.width_depth}, d = {config.widths[0]}..{config.widths[-1]}; L = {config.depths[0]}.."
                 f"{config.depths[-1]} at d = {config.depth_width}; {config.seeds} seeds")
        return Evidence(check, Measured(cells[: len(width_cfgs)], cells[len(width_cfgs):]))

    @staticmethod
    def _means(cells, axis: str, value: str):
        """The axis's values (field ``axis`` of the cells: d or L), ascending, and the mean of field
        ``value`` over the cells at each."""
        xs = sorted({getattr(c, axis) for c in cells})
        return xs, [float(np.mean([getattr(c, value) for c in cells if getattr(c, axis) == x])) for x in xs]

    def judge(self, evidence: Evidence) -> Verdict:
        width, depth = evidence.data.width, evidence.data.depth
        widths, cos_w = self._means(width, "d", "cosine")
        depths, cos_l = self._means(depth, "L", "cosine")
        ci = _bootstrap_exponent(widths, [[c.gap for c in width if c.d == d] for d in widths])
        beta, lo, hi = ci.estimate, ci.lo, ci.hi
        window = self.threshold("exponent_window")
        rises = bool(np.all(np.diff(cos_w) > 0))
        falls = bool(np.all(np.diff(cos_l) < 0))
        exponent_ok = abs(beta - CONCENTRATION_EXPONENT) <= window
        measured = (f"cosine {cos_w[0]:.3f} -> {cos_w[-1]:.4f} over d = {widths[0]}..{widths[-1]}; gap exponent "
                    f"{beta:.2f} (95% bootstrap {lo:.2f}..{hi:.2f}); cosine over L = {depths[0]}..{depths[-1]}: "
                    f"{cos_l[0]:.3f} -> {cos_l[-1]:.3f}")
        failed = [name for name, ok in (("rises with width", rises), ("falls with depth", falls),
                                        (f"gap exponent within {window:g} of -1/2", exponent_ok)) if not ok]
        return decide(not failed, measured, why_agrees="aligns better with width (gap ~ d^-1/2) and worse with depth",
                      why_disagrees="fails: " + ", ".join(failed), exponent=beta, exponent_ci=[lo, hi],
                      cosine_by_width=cos_w, cosine_by_depth=cos_l)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        width, depth = evidence.data.width, evidence.data.depth
        widths, cos_w = self._means(width, "d", "cosine")
        _, gap_w = self._means(width, "d", "gap")
        depths, cos_l = self._means(depth, "L", "cosine")
        beta, C = fit_exponent(widths, gap_w)
        fig, (ax1, ax2) = subplots(1, 2, figsize=(10, 3.8))
        ax1.loglog(widths, gap_w, "o-", label="gap = ||v/|v| - E/|E|||")
        ax1.loglog(widths, C * np.asarray(widths, dtype=float) ** beta, "k:", label=f"fit d^{beta:.2f}")
        ax1.set_xlabel(f"width d (L = {width[0].L}, K = {width[0].K}, n = {width[0].n})")
        ax1.set_ylabel("gap to the ETF direction")
        ax1.legend()
        ax2.plot(depths, cos_l, "o-")
        ax2.set_xlabel(f"depth L (d = {depth[0].d})")
        ax2.set_ylabel("cos(dZ/dt(0), S kron 1_n^T)")
        columns = {"panel": ["width"] * len(widths) + ["depth"] * len(depths), "x": widths + depths,
                   "cosine": cos_w + cos_l, "gap": gap_w + [float("nan")] * len(depths)}
        path = save_figure(fig, ctx.path("dynamics_thm45.png"), columns)
        return "\n".join([
            f"![Theorem 4.5]({ctx.link(path)})",
            "",
            markdown_table(["d", *widths], [["mean cosine", *[f"{c:.4f}" for c in cos_w]]]),
            "",
            markdown_table(["L", *depths], [[f"mean cosine (d = {depth[0].d})", *[f"{c:.4f}" for c in cos_l]]]),
        ])


CLAIM = Theorem45()
