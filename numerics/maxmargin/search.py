"""Global search for P(K, L) over many depths at once: starts, local minima, and their branches.

Problem (Spec A, section 1; L counts weight matrices, N = L + 1, p = 2/(L + 1)):

    P(K, L):  minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p  s.t.  Zbar_kk - Zbar_ck >= 1 (c != k).

The optimum moves slowly with depth, and the structures that compete at one depth are, slightly
deformed, the ones that compete at the next.  So the search is organised per K, for all
requested depths together:

1. Starts (``starts``): the closed-form codes (cross-polytope, K-gon), the polytopes of the
   catalogue with K vertices (``polytopes``), and spherical codes spread by Riesz-energy
   repulsion in R^r for every rank r = 2 .. ``plan(K, effort).max_rank``
   (``spherical.repulsion_code``); from effort 2 on, also Gram matrices of random unit vectors
   (``effort - 1`` per rank, ranks up to K - 1) and NC moved along a random feasible direction.
2. Branches: every start is polished (``solver.polish``, full smoothing continuation) at every
   depth of ``SEARCH_DEPTHS``, a fixed set that does not depend on the requested grid, so the
   value of a cell does not depend on which other cells were asked for.  The distinct local
   minima found are the branches.
3. Every requested depth L: each branch, taken at the search depth nearest to L, is evaluated at
   p(L) without moving (S_p of its explicit matrix, an upper bound on its local minimum); the
   best branches within ``WINDOW`` of the best such value (at most ``MAX_POLISHED``) are
   polished at p(L) from there (the fine stages of the continuation), and the best verified
   matrix is the cell's value, after a last refinement at fixed rank with the exact objective
   (``solver.refine_exact``) of the polished branches within ``CLOSE`` of the best that moved
   (a rigid structure, e.g. the K-gon at large depth, is already exact).
   Branches are found with the coarse stages only (``COARSE_SCHEDULE``, about 1e-4 accurate):
   enough to tell basins apart, a third of the cost.

L = ``math.inf`` is the p -> 0 objective, ordered by (rank, sum log sigma) (Theorem 3.2).
Every start is seeded from ``seed``; the same (K, depths, effort, seed) gives the same result.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from implicitbias.numerics.maxmargin import polytopes
from implicitbias.numerics.maxmargin.codes import CODES, simplex_etf, single_threaded
from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.numerics.maxmargin.solver import (
    COARSE_SCHEDULE,
    MAX_DIMENSION,
    WARM_SCHEDULE,
    MarginSolution,
    feasible_directions,
    polish,
    random_gram,
    refine_exact,
    verify,
)
from implicitbias.numerics.maxmargin.spherical import code_logits, repulsion_code
from implicitbias.theory import params

__all__ = [
    "SEARCH_DEPTHS",
    "WINDOW",
    "SearchResult",
    "same_minimum",
    "distinct",
    "within",
    "funnel",
    "SearchPlan",
    "plan",
    "starts",
    "search",
    "SEARCH_KIND",
    "search_cell",
]

SEARCH_DEPTHS = (2, 3, 4, 6, 9, 12)  # where starts are polished into branches (fixed: grid-independent)
WINDOW = 0.05  # branches within 5% (unpolished) of the best are polished at each depth ...
MAX_POLISHED = 4  # ... at most this many of them
CLOSE = 1e-3  # polished branches this close to the best get the exact fixed-rank refinement
PRUNE = 0.10  # a structured start is polished at a search depth only within 10% (unpolished) of the best start there
CODES_PER_RANK = 2  # repulsion codes per rank and unit of effort (the Riesz energy has several local minima)
SMALL_K = 16  # up to here the default searches fully (the self-consistency table covers K <= 16)
LARGE_MAX_RANK = 8  # above SMALL_K the default's highest repulsion rank (12 before: ranks 9-12 started no best code
# of the calibration cells and of the fresh cells; benchmarks/RESULTS.md, "... stop at rank 8")
LARGE_SEARCH_DEPTHS = (2, 3, 5, 8, 12)  # above SMALL_K, the default's search depths
MAX_EFFORT = 100
SEARCH_KIND = "maxmargin.search-values"
RANDOM = "random:"  # label prefix of the random starts, polished at every search depth


@dataclass(frozen=True)
class SearchPlan:
    """How hard the search works for one K at one effort (``plan``); a Spec B claim's plan of runs is
    ``claims.forgetting.experiments.Plan``."""

    codes_per_rank: int  # repulsion codes per rank
    max_rank: int  # ranks 2 .. max_rank get repulsion codes
    random_per_rank: int  # random Gram starts per rank 2 .. K - 1
    max_polished: int  # branches polished at each requested depth
    search_depths: tuple = SEARCH_DEPTHS  # where starts become branches
    close: float = CLOSE  # polished branches this close to the best are refined exactly
    refine_iterations: int = 200  # SLSQP iterations of the exact refinement


def plan(K: int, effort: int = 1) -> SearchPlan:
    """The search plan of (K, effort).

    Effort 1 (the default): ``CODES_PER_RANK`` repulsion codes per rank for ranks up to
    ceil(K/2) + 1 (the cross-polytope's rank plus one), no random starts, ``MAX_POLISHED``
    branches polished per depth.  Beyond ``SMALL_K`` classes the default halves the codes per
    rank, stops at rank ``LARGE_MAX_RANK``, polishes 2 branches per depth, searches at the five
    depths of ``LARGE_SEARCH_DEPTHS`` and refines only each depth's best, with 100 SLSQP
    iterations: the grid up to K = 32 must stay near a minute (the trade-off is measured in
    benchmarks/RESULTS.md; the self-consistency table covers K <= ``SMALL_K``).
    Effort e: e times the codes, ranks up to K - 1 from e = 2 on, and e - 1 random Gram starts
    per rank (a phase column above ``SMALL_K`` classes adds the rank-r route from e = 2 on:
    ``phase.search_column``; this plan and ``search_cell`` are the exact search alone).
    """
    small = K <= SMALL_K
    top = (K + 1) // 2 + 1 if small else min((K + 1) // 2 + 1, LARGE_MAX_RANK)
    return SearchPlan(
        codes_per_rank=(CODES_PER_RANK if small else 1) * effort,
        max_rank=K - 1 if effort >= 2 else min(K - 1, top),
        random_per_rank=effort - 1,
        max_polished=MAX_POLISHED if small else 2,
        search_depths=SEARCH_DEPTHS if small else LARGE_SEARCH_DEPTHS,
        close=CLOSE if small else 0.0,
        refine_iterations=200 if small else 100,
    )


def starts(K: int, effort: int = 1, seed=0, exclude_kgon: bool = False) -> list[tuple[str, np.ndarray]]:
    """Labelled starting matrices ``(label, Zbar)`` (see the module docstring, step 1).

    ``exclude_kgon`` leaves out every deterministic start that is (or contains) the regular
    K-gon: the K-gon code itself, the cross-polytope at K = 4 (the square), the polytopes of the
    catalogue of rank 2, and the rank-2 repulsion codes (the Riesz energy on the circle is
    minimised by the regular polygon).  Random rank-2 Gram starts stay: they are not polygons.
    """
    K = params.integer("K", K, minimum=2, maximum=MAX_DIMENSION)
    effort = params.integer("effort", effort, minimum=1, maximum=MAX_EFFORT)
    if isinstance(seed, int | np.integer):
        return list(_drawn(K, effort, int(seed), bool(exclude_kgon)))
    return _draw(K, effort, seed, exclude_kgon)


@functools.lru_cache(maxsize=64)
def _drawn(K: int, effort: int, seed: int, exclude_kgon: bool) -> tuple:
    """``_draw`` for an integer seed, cached per process (the exact search and ``low_rank.ladder`` of one
    column draw the same Riesz codes: 0.3 CPU s at K = 32); the matrices are read-only."""
    out = tuple((label, np.array(Z, dtype=float)) for label, Z in _draw(K, effort, seed, exclude_kgon))
    for _, Z in out:
        Z.flags.writeable = False
    return out


def _draw(K: int, effort: int, seed, exclude_kgon: bool) -> list[tuple[str, np.ndarray]]:
    """The starts of ``starts`` (checked arguments), drawn from ``seed``."""
    how = plan(K, effort)
    rng = np.random.default_rng(seed)
    out: list[tuple[str, np.ndarray]] = []
    if K >= 3 and not (exclude_kgon and K == 4):
        out.append(("cross_polytope", CODES["cross_polytope"](K)))
    if K >= 4 and not exclude_kgon:
        out.append(("kgon", CODES["kgon"](K)))
    out += polytopes.with_vertices(K) + polytopes.less_a_vertex(K)  # all of rank >= 3: none contains the K-gon
    lowest = 3 if exclude_kgon else 2
    for rep in range(how.codes_per_rank):
        out += [(f"repulsion-r{r}#{rep}", code_logits(repulsion_code(K, r, rng)))
                for r in range(lowest, how.max_rank + 1)]
    if how.random_per_rank:
        D = feasible_directions(K, 1, seed=rng)[0]
        out.append((f"{RANDOM}nc+direction", simplex_etf(K) + 0.3 * D))
        for rep in range(how.random_per_rank):
            out += [(f"{RANDOM}gram-r{r}#{rep}", random_gram(K, r, rng)) for r in range(2, K)]
    return out


@dataclass
class SearchResult:
    """Best verified solution per requested depth, the branches behind them, and the effort."""

    K: int
    depths: list
    best: dict  # depth -> MarginSolution
    branches: list[MarginSolution] = field(default_factory=list)
    starts: list[str] = field(default_factory=list)
    solves: int = 0
    effort: int = 1
    seed: int = 0


def same_minimum(a: MarginSolution, b: MarginSolution) -> bool:
    """One local minimum found twice (up to relabelling the classes): equal rank and spectrum."""
    sa, sb = np.asarray(a.singular_values), np.asarray(b.singular_values)
    return a.rank == b.rank and np.allclose(sa, sb, rtol=1e-6, atol=1e-7 * sa[0])


def distinct(sols: list[MarginSolution]) -> list[MarginSolution]:
    """Drop repeats (a rigid structure is found at every search depth)."""
    out: list[MarginSolution] = []
    for s in sols:
        if not any(same_minimum(s, o) for o in out):
            out.append(s)
    return out


@single_threaded
def search(K: int, depths: Sequence, effort: int = 1, seed=0, exclude_kgon: bool = False,
           search_depths: Sequence | None = None, tickets: Callable | None = None) -> SearchResult:
    """Best verified solution of P(K, L) for every L in ``depths`` (module docstring, steps 1-3).

    ``depths``: reals >= 1 or ``math.inf`` (L weight matrices, p = 2/(L + 1); inf: p -> 0).
    ``search_depths``: where the starts become branches, instead of the plan's (``plan``).
    ``tickets``: ``tickets(K, rank, L) -> (code or None, descents)``, called at every finite depth with each
    rank of its polished branches (the best one's first); each code is polished there beside the branches before
    the exact refinement (``phase.search_column`` passes ``low_rank.tickets`` above ``SMALL_K`` classes).
    """
    K = params.integer("K", K, minimum=2, maximum=MAX_DIMENSION)
    depths = [math.inf if d == math.inf else params.real("L", d, minimum=1) for d in depths]
    labelled = starts(K, effort, seed, exclude_kgon)
    how = plan(K, effort)
    chosen = how.search_depths if search_depths is None else [params.real("search depth", d, minimum=1) for d in search_depths]
    search_depths = sorted(set(chosen) | ({math.inf} if math.inf in depths else set()))
    branches: dict = {d: [] for d in search_depths}
    solves = 0
    for d in search_depths:
        p = schatten_exponent(d)
        keys = [verify(Z, p).key for _, Z in labelled]
        top = min(keys)
        for (label, Z), key in zip(labelled, keys):
            if not (label.startswith(RANDOM) or within(key, top, p, PRUNE)):
                continue
            sol = polish(Z, p, label, COARSE_SCHEDULE)
            solves += 1
            if not any(same_minimum(sol, b) for b in branches[d]):
                branches[d].append(sol)
    pool = distinct([b for d in search_depths for b in branches[d]])
    best = {}
    for L in depths:
        p = schatten_exponent(L)
        polished = funnel(pool, [verify(b.Z, p).key for b in pool], p, how.max_polished)
        if tickets is not None and p > 0:
            for rank in dict.fromkeys(sol.rank for sol, _ in polished):  # each rank polished, the best's first
                ticket, descents = tickets(K, rank, L)
                solves += descents
                if ticket is not None:
                    polished = sorted([*polished, (polish(ticket.Z, p, ticket.start, WARM_SCHEDULE), ticket.key)],
                                      key=lambda pair: pair[0].key)
        refined = []
        for sol, unmoved in polished:
            if not within(sol.key, polished[0][0].key, p, how.close) or any(same_minimum(sol, r) for r in refined):
                continue
            rigid = sol.key[-1] >= unmoved[-1] * (1 - 1e-12)  # polishing found nothing below the branch
            refined.append(sol if rigid else refine_exact(sol, maxiter=how.refine_iterations))
        solves += len(polished) + len(refined)
        best[L] = min(refined, key=lambda s: s.key)
    return SearchResult(K, list(depths), best, pool, [label for label, _ in labelled], solves, effort,
                        seed if isinstance(seed, int) else 0)


def funnel(pool: Sequence[MarginSolution], keys: Sequence[tuple], p: float, limit: int) -> list[tuple]:
    """The candidates of ``pool`` worth finishing at p, finished: those whose ``keys`` (their values
    at p, unmoved) lie within ``WINDOW`` of the best, at most ``limit`` of them (best first, ties
    in pool order), each polished at p with the fine stages (``WARM_SCHEDULE``).

    Returns ``(polished, key)`` pairs sorted by the polished key (the search refines the ones close
    to the best).
    """
    keyed = sorted((key, i) for i, key in enumerate(keys))
    chosen = [i for key, i in keyed if within(key, keyed[0][0], p, WINDOW)][:limit]
    return sorted(((polish(pool[i].Z, p, pool[i].start, WARM_SCHEDULE), keys[i]) for i in chosen),
                  key=lambda pair: pair[0].key)


def within(key: tuple, top: tuple, p: float, window: float) -> bool:
    """Is a solution's key within a relative ``window`` of the best key (same rank at p = 0)?"""
    if p == 0:
        return key[0] == top[0] and key[1] <= top[1] + (abs(top[1]) + 1) * window
    return key[0] <= top[0] * (1 + window)


def search_cell(config: dict) -> dict:
    """Store cell: the best values of ``search`` for {K, depths, effort, seed} (no matrices).

    Used by the self-consistency benchmark (default effort against higher efforts and other
    seeds); a pure function of ``config``, depending only on the search code.
    """
    import time

    t0 = time.process_time()
    depths = [math.inf if d == "inf" else d for d in config["depths"]]
    res = search(config["K"], depths, config.get("effort", 1), config.get("seed", 0))
    return {
        "K": res.K,
        "values": {str(L): res.best[L].objective for L in depths},
        "ranks": {str(L): res.best[L].rank for L in depths},
        "starts": len(res.starts),
        "solves": res.solves,
        "cpu_seconds": time.process_time() - t0,
    }
