"""The (K, L) phase diagram of P(K, L): where neural collapse stops being optimal, and what replaces it.

Depth L counts weight matrices; the features are one more factor, N = L + 1, p = 2/(L + 1).
The unit of computation is a column: one K, all requested depths, computed in two passes by
``phase_diagram`` through ``Store.map`` (cached, resumable and parallel over K).  Pass 1
(``search_column``, a pure function of {K, depths, effort, seed}) runs the global search
(``implicitbias.numerics.maxmargin.search``) once for all the column's depths (above 16 classes at
effort 1 only for its shallow depths) and, up to ``low_rank.LOW_RANK_K`` = 32 classes, the low-rank
ladder on its depths L >= 4 (``low_rank.ladder``), keeping the better code per depth; above 32
classes the rank-r route ``low_rank.large_search`` instead, whose cells are named from cheap
invariants (``naming.identify(Z, group=False)``).  Pass 2 (``phase_column``, a pure function of the
same config and of whether the grid holds the column of K + 1 classes, from their pass-1 records) first
offers each deep depth (L >= 4) the code of the column above less a class (``_offered_from_above``; so a
deep cell of a K <= 31 column can be lower in a grid that holds K + 1 than alone), then records a cell
for every depth: the NC value K - 1, the best verified matrix with its name from invariants (``naming.identify``), the
closed-form objective when the structure is named (``implicitbias.theory.codes``), a certified
lower bound (``lower_bounds``), the gap between the two, and a verdict (Spec A, section 3):

- ``NC suboptimal``: an explicit, re-verified Zbar with a strictly smaller objective.  The
  certificate is ``exact`` when a named code beats NC by an exact sympy comparison
  (``theory.codes.compare_with_nc``), else ``numerical``: a solver output below K - 1 by more
  than a relative ``GAP`` (its margin and objective recomputed).
- ``NC optimal``: L = 1, certified by the convex nuclear-norm problem: the exact dual bound of
  uniform multipliers (``nuclear_norm_dual_bound``) for every K, and for K <= 16 also cvxpy's
  optimum with the bound from its own multipliers; K = 2 at any depth (a column-centred 2 x 2
  Zbar has rank 1: S_p = S_1^p >= 1); K = 3 at any depth (``theory.three_classes``: every
  feasible Zbar has sigma_1 sigma_2 >= 1, so S_p >= 2); or a branch-and-bound certificate
  (``branch_and_bound``) where one is supplied.
- ``NC best found``: no certificate; the cell states the search effort behind it.

Each column also lists the crossovers: for every pair of structures optimal at some depth of
the column, the real depths where their objectives tie (exact for named pairs, else from the
explicit matrices).  ``boundary`` reads the smallest integer L at which NC is suboptimal for
each K, with the structure that first beats NC.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np
from scipy.optimize import brentq

from implicitbias.numerics.maxmargin.cells import Certificate, NamedCode, PhaseCell
from implicitbias.numerics.maxmargin.codes import less_a_class, simplex_etf
from implicitbias.numerics.maxmargin.low_rank import (
    LADDER_FROM,
    LADDER_ITERATIONS,
    LOW_RANK_K,
    ladder,
    large_search,
    tickets,
)
from implicitbias.numerics.maxmargin.lower_bounds import certified_lower_bound
from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.numerics.maxmargin.naming import identify, known_structures
from implicitbias.numerics.maxmargin.search import SMALL_K, SearchResult, search
from implicitbias.numerics.maxmargin.solver import (
    COARSE_SCHEDULE,
    MAX_DIMENSION,
    MarginSolution,
    nuclear_norm_dual_bound,
    nuclear_norm_optimum,
    polish,
    refine_exact,
    refine_until_stalled,
    verify,
)
from implicitbias.numerics.metrics.rank import numerical_rank
from implicitbias.theory import codes as exact
from implicitbias.theory import params
from implicitbias.theory.three_classes import proof as three_class_proof

__all__ = [
    "KIND",
    "SEARCH_KIND",
    "VERDICTS",
    "GAP",
    "CVXPY_MAX_K",
    "column_config",
    "search_column",
    "phase_column",
    "phase_configs",
    "phase_diagram",
    "cells_of",
    "boundary",
    "Certificate",
    "NamedCode",
    "PhaseCell",
    "MAX_CELLS",
]

KIND = "maxmargin.phase-column"
SEARCH_KIND = "maxmargin.phase-search"
VERDICTS = ("NC suboptimal", "NC optimal", "NC best found")
GAP = 1e-6  # relative gap a numerical certificate must clear
MAX_CELLS = 20_000  # each cell stores an explicit K x K matrix
CVXPY_MAX_K = 16  # cvxpy's nuclear-norm SDP takes seconds beyond; the exact dual bound covers all K
SHALLOW_SEARCH_DEPTHS = (2, 3)  # at effort 1 the exact search's search depths above SMALL_K classes ...
SMALL_SHALLOW_SEARCH_DEPTHS = (2, 3, 4)  # ... and up to SMALL_K; it serves the depths below the deepest one plus 1
OFFERED_WITHIN = 1e-3  # the ladder's first code is refined at the depth below only this close (``_offered_below``)
CROSSOVER_REFINE = 1  # rounds of re-refining two adjacent optima at their estimated crossing ...
CROSSOVER_ITERATIONS = 8  # ... each at its rank, this many SLSQP iterations from the code taken there unmoved
ABOVE_WITHIN = 3e-3  # the column above's code less its best class is moved at a deep depth only this close to its best


def _depth(L) -> int | float:
    L = params.real("L", L, minimum=1, maximum=10_000)
    return int(L) if float(L).is_integer() else float(L)


def column_config(K: int, depths: Sequence, effort: int = 1, seed: int = 0) -> dict:
    """Canonical config of a column (integer depths stored as int, sorted, no repeats)."""
    return {
        "K": params.integer("K", K, minimum=2, maximum=MAX_DIMENSION),
        "depths": sorted({_depth(L) for L in depths}),
        "effort": params.integer("effort", effort, minimum=1, maximum=100),
        "seed": params.integer("seed", seed, minimum=0, maximum=2**32 - 1),
    }


def _named_candidates(K: int, L, keys=()) -> list[NamedCode]:
    """Every named code at K (but NC; base codes and catalogue entries), and those of ``keys``, with its exact
    objective at depth L and exact sign against NC."""
    return [NamedCode(key, float(exact.objective_at(key, K, L)), exact.compare_with_nc(key, K, L))
            for key in [*exact.structures_with_vertices(K), *keys] if key != "nc"]


def _shallow_certificate(K: int, nc: float) -> tuple[dict, bool]:
    """L = 1: the convex problem's dual bounds (uniform multipliers; cvxpy's for K <= 16)."""
    uniform = nuclear_norm_dual_bound(np.full((K, K), 1.0 / K))
    certificate = {"kind": "convex", "dual_bound_uniform_multipliers": uniform}
    optimal = uniform >= nc * (1 - GAP)
    if K <= CVXPY_MAX_K:
        cvx = nuclear_norm_optimum(K)
        certificate.update(solver="cvxpy/Clarabel nuclear norm", value=cvx["value"],
                           dual_lower_bound=cvx["lower_bound"], status=cvx["status"])
        optimal = optimal and cvx["status"] == "optimal" and cvx["lower_bound"] >= nc * (1 - GAP)
    return certificate, optimal


def _cell(K: int, L, effort: int, seed: int, found, starts: int) -> PhaseCell:
    """One cell of a column: verdict, certificate, best matrix with its name, bound and gap."""
    p = schatten_exponent(L)
    nc = float(K - 1)
    certificate: dict = {}
    optimal = False
    if L == 1:
        certificate, optimal = _shallow_certificate(K, nc)
    elif K == 2:
        certificate, optimal = {"kind": "exact", "argument": "a centred 2 x 2 Zbar has rank 1: S_p = S_1^p >= 1"}, True
    elif K == 3:
        optimal = three_class_proof().holds
        certificate = {"kind": "exact", "argument": "K = 3: sigma_1 sigma_2 >= 1 for every feasible Zbar "
                       "(theory.three_classes, sympy-checked), so S_p >= 2 (sigma_1 sigma_2)^(p/2) >= 2"}
    pool = ([found] if found is not None else []) + [verify(Z, p, key) for key, _, Z in known_structures(K) if key != "nc"]
    alternative = min((s for s in pool if s.objective < nc * (1 - GAP)), key=lambda s: s.objective, default=None)
    best = alternative if alternative is not None and not optimal else verify(simplex_etf(K), p, "nc")
    ident = identify(best.Z, group=K <= LOW_RANK_K)
    # an entry with added classes is valued exactly only where it is the cell's code (76 of them: valued at every cell
    # of their K they took the atlas to 1.039x its CPU; benchmarks/RESULTS.md, "Catalogue entries with a singleton")
    named = _named_candidates(K, L, [ident.key] if ident.key in exact.AUGMENTED else [])
    closed = exact.objective_at(ident.key, K, L) if ident.key else None
    exact_wins = [c for c in named if c.exact_sign == -1]
    if optimal:
        verdict = "NC optimal"
    elif alternative is not None:
        verdict = "NC suboptimal"
        win = next((c for c in named if c.key == ident.key and c.exact_sign == -1), None)
        win = win or (min(exact_wins, key=lambda c: c.objective) if exact_wins else None)
        if win is not None:
            certificate = {"kind": "exact", "structure": win.key,
                           "closed_form": str(exact.objective_at(win.key, K, L)), "value": win.objective,
                           "verified_objective": best.objective, "verified_margin": best.margin}
        else:
            certificate = {"kind": "numerical", "structure": ident.name, "verified_objective": best.objective,
                           "verified_margin": best.margin, "gap": nc - best.objective}
    else:
        verdict = "NC best found"
        certificate = {"kind": "none", "starts": starts, "seed": seed, "effort": effort}
    bound = certified_lower_bound(K, L) if not optimal else {"value": nc, "kind": certificate["kind"]}
    return PhaseCell(
        K=K, L=L, p=p, verdict=verdict, structure=ident.name, key=ident.key, rank=best.rank, value=best.objective,
        nc_value=nc, lower_bound=bound["value"], gap=(best.objective - bound["value"]) / best.objective,
        certificate=Certificate(certificate["kind"], certificate.get("structure"), certificate),
        closed_form=None if closed is None else str(closed), matrix=best.Z, lower_bound_kind=bound["kind"],
        symmetry_order=ident.order, vertex_transitive=ident.vertex_transitive, start=best.start,
        solver_success=best.success, solver_message=best.message, effort=effort, seed=seed, margin=best.margin,
        singular_values=tuple(best.singular_values), iterations=best.iterations, orbit_sizes=tuple(ident.orbit_sizes),
        equal_spectrum=ident.equal_spectrum, symmetric=ident.symmetric, cosines=tuple(ident.cosines),
        closed_form_value=None if closed is None else float(closed), named=tuple(named),
    )


def _curve(Z: np.ndarray):
    """q -> S_q(Z) over the numerical rank at numpy's ``matrix_rank`` tolerance (K machine epsilons)."""
    s = np.linalg.svd(Z, compute_uv=False)
    s = s[: numerical_rank(s, Z.shape[0] * np.finfo(float).eps)]
    return lambda q: float(np.sum(s**q))


