"""Theorem 3.1: for L = 2 with K >= 6, or L >= 3 with K >= 4, NC is not a global optimum of
P(K, L); it remains a local optimum.

Source: Spec A section 3; Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 3.1.  L counts
weight matrices (N = L + 1, p = 2/(L + 1)).

Two routes:

- not global: the phase diagram (``numerics.maxmargin.phase``, the columns ``implicitbias
  phase`` computes, shared through the store) must hold, in every cell of the theorem's region,
  an explicit re-verified matrix below K - 1: certificate ``exact`` (a named code with a closed
  form beats NC by an exact sympy comparison) or ``numerical`` (a solver output below K - 1 by
  more than the phase diagram's relative gap, margins and objective recomputed);
- local: at NC, (i) one-sided finite-difference slopes of S_p along random feasible directions
  (an SVD, independent of any formula) are positive and equal the first-order formula p tr(D);
  (ii) ``lower_bounds.nc_local_radius`` certifies S_p > K - 1 on a neighbourhood of explicit
  size u_0 > 0 (Taylor, Weyl and Mirsky bounds; a proof, not a sample).

Verdict: ``disagrees`` when a region cell has no matrix below NC (the data then side with NC)
or NC fails a local test (a negative slope, or no certified radius); ``inconclusive`` when the
grid holds no cell of the region or the slopes and the first-order formula disagree (then the
local test itself cannot be trusted); else ``agrees``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive
from implicitbias.claims.depth import TheoremCheck
from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin.lower_bounds import nc_local_radius
from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.numerics.maxmargin.cells import PhaseCell
from implicitbias.numerics.maxmargin.phase import cells_of, phase_configs, phase_diagram
from implicitbias.numerics.maxmargin.solver import feasible_directions, nc_directional_slopes

LOCAL_KIND = "theorem_3_1.local"


@dataclass(frozen=True)
class Config:
    kmax: int = 16  # phase grid K = 2..kmax, L = 1..lmax (the default grid of the report)
    lmax: int = 12
    local_Ks: tuple[int, ...] = (4, 6, 8, 12)
    local_Ls: tuple[int, ...] = (2, 3, 6, 12)
    directions: int = 50


def in_region(K: int, L) -> bool:
    """The cells of Theorem 3.1: L = 2, K >= 6 or L >= 3, K >= 4 (integer L)."""
    return isinstance(L, int) and ((L == 2 and K >= 6) or (L >= 3 and K >= 4))


@dataclass(frozen=True)
class LocalCell:
    """At NC in cell (K, L): the smallest finite-difference slope of S_p along the random feasible
    directions, the largest relative error of the first-order formula p tr(D) against those slopes,
    and the certified radius u_0 of the local minimum."""

    K: int
    L: int
    min_slope: float
    max_formula_error: float
    radius: float


@dataclass(frozen=True)
class Measured:
    """Theorem 3.1's evidence: the phase cells of the theorem's region, and the local cells at NC."""

    region: tuple[PhaseCell, ...]
    local: tuple[LocalCell, ...]


def local_cell(config: dict) -> dict:
    """Cell {K, L, directions, seed}: slopes of S_p at NC along random feasible directions,
    the first-order formula p tr(D) for each, and the certified radius of the local minimum
    (the store's record of a ``LocalCell``)."""
    K, L, directions, seed = config["K"], config["L"], config["directions"], config["seed"]
    p = schatten_exponent(L)
    D = feasible_directions(K, directions, seed=seed)
    slopes = nc_directional_slopes(K, p, D)
    formula = p * np.trace(D, axis1=1, axis2=2)
    error = float(np.max(np.abs(slopes - formula) / np.maximum(1e-12, np.abs(formula))))
    return asdict(LocalCell(K, L, float(slopes.min()), error, nc_local_radius(K, p)))


class Theorem31(TheoremCheck):
    id = "Theorem 3.1"
    statement = "NC is not a global optimum for L = 2, K >= 6 or L >= 3, K >= 4, yet stays a local optimum"
    source = "Spec A s. 3; Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 3.1"
    section = "phase"
    order = 10
    thresholds = {
        "formula_agreement": Threshold(1e-4, "one-sided differences with t = 1e-7 on O(1) matrices: error O(t) plus rounding"),
    }
    configs = {"default": Config(), "gpu": Config(kmax=32), "full": Config(kmax=32)}

    def measure(self, ctx, config: Config) -> Evidence:
        columns = phase_diagram(ctx.map, phase_configs(config.kmax, config.lmax))
        region = tuple(c for c in cells_of(columns) if in_region(c.K, c.L))
        local = ctx.map(LOCAL_KIND, local_cell, [{"K": K, "L": L, "directions": config.directions, "seed": K}
                                                 for K in config.local_Ks for L in config.local_Ls], desc="NC local")
        check = (f"phase diagram K <= {config.kmax}, L <= {config.lmax}: a verified matrix below K - 1 in every cell "
                 f"of the region; at NC, {config.directions} random feasible directions (finite differences vs p tr D) "
                 f"and the certified local radius, K in {list(config.local_Ks)}, L in {list(config.local_Ls)}")
        return Evidence(check, Measured(region, tuple(LocalCell(**rec) for rec in local)))

    def judge(self, evidence: Evidence) -> Verdict:
        region, local = evidence.data.region, evidence.data.local
        failed = [(c.K, c.L) for c in region if c.verdict != "NC suboptimal"]
        exact = sum(c.certificate.kind == "exact" for c in region)
        min_slope = min(c.min_slope for c in local)
        min_radius = min(c.radius for c in local)
        formula = max(c.max_formula_error for c in local)
        measured = (f"{len(region) - len(failed)}/{len(region)} cells NC suboptimal ({exact} exact); "
                    f"min slope {min_slope:.3g}, slopes vs p tr(D) within {formula:.1e}; "
                    f"certified local radius >= {min_radius:.3g}")
        numbers = {"region_cells": len(region), "failed": failed, "exact": exact, "min_slope": min_slope,
                   "min_radius": min_radius, "formula_error": formula}
        if not region:
            return inconclusive("the grid holds no cell of the theorem's region", measured, **numbers)
        if formula > self.threshold("formula_agreement"):
            return inconclusive(f"finite-difference slopes and p tr(D) differ by {formula:.1e}: the local test "
                                "cannot be trusted", measured, **numbers)
        if failed:
            return disagrees(f"no matrix below NC found in {len(failed)} cells of the region, e.g. {failed[:4]}",
                             measured, **numbers)
        if min_slope <= 0 or min_radius <= 0:
            return disagrees("NC is not a local optimum: a non-positive slope or no certified radius", measured, **numbers)
        return agrees("every region cell has a verified matrix below NC; NC is a certified strict local minimum",
                      measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        local = evidence.data.local
        Ks = sorted({c.K for c in local})
        Ls = sorted({c.L for c in local})
        table = {(c.K, c.L): c for c in local}
        return ("Certified radius u_0 of the local minimum at NC (S_p > K - 1 whenever 0 < sum_ck (g_ck - 1) <= u_0; "
                "`lower_bounds.nc_local_radius`), and the smallest finite-difference slope:\n\n"
                + markdown_table(["K \\ L", *Ls], [[K, *[f"{table[(K, L)].radius:.3f} / {table[(K, L)].min_slope:.3f}"
                                                         for L in Ls]] for K in Ks]))


CLAIM = Theorem31()
