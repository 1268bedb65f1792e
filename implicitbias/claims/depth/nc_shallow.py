"""L = 1: neural collapse is the global optimum of the shallow UFM.

Source: Spec A sections 1 and 3 (for L = 1 the landscape is benign; P(K, 1) is the convex
nuclear-norm problem).  L counts weight matrices (N = L + 1 = 2, p = 1).

Three routes per K:

- exact dual bound: the uniform multipliers lam_ck = 1/K give the weak-duality bound
  sum(lam) / ||M(lam)||_2 = K - 1 (``solver.nuclear_norm_dual_bound``): no feasible Zbar has
  ||Zbar||_* < K - 1, and NC attains it;
- convex solve: cvxpy (Clarabel) on min ||Zbar||_* s.t. margins >= 1, its status, its value, and
  the bound from its own multipliers;
- non-convex search: the P(K, L) search at p = 1 (``search.search``, random starts included),
  which must never return a feasible matrix below K - 1.

Verdict per K: ``agrees`` when every route puts the optimum at K - 1; ``disagrees`` when a
verified feasible matrix (from cvxpy or the search) lies below K - 1 by more than the tolerance,
or the certified bound lies below K - 1 while a solver reaches it (NC not certified);
``inconclusive`` when cvxpy does not report an optimal solve.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, typed
from implicitbias.claims.depth import TheoremCheck
from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin.search import search
from implicitbias.numerics.maxmargin.solver import nuclear_norm_dual_bound, nuclear_norm_optimum

KIND = "nc_shallow.certificate"


@dataclass(frozen=True)
class Config:
    Ks: tuple[int, ...] = tuple(range(2, 17))
    search_Ks: tuple[int, ...] = (4, 6, 8, 12)
    effort: int = 2


@dataclass(frozen=True)
class ShallowCell:
    """The three routes at L = 1 for K classes: the exact dual bound of uniform multipliers, cvxpy's
    value, dual bound, status and its solution's re-verified objective, and the non-convex search's
    value at p = 1 (None where not searched)."""

    K: int
    uniform_bound: float
    cvxpy_value: float
    cvxpy_bound: float
    cvxpy_status: str
    cvxpy_verified: float
    search_value: float | None


@dataclass(frozen=True)
class Measured:
    """The L = 1 claim's evidence: one ``ShallowCell`` per K."""

    cells: tuple[ShallowCell, ...]


def shallow_cell(config: dict) -> dict:
    """Cell {K, search, effort}: the three routes at L = 1 (module docstring)."""
    K = config["K"]
    cvx = nuclear_norm_optimum(K)
    found = search(K, [1], config["effort"], seed=K).best[1].objective if config["search"] else None
    return asdict(ShallowCell(K, nuclear_norm_dual_bound(np.full((K, K), 1.0 / K)), cvx["value"], cvx["lower_bound"],
                              cvx["status"], cvx["solution"].objective, found))


class NCShallow(TheoremCheck):
    id = "L = 1"
    statement = "NC is the global optimum of the shallow UFM (convex nuclear-norm problem)"
    source = "Spec A s. 1 and 3"
    section = "phase"
    order = 30
    thresholds = {
        "tolerance": Threshold(1e-6, "Clarabel solves to ~1e-8 relative; a relative 1e-6 is beyond its error"),
    }
    configs = {"default": Config(), "gpu": Config(Ks=tuple(range(2, 33))), "full": Config(Ks=tuple(range(2, 33)))}

    def measure(self, ctx, config: Config) -> Evidence:
        configs = [{"K": K, "search": K in config.search_Ks, "effort": config.effort} for K in config.Ks]
        cells = ctx.map(KIND, shallow_cell, configs, desc="L = 1")
        check = (f"exact dual bound (uniform multipliers) and cvxpy (Clarabel) for K = {config.Ks[0]}..{config.Ks[-1]}; "
                 f"non-convex search at p = 1 (effort {config.effort}) for K in {list(config.search_Ks)}")
        return Evidence(check, Measured(typed(ShallowCell, cells)))

    def judge(self, evidence: Evidence) -> Verdict:
        cells = evidence.data.cells
        tol = self.threshold("tolerance")
        below, uncertified, unsolved = [], [], []
        for c in cells:
            nc = c.K - 1
            values = [c.cvxpy_verified] + ([c.search_value] if c.search_value is not None else [])
            if min(values) < nc * (1 - tol):
                below.append(c.K)
            if max(c.uniform_bound, c.cvxpy_bound) < nc * (1 - tol):
                uncertified.append(c.K)
            if c.cvxpy_status != "optimal":
                unsolved.append(c.K)
        worst = max(abs(c.cvxpy_value - (c.K - 1)) / (c.K - 1) for c in cells)
        measured = (f"{len(cells) - len(below) - len(uncertified)}/{len(cells)} K certified at K - 1; "
                    f"max |cvxpy - (K - 1)| / (K - 1) = {worst:.1e}")
        numbers = {"below": below, "uncertified": uncertified, "unsolved": unsolved, "worst": worst}
        if below:
            return disagrees(f"a feasible matrix below K - 1 at K = {below}", measured, **numbers)
        if uncertified:
            return disagrees(f"no certificate reaches K - 1 at K = {uncertified}", measured, **numbers)
        if unsolved:
            return inconclusive(f"cvxpy did not solve to optimality at K = {unsolved}", measured, **numbers)
        return agrees("the dual bound equals K - 1, attained by NC; no solver goes below", measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        return markdown_table(
            ["K", "dual bound (uniform)", "cvxpy value", "cvxpy dual bound", "status", "search at p = 1"],
            [[c.K, f"{c.uniform_bound:.9f}", f"{c.cvxpy_value:.9f}", f"{c.cvxpy_bound:.9f}", c.cvxpy_status,
              "-" if c.search_value is None else f"{c.search_value:.9f}"] for c in evidence.data.cells])


CLAIM = NCShallow()