def _frozen_ties(Za: np.ndarray, Zb: np.ndarray) -> list[float]:
    """Depths L >= 1 where S_p(Za) = S_p(Zb), the two matrices held fixed (p scanned on (0, 1])."""
    fa, fb = _curve(Za), _curve(Zb)
    grid = np.linspace(1e-3, 1.0, 400)
    diff = np.array([fa(q) - fb(q) for q in grid])
    roots = []
    for i in np.flatnonzero(np.sign(diff[:-1]) * np.sign(diff[1:]) < 0):
        q = brentq(lambda x: fa(x) - fb(x), grid[i], grid[i + 1], xtol=1e-14)
        roots.append(2 / q - 1)
    return roots


def _crossovers(K: int, cells: list[PhaseCell]) -> list[dict]:
    """Ties between every pair of structures optimal at some integer depth of the column.

    Exact (``theory.codes.tie_depths``) when both are named; otherwise from the explicit
    matrices: the objectives of the two optimal matrices (taken at the depths nearest to each
    other) as functions of p, refined at the estimated crossing ``CROSSOVER_REFINE`` times when the
    two are optimal at consecutive depths (their shapes may change with depth): each taken there
    unmoved and refined at its rank (``solver.refine_exact``, ``CROSSOVER_ITERATIONS``).  Over the
    89 such crossings of the K <= 32 atlas this left the two minima at the tie (each polished and
    refined until it stalls there) 7.3e-10 apart at the median, 7.1e-7 at the 95th percentile and
    1.8e-4 at most, against 1.4e-8, 9.4e-7 and 1.3e-4 when each was polished along
    ``solver.WARM_SCHEDULE``, in 0.58x its CPU (benchmarks/RESULTS.md, "Offers from the column above").
    """
    optimal: dict[str, list[PhaseCell]] = {}
    for c in cells:
        if isinstance(c.L, int):
            optimal.setdefault(c.structure, []).append(c)
    names = sorted(optimal, key=lambda n: min(c.L for c in optimal[n]))
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            ka, kb = optimal[a][0].key, optimal[b][0].key
            if ka and kb:
                ties = [float(t) for t in exact.tie_depths(ka, kb, K)]
                method = "exact (closed forms)"
            else:
                ca = max(optimal[a], key=lambda c: c.L)
                cb = min(optimal[b], key=lambda c: c.L)
                Za, Zb = ca.matrix, cb.matrix
                ties = _frozen_ties(Za, Zb)
                method = "from the optimal matrices (shapes frozen)"
                if cb.L - ca.L == 1 and len([t for t in ties if ca.L < t < cb.L]) == 1:
                    t = next(t for t in ties if ca.L < t < cb.L)
                    for _ in range(CROSSOVER_REFINE):
                        q = schatten_exponent(t)
                        Za = Za if ka else _refined_at(Za, q, a)  # a named code is rigid: its matrix
                        Zb = Zb if kb else _refined_at(Zb, q, b)  # is its optimum at every depth
                        near = [x for x in _frozen_ties(Za, Zb) if ca.L - 0.5 < x < cb.L + 0.5]
                        if not near:
                            break
                        t = min(near, key=lambda x: abs(x - t))
                    ties = [t if ca.L < x < cb.L else x for x in ties]
                    method = "refined at the crossing"
            out.append({"K": K, "a": a, "b": b, "ties": ties, "method": method,
                        "a_optimal_at": [c.L for c in optimal[a]], "b_optimal_at": [c.L for c in optimal[b]]})
    return out


