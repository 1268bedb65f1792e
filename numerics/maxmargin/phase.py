"""The (K, L) phase diagram of P(K, L): where neural collapse stops being the global optimum.

Depth L counts weight matrices; the features are one more factor, N = L + 1, p = 2/(L + 1).
Each cell is a pure function of (K, L, effort, seed) (``phase_cell``), run through
``Store.map`` by ``phase_diagram`` so it is cached, resumable and parallel.  A cell records the
NC value K - 1, every verified candidate (closed-form codes and the multi-start solver's
outputs, structure named from invariants), the best alternative to NC (explicit matrix) and a
verdict (Spec A, section 3):

- ``NC suboptimal``: an explicit, re-verified Zbar with a strictly smaller objective.  The
  certificate is ``exact`` when a closed-form code (cross-polytope, K-gon) beats NC by an exact
  sympy comparison (``implicitbias.theory.codes.compare_with_nc``), else ``numerical``: a solver
  output below K - 1 by more than a relative gap of ``GAP`` (its margin and objective recomputed).
- ``NC optimal``: L = 1, certified by the convex nuclear-norm problem: the exact dual bound of
  uniform multipliers (``nuclear_norm_dual_bound``) for every K, and for K <= 16 also cvxpy's
  optimum with the bound from its own multipliers; or K = 2 at any depth, exactly: a column-centred 2 x 2 Zbar has rank <= 1, so
  S_p = S_1^p >= (K - 1)^p = 1, the L = 1 bound.
- ``NC best found``: no certificate; the cell lists the starts and the seed behind the search.

``boundary`` reads the smallest integer L at which NC is suboptimal for each K, with the
structure that first beats NC.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from implicitbias.numerics.maxmargin.codes import CODES
from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.numerics.maxmargin.solver import (
    MAX_DIMENSION,
    nuclear_norm_dual_bound,
    nuclear_norm_optimum,
    solve_margin_problem,
    verify,
)
from implicitbias.theory import codes as exact
from implicitbias.theory import params

__all__ = [
    "KIND",
    "VERDICTS",
    "GAP",
    "cell_config",
    "phase_cell",
    "phase_configs",
    "phase_diagram",
    "boundary",
    "best_rank",
    "LIMIT_KIND",
    "depth_limit_cell",
    "MAX_CELLS",
]

KIND = "phase-cell-v1"
LIMIT_KIND = "depth-limit-v1"
VERDICTS = ("NC suboptimal", "NC optimal", "NC best found")
GAP = 1e-6  # relative gap a numerical certificate must clear
MAX_CELLS = 20_000  # each cell stores up to a few K x K matrices
CVXPY_MAX_K = 16  # cvxpy's nuclear-norm SDP takes seconds beyond; the exact dual bound covers all K


def _depth(L) -> int | float:
    L = params.real("L", L, minimum=1, maximum=10_000)
    return int(L) if float(L).is_integer() else L


def cell_config(K: int, L, effort: int = 1, seed: int = 0) -> dict:
    """Canonical config of a cell (integer depths stored as int, so 3 and 3.0 are one cell)."""
    return {
        "K": params.integer("K", K, minimum=2, maximum=MAX_DIMENSION),
        "L": _depth(L),
        "effort": params.integer("effort", effort, minimum=1, maximum=100),
        "seed": params.integer("seed", seed, minimum=0, maximum=2**32 - 1),
    }


def _closed_form_candidates(K: int, L, p: float) -> list[dict]:
    """Cross-polytope and K-gon: explicit matrices verified, closed forms and exact comparison."""
    out = []
    for name in ("cross_polytope", "kgon"):
        if K < (3 if name == "cross_polytope" else 4):
            continue
        rec = verify(CODES[name](K), p, f"{name} code").summary()
        rec["code"] = name
        rec["closed_form"] = float(exact.objective_at(name, K, L))
        rec["exact_sign"] = exact.compare_with_nc(name, K, L)
        out.append(rec)
    return out


def phase_cell(config: dict) -> dict:
    """One cell of the phase diagram, a pure function of ``config`` = (K, L, effort, seed).

    L counts weight matrices (N = L + 1).  Returns the JSON-ready record described in the module
    docstring.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    cfg = cell_config(**config)
    K, L = cfg["K"], cfg["L"]
    p = schatten_exponent(L)
    nc = float(K - 1)
    candidates = _closed_form_candidates(K, L, p)
    certificate: dict = {}
    starts: list[str] = [c["start"] for c in candidates]
    if L == 1:
        uniform = nuclear_norm_dual_bound(np.full((K, K), 1.0 / K))
        certificate = {"kind": "convex", "dual_bound_uniform_multipliers": uniform}
        optimal = uniform >= nc * (1 - GAP)
        if K <= CVXPY_MAX_K:
            cvx = nuclear_norm_optimum(K)
            certificate.update(
                solver="cvxpy/Clarabel nuclear norm",
                value=cvx["value"],
                dual_lower_bound=cvx["lower_bound"],
                status=cvx["status"],
            )
            optimal = optimal and cvx["status"] == "optimal" and cvx["lower_bound"] >= nc * (1 - GAP)
    elif K == 2:
        certificate = {"kind": "exact", "argument": "centred 2 x 2 Zbar has rank 1: S_p = S_1^p >= 1"}
        optimal = True
    else:
        optimal = False
        res = solve_margin_problem(K, L, cfg["effort"], cfg["seed"])
        starts += res.starts
        candidates += [s.summary() for s in res.solutions]
    alternatives = [c for c in candidates if c["structure"] != "nc"]
    best = min(alternatives, key=lambda c: c["objective"]) if alternatives else None
    exact_wins = [c for c in candidates if c.get("exact_sign") == -1]
    if optimal:
        verdict = "NC optimal"
    elif exact_wins:
        win = min(exact_wins, key=lambda c: c["objective"])
        verdict = "NC suboptimal"
        certificate = {
            "kind": "exact",
            "structure": win["code"],
            "closed_form": str(exact.objective_at(win["code"], K, L)),
            "value": win["closed_form"],
            "verified_objective": win["objective"],
            "verified_margin": win["margin"],
        }
    elif best is not None and best["objective"] < nc * (1 - GAP):
        verdict = "NC suboptimal"
        certificate = {
            "kind": "numerical",
            "structure": best["structure"],
            "verified_objective": best["objective"],
            "verified_margin": best["margin"],
            "gap": nc - best["objective"],
        }
    else:
        verdict = "NC best found"
        certificate = {"kind": "none", "starts": starts, "seed": cfg["seed"], "effort": cfg["effort"]}
    return {
        **cfg,
        "p": p,
        "nc_objective": nc,
        "verdict": verdict,
        "certificate": certificate,
        "best": best,
        "candidates": [{k: v for k, v in c.items() if k != "Z"} for c in candidates],
        "starts": starts,
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
    }


