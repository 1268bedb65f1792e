"""Theorem 4.3: for L > 1 the NC direction is unstable near the origin, and the unstable region
grows with depth; for L = 1 NC is stable along the whole trajectory.

Source: Spec A section 4; Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 4.3.

Two independent routes on the balanced Hadamard flow (L counts weight matrices, N = L + 1):

- numerical: the Jacobian of the derived ODE assembled with Hadamard matrices for the actual K
  (``numerics.ufm.nc_ray``), restricted to perturbations that leave the NC direction; the
  instability threshold sigma*(K, L) is the brentq root of its largest eigenvalue;
- closed form: the sympy linearisation on the NC ray (``theory.nc_stability``),
  sigma*(K, L) = K sqrt(n) (L - 1)/(L + 1).

The verdict reads the numerical route: the claim holds when every L > 1 cell has a positive
threshold (unstable near the origin), thresholds increase with L for each K, and no L = 1 cell
has one.  When the two routes differ by more than ``routes_agree`` the verdict is inconclusive:
then one of our derivations is wrong and neither can be trusted.  Cells use n = 3 samples per
class, so a sqrt(n) that should be n (or 1) changes the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive
from implicitbias.claims.depth import TheoremCheck
from implicitbias.figures import markdown_table, save_figure, subplots
from implicitbias.numerics.ufm.nc_ray import numeric_threshold
from implicitbias.theory.nc_stability import instability_threshold, ray_linearisation, transverse_eigenvalue

KIND = "theorem_4_3.sigma_star"


@dataclass(frozen=True)
class Config:
    Ks: tuple[int, ...] = (8, 16, 32)
    depths: tuple[int, ...] = tuple(range(1, 11))
    n: int = 3


@dataclass(frozen=True)
class ThresholdCell:
    """sigma*(K, L) with n samples per class, in singular-value units: the closed form and the
    numerical root of the transverse eigenvalue."""

    K: int
    L: int
    n: int
    closed_form: float
    numeric: float


@dataclass(frozen=True)
class Measured:
    """Theorem 4.3's evidence: one ``ThresholdCell`` per (K, L)."""

    cells: tuple[ThresholdCell, ...]


def threshold_cell(config: dict) -> dict:
    """Cell {"K", "L", "n"} -> sigma*(K, L) in singular-value units, closed form and numerical root."""
    K, L, n = config["K"], config["L"], config["n"]
    return {"closed_form": instability_threshold(K, L, n), "numeric": float(np.sqrt(n) * numeric_threshold(K, L, n))}


class Theorem43(TheoremCheck):
    id = "Theorem 4.3"
    statement = "NC ray unstable near the origin for L > 1, region grows with L; stable for L = 1"
    source = "Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 4.3"
    section = "dynamics"
    order = 30
    thresholds = {
        "routes_agree": Threshold(1e-6, "brentq (xtol 1e-12) on an exact Jacobian: the routes differ only by root-finding error"),
    }
    configs = {"default": Config()}

    def measure(self, ctx, config: Config) -> Evidence:
        configs = [{"K": K, "L": L, "n": config.n} for K in config.Ks for L in config.depths]
        records = ctx.map(KIND, threshold_cell, configs, desc="Theorem 4.3")
        cells = tuple(ThresholdCell(**c, **r) for c, r in zip(configs, records))
        check = (f"numerical Jacobian of the derived balanced ODE (brentq root) vs sympy closed form, "
                 f"K in {list(config.Ks)}, L = {config.depths[0]}..{config.depths[-1]}, n = {config.n}")
        return Evidence(check, Measured(cells))

    def judge(self, evidence: Evidence) -> Verdict:
        cells = evidence.data.cells
        tol = self.threshold("routes_agree")
        worst = max(abs(c.numeric - c.closed_form) / max(1.0, c.closed_form) for c in cells)
        by_K: dict[int, list] = {}
        for c in sorted(cells, key=lambda c: (c.K, c.L)):
            by_K.setdefault(c.K, []).append(c)
        K0 = min(by_K)
        deep = [c.numeric for c in by_K[K0] if c.L > 1]
        measured = (f"sigma*({K0}, L) = " + ", ".join(f"{c.numeric:.2f}" for c in by_K[K0])
                    + f" for L = {by_K[K0][0].L}..{by_K[K0][-1].L}; routes differ by {worst:.1e}")
        numbers = {"max_route_difference": worst, f"sigma_star_K{K0}": deep}
        if worst > tol:
            return inconclusive(f"numerical and closed-form thresholds differ by {worst:.1e} > {tol:g}", measured, **numbers)
        unstable = all(c.numeric > 0 for c in cells if c.L > 1)
        shallow_stable = all(c.numeric == 0 for c in cells if c.L == 1)
        grows = all(np.all(np.diff([c.numeric for c in line if c.L > 1]) > 0) for line in by_K.values())
        if unstable and shallow_stable and grows:
            return agrees("every L > 1 ray is unstable near the origin, the region grows with L, L = 1 is stable",
                          measured, **numbers)
        failed = [name for name, ok in (("unstable for L > 1", unstable), ("stable at L = 1", shallow_stable),
                                        ("region grows with L", grows)) if not ok]
        return disagrees("fails: " + ", ".join(failed), measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        cells = evidence.data.cells
        Ks = sorted({c.K for c in cells})
        depths = sorted({c.L for c in cells if c.L > 1})
        table = {(c.K, c.L): c for c in cells}
        margins = np.geomspace(0.05, 40, 200)
        fig, (ax1, ax2) = subplots(1, 2, figsize=(10, 3.8))
        columns: dict[str, list] = {"L": [], "margin": [], "transverse_eigenvalue_scaled": []}
        for L in range(1, 7):
            mu = transverse_eigenvalue(margins, Ks[0], L)
            scaled = mu / np.abs(mu).max()
            ax1.plot(margins, scaled, label=f"L = {L}")
            columns["L"] += [L] * len(margins)
            columns["margin"] += list(margins)
            columns["transverse_eigenvalue_scaled"] += list(scaled)
        ax1.axhline(0, color="grey", lw=0.8)
        ax1.set_xscale("log")
        ax1.set_xlabel(f"margin gamma on the NC ray (K = {Ks[0]})")
        ax1.set_ylabel("transverse eigenvalue (scaled to max 1)")
        ax1.legend(fontsize=7)
        for K in Ks:
            ax2.plot(depths, [table[(K, L)].closed_form for L in depths], "o-", label=f"K = {K} (closed form)")
            ax2.plot(depths, [table[(K, L)].numeric for L in depths], "kx", ms=5)
        ax2.set_xlabel("depth L")
        ax2.set_ylabel("sigma*(K, L)  (x: numerical root)")
        ax2.legend(fontsize=7)
        path = save_figure(fig, ctx.path("dynamics_thm43.png"), columns)
        n = cells[0].n
        return "\n".join([
            f"Transverse eigenvalue on the NC ray (sympy, L = 2): $${ray_linearisation(2).latex()}$$ In general "
            f"mu_perp has the sign of (L-1)/(L+1) - gamma/K, so sigma*(K, L) = K sqrt(n) (L-1)/(L+1) (here n = {n}).",
            "",
            f"![Theorem 4.3]({ctx.link(path)})",
            "",
            markdown_table(["K \\ L", *depths], [[K, *[f"{table[(K, L)].numeric:.3f}" for L in depths]] for K in Ks]),
        ])


CLAIM = Theorem43()