def _refined_at(Z: np.ndarray, q: float, start: str) -> np.ndarray:
    """Z taken unmoved to exponent q and refined at its rank (``CROSSOVER_ITERATIONS``)."""
    return refine_exact(verify(Z, q, start), maxiter=CROSSOVER_ITERATIONS).Z


def search_column(config: dict) -> dict:
    """The global search of one column, a pure function of {K, depths, effort, seed}.

    Searches the depths L > 1 when K >= 4.  Up to ``low_rank.LOW_RANK_K`` classes: the exact search
    (``search.search``), each depth's best refined at fixed rank until it stalls when K <= ``search.SMALL_K``
    (``solver.refine_until_stalled``: one SLSQP run can stop 5e-6 above the minimum), the low-rank ladder on the
    finite depths L >= ``low_rank.LADDER_FROM`` (``low_rank.ladder``, 1-4 CPU s a column) and, from effort 2 on
    above ``SMALL_K``, the rank-r route, keeping the better code per depth (``_better_per_depth``: the ladder and
    the rank-r route can only lower a cell); the column's code at the ladder's first depth is then offered to the
    depth below it (``_offered_below``), where the two routes meet at effort 1.  At effort 1 the exact search runs
    from the search depths ``SHALLOW_SEARCH_DEPTHS`` (``SMALL_SHALLOW_SEARCH_DEPTHS`` up to ``SMALL_K`` classes),
    above ``SMALL_K`` with screened fresh codes at each rank of each depth's polished branches
    (``low_rank.tickets``: the shallow optima there are rare basins its Riesz codes miss; benchmarks/RESULTS.md,
    "What the 14 shallow cells ... would cost"), and serves only the depths below the deepest of them plus one (and
    L = inf): its deeper work cost two thirds of the atlas's exact search, and the ladder, which carries the
    search's Riesz codes, equals or beats it there (benchmarks/RESULTS.md, "A shallow exact search above K = 16" and
    "The shallow search at K <= 16 too", each judged on fresh cells).  From effort 2 on it serves every depth.  The
    ladder replaced cross-seeding from K + 1 classes, which cost three times the searches of K <= 16 and found less
    (benchmarks/RESULTS.md, "A low-rank ladder for the deep cells above K = 16", with the judgements on fresh
    cells).  Above ``LOW_RANK_K``: the rank-r route ``low_rank.large_search`` alone, where ``effort`` does not
    enter.  The record keeps each depth's best verified matrix (``MarginSolution.summary``), keyed by ``str(L)``.
    """
    t0 = time.process_time()
    cfg = column_config(**config)
    K, effort, seed = cfg["K"], cfg["effort"], cfg["seed"]
    deep = [L for L in cfg["depths"] if L > 1] if K >= 4 else []
    res = None
    if deep and K > LOW_RANK_K:
        res = large_search(K, deep, seed)
    elif deep:
        finite = [L for L in deep if L != math.inf]
        ladder_depths = [L for L in finite if L >= LADDER_FROM]
        if effort >= 2:
            res = search(K, deep, effort, seed)
        else:  # the exact search up to one beyond its deepest search depth, the ladder from LADDER_FROM
            shallow = SMALL_SHALLOW_SEARCH_DEPTHS if K <= SMALL_K else SHALLOW_SEARCH_DEPTHS
            served = [L for L in deep if L < max(shallow) + 1 or L not in ladder_depths]
            shot = None if K <= SMALL_K else functools.partial(tickets, seed=seed)
            res = search(K, served, effort, seed, search_depths=shallow, tickets=shot) if served else None
        if K <= SMALL_K and res is not None:
            res = _refined(res)
        if ladder_depths:
            res = _offered_below(_better_per_depth(res, ladder(K, ladder_depths, seed)), ladder_depths[0])
        if K > SMALL_K and effort >= 2 and finite:
            res = _better_per_depth(res, large_search(K, finite, seed))
    return {
        **cfg,
        "best": {str(L): res.best[L].summary() for L in deep},  # str of the config's depth: "2", "2.5"
        "starts": res.starts if res else [],
        "solves": res.solves if res else 0,
        "cpu_seconds": time.process_time() - t0,
    }