def phase_configs(
    kmax: int, lmax: int, effort: int = 1, seed: int = 0, depths: Sequence[float] | None = None, kmin: int = 2
) -> list[dict]:
    """Configs of the grid K in [kmin, kmax] x (L in 1..lmax, plus real ``depths``).

    Raises ``ParameterError`` for bad bounds, non-finite depths, or a grid of more than
    ``MAX_CELLS`` cells (each cell keeps explicit K x K matrices in memory and in the store).
    """
    kmax = params.integer("kmax", kmax, minimum=2, maximum=MAX_DIMENSION)
    kmin = params.integer("kmin", kmin, minimum=2, maximum=kmax)
    lmax = params.integer("lmax", lmax, minimum=1, maximum=10_000)
    extra = [_depth(d) for d in (depths or [])]
    Ls = sorted(set(range(1, lmax + 1)) | set(extra))
    cells = (kmax - kmin + 1) * len(Ls)
    if cells > MAX_CELLS:
        raise params.ParameterError(
            f"grid must have at most {MAX_CELLS} cells (kmax, lmax and depths), got {cells}"
        )
    return [cell_config(K, L, effort, seed) for K in range(kmin, kmax + 1) for L in Ls]


def phase_diagram(store, configs: Sequence[dict], *, executor=None, progress: bool = True) -> list[dict]:
    """Records of every cell, computed through ``store.map`` (cached, resumable, parallel)."""
    return store.map(KIND, phase_cell, configs, executor=executor, progress=progress, desc="phase diagram")


def boundary(records: Sequence[dict]) -> list[dict]:
    """Per K: the smallest integer L where NC is suboptimal, what beats it there, and thresholds.

    The rows also carry the exact threshold depths (real L where the closed-form code ties NC)
    of the K-gon and the cross-polytope, evaluated from ``implicitbias.theory.codes``.
    """
    rows = []
    for K in sorted({r["K"] for r in records}):
        cells = sorted((r for r in records if r["K"] == K and isinstance(r["L"], int)), key=lambda r: r["L"])
        first = next((r for r in cells if r["verdict"] == "NC suboptimal"), None)
        thresholds = {
            name: (float(exact.threshold_depth(name, K)) if K >= (3 if name == "cross_polytope" else 4) else math.inf)
            for name in ("cross_polytope", "kgon")
        }
        rows.append(
            {
                "K": K,
                "L_star": first["L"] if first else None,
                "best_structure": first["best"]["structure"] if first else None,
                "best_rank": first["best"]["rank"] if first else None,
                "certificate": (
                    f"{first['certificate']['kind']}: {first['certificate']['structure']}" if first else None
                ),
                "Lmax_searched": max((r["L"] for r in cells), default=None),
                "nc_optimal_everywhere": all(r["verdict"] == "NC optimal" for r in cells),
                "threshold_cross_polytope": thresholds["cross_polytope"],
                "threshold_kgon": thresholds["kgon"],
            }
        )
    return rows


def best_rank(record: dict) -> int:
    """Rank of the best solution of a cell: NC's K - 1 unless an alternative beats it."""
    best = record["best"]
    if record["verdict"] == "NC suboptimal" and best is not None:
        return int(best["rank"])
    return int(record["K"] - 1)



def depth_limit_cell(config: dict) -> dict:
    """Theorem 3.2 check at one (K, L): the best solution found, named from invariants only.

    ``config`` = {K, L, effort, seed}; L counts weight matrices (N = L + 1) and ``"inf"`` selects
    the p -> 0 objective ordered by (rank, sum log sigma).  The solver runs without the K-gon
    start (``exclude=("kgon",)``) and refines the best solution of each small rank at fixed
    rank; the record compares the best with the exact K-gon value of ``theory.codes``.
    """
    K = params.integer("K", config["K"], minimum=4, maximum=MAX_DIMENSION)
    L = math.inf if config["L"] == "inf" else _depth(config["L"])
    effort = params.integer("effort", config.get("effort", 2), minimum=1, maximum=100)
    seed = params.integer("seed", config.get("seed", 0), minimum=0, maximum=2**32 - 1)
    res = solve_margin_problem(K, L, effort, seed, exclude=("kgon",), refine=True)
    if L == math.inf:
        kgon = float(exact.limit_objective("kgon")[1].subs(exact.K, K))
    else:
        kgon = float(exact.objective_at("kgon", K, L))
    best = res.best.summary()
    return {
        "K": K,
        "L": config["L"],
        "best": best,
        "kgon_exact": kgon,
        "starts": res.starts,
        "runner_up": res.solutions[1].summary() if len(res.solutions) > 1 else None,
    }