def _refined(res: SearchResult) -> SearchResult:
    """``res`` with each depth's best refined until it stalls (``solver.refine_until_stalled``), the
    refinements added to its solves."""
    done = {L: refine_until_stalled(sol) for L, sol in res.best.items()}
    return replace(res, best={L: sol for L, (sol, _) in done.items()},
                   solves=res.solves + sum(runs for _, runs in done.values()))


def _better_per_depth(res: SearchResult | None, other: SearchResult) -> SearchResult:
    """The better code per depth of ``res`` and ``other`` (by ``key``; a depth only one of them serves
    keeps its code), starts and solves added up; ``other`` alone when ``res`` is None."""
    if res is None:
        return other
    best = dict(res.best)
    for L, sol in other.best.items():
        best[L] = min(best[L], sol, key=lambda s: s.key) if L in best else sol
    return replace(res, depths=list(best), best=best, starts=res.starts + other.starts,
                   solves=res.solves + other.solves, branches=res.branches + other.branches)


def _offered_below(res: SearchResult, L) -> SearchResult:
    """``res`` with its code at depth L offered to the deepest finite depth below L: taken there unmoved
    (``solver.verify``), refined at its rank (``solver.refine_exact``, ``low_rank.LADDER_ITERATIONS``) and kept
    if lower, the refinement added to the solves.  Refined only when the unmoved code is within ``OFFERED_WITHIN``
    of the depth's best (from K = 5 to 32 the refinement lowered such codes by at most 2.2e-5).

    Where the exact search's depths meet the ladder's (L = ``low_rank.LADDER_FROM``): the optimal rank falls
    with depth, and the search's branches and tickets at its best rank can miss the basin of the ladder's
    lower-rank code one depth up (K = 18, L = 3: the search's best is a rank-5 code 7.0e-5 above the rank-4 code
    of 39 of the 40 exact searches, which the ladder's L = 4 code refined at L = 3 reaches; benchmarks/RESULTS.md,
    "The ladder's first code offered to the depth below")."""
    below = [d for d in res.best if d < L and d != math.inf]
    if not below:
        return res
    D = max(below)
    unmoved = verify(res.best[L].Z, schatten_exponent(D), res.best[L].start)
    if not unmoved.objective <= res.best[D].objective * (1 + OFFERED_WITHIN):
        return res
    best = {**res.best, D: min(res.best[D], refine_exact(unmoved, maxiter=LADDER_ITERATIONS), key=lambda s: s.key)}
    return replace(res, best=best, solves=res.solves + 1)


def _ident(cfg: dict) -> tuple:
    return cfg["K"], tuple(cfg["depths"]), cfg["effort"], cfg["seed"]


def _searched(cfg: dict, searched: Mapping | None) -> dict:
    """The search record of ``cfg``: from ``searched`` (``_ident`` -> record), else computed."""
    rec = (searched or {}).get(_ident(cfg))
    return rec if rec is not None else search_column(cfg)


def _above(cfg: dict) -> dict:
    """The config of the column with one class more, at the same depths, effort and seed."""
    return column_config(cfg["K"] + 1, cfg["depths"], cfg["effort"], cfg["seed"])


def _offered_from_above(found: dict, above: dict) -> dict:
    """``found`` (depth -> ``MarginSolution``) with each deep depth offered the code of the column above less a class.

    At each finite depth L >= ``low_rank.LADDER_FROM`` that both columns searched, the above column's best code less
    each of its K + 1 classes (``codes.less_a_class``, a feasible code of K classes) is taken to p(L) unmoved
    (``solver.verify``); the lowest, when within ``ABOVE_WITHIN`` of the depth's best, is polished with the exact
    margins along the coarse stages and refined at its rank (``solver.COARSE_SCHEDULE``, ``solver.refine_exact``,
    ``low_rank.LADDER_ITERATIONS``), as the ladder moves its pivot codes, and kept if lower.  The deep optima of
    neighbouring K are often one code less a class: at K = 31, L = 4 and 5 the K = 32 code less a class reaches the
    best of 40 exact searches, which a fresh rank-4 code reaches in about 1 of 20 draws, and at K = 19, L = 4 and
    K = 23, L = 4 and 5 it goes below it (benchmarks/RESULTS.md, "Offers from the column above")."""
    out = dict(found)
    for L, sol in found.items():
        if not (LADDER_FROM <= L < math.inf and str(L) in above["best"]):
            continue
        p = schatten_exponent(L)
        code = MarginSolution.from_summary(above["best"][str(L)])
        less = min((verify(less_a_class(code.Z, k), p, f"K + 1 less class {k} ({code.start})")
                    for k in range(code.Z.shape[0])), key=lambda s: s.key)
        if less.objective <= sol.objective * (1 + ABOVE_WITHIN):
            moved = refine_exact(polish(less.Z, p, less.start, COARSE_SCHEDULE), maxiter=LADDER_ITERATIONS)
            out[L] = min(sol, moved, key=lambda s: s.key)
    return out


def phase_column(config: dict, searched: Mapping | None = None) -> dict:
    """One column of the phase diagram, a pure function of {K, depths, effort, seed, above}.

    L counts weight matrices (N = L + 1).  Every depth of the column's search record
    (``search_column``; taken from ``searched``, a map from (K, depths, effort, seed) to records,
    when it holds it, else computed here) gets its cell (``_cell``).  With ``above`` (default False;
    ``phase_diagram`` sets it when the grid holds the column of K + 1 classes at the same depths; ignored unless
    K + 1 <= ``low_rank.LOW_RANK_K``) the deep depths are first offered that column's codes less a class
    (``_offered_from_above``).  Returns the cells, the crossovers and the search effort.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    cfg = column_config(**{k: v for k, v in config.items() if k != "above"})
    K, depths, effort, seed = cfg["K"], cfg["depths"], cfg["effort"], cfg["seed"]
    above = params.boolean("above", config.get("above", False)) and K < LOW_RANK_K
    own = _searched(cfg, searched)
    found = {L: MarginSolution.from_summary(own["best"][str(L)]) for L in depths if str(L) in own["best"]}
    if above:
        found = _offered_from_above(found, _searched(_above(cfg), searched))
    cells = [_cell(K, L, effort, seed, found.get(L), len(own["starts"])) for L in depths]
    return {
        **cfg,
        "above": above,
        "cells": [c.to_record() for c in cells],
        "crossovers": _crossovers(K, cells),
        "starts": own["starts"],
        "solves": own["solves"],
        "search_cpu_seconds": own["cpu_seconds"],
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
    }


def phase_configs(
    kmax: int, lmax: int, effort: int = 1, seed: int = 0, depths: Sequence[float] | None = None, kmin: int = 2
) -> list[dict]:
    """Column configs of the grid K in [kmin, kmax] x (L in 1..lmax, plus real ``depths``).

    Raises ``ParameterError`` for bad bounds, non-finite depths, or a grid of more than
    ``MAX_CELLS`` cells (each cell keeps an explicit K x K matrix in memory and in the store).
    """
    kmax = params.integer("kmax", kmax, minimum=2, maximum=MAX_DIMENSION)
    kmin = params.integer("kmin", kmin, minimum=2, maximum=kmax)
    lmax = params.integer("lmax", lmax, minimum=1, maximum=10_000)
    Ls = sorted(set(range(1, lmax + 1)) | {_depth(d) for d in (depths or [])})
    cells = (kmax - kmin + 1) * len(Ls)
    if cells > MAX_CELLS:
        raise params.ParameterError(f"grid must have at most {MAX_CELLS} cells (kmax, lmax and depths), got {cells}")
    return [column_config(K, Ls, effort, seed) for K in range(kmin, kmax + 1)]


def phase_diagram(mapper: Callable, configs: Sequence[dict]) -> list[dict]:
    """Column records of every config, in two cached passes through ``mapper``.

    ``mapper(kind, fn, configs, desc=...)`` is ``Store.map`` (with its executor bound) or a claim
    context's ``map``, so both passes are cached, resumable and parallel.  Pass 1 searches every
    column (``search_column``); pass 2 judges each column from its record (``phase_column``), offered the
    record of the column of K + 1 classes where the grid holds it (``above`` in its config, so a cached
    judgement made without it is not reused with it).
    Largest K first, so the longest columns start first on a pool.
    """
    cfgs = [column_config(**c) for c in configs]
    order = sorted(range(len(cfgs)), key=lambda i: -cfgs[i]["K"])
    ordered = [cfgs[i] for i in order]
    records = mapper(SEARCH_KIND, search_column, ordered, desc="phase search")
    found = {_ident(c): rec for c, rec in zip(ordered, records)}
    judged = [{**c, "above": c["K"] < LOW_RANK_K and _ident(_above(c)) in found} for c in ordered]
    columns = mapper(KIND, functools.partial(phase_column, searched=found), judged, desc="phase diagram")
    out: list = [None] * len(cfgs)
    for i, rec in zip(order, columns):
        out[i] = rec
    return out


def cells_of(columns: Sequence[dict]) -> list[PhaseCell]:
    """The cells of the column records (``phase_column``'s), as ``PhaseCell``s in (K, L) order."""
    return sorted((PhaseCell.from_record(c) for col in columns for c in col["cells"]), key=lambda c: (c.K, float(c.L)))


def boundary(cells: Sequence[PhaseCell]) -> list[dict]:
    """Per K: the smallest integer L where NC is suboptimal, what beats it there, and thresholds.

    The rows also carry the exact threshold depths (real L beyond which the closed-form code
    beats NC) of the K-gon and the cross-polytope (``implicitbias.theory.codes``).
    """
    rows = []
    for K in sorted({c.K for c in cells}):
        column = sorted((c for c in cells if c.K == K and isinstance(c.L, int)), key=lambda c: c.L)
        first = next((c for c in column if c.verdict == "NC suboptimal"), None)
        thresholds = {
            name: (float(exact.threshold_depth(name, K)) if K >= (3 if name == "cross_polytope" else 4) else math.inf)
            for name in ("cross_polytope", "kgon")
        }
        rows.append({
            "K": K,
            "L_star": first.L if first else None,
            "best_structure": first.structure if first else None,
            "best_rank": first.rank if first else None,
            "certificate": f"{first.certificate.kind}: {first.certificate.structure}" if first else None,
            "Lmax_searched": max((c.L for c in column), default=None),
            "nc_optimal_everywhere": all(c.nc_optimal for c in column),
            "threshold_cross_polytope": thresholds["cross_polytope"],
            "threshold_kgon": thresholds["kgon"],
        })
    return rows

