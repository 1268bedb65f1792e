"""Cross-seeding P(K, L): the best matrices of neighbouring cells as starts.

Problem (Spec A, section 1; L counts weight matrices, N = L + 1, p = 2/(L + 1)):

    P(K, L):  minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p  s.t.  Zbar_kk - Zbar_ck >= 1 (c != k).

The global search (``implicitbias.numerics.maxmargin.search``) runs per K.  Some optima are rare
basins of its starts (measured at K = 15, L = 5-8: about 1 rank-3 spherical code in 60 reaches
the best code, the others all fall into one code 5e-4 worse), yet they are one class away from
the optimum of K + 1 classes.  Two moves carry a good matrix to a neighbouring cell:

- (K + 1, L) -> (K, L), ``drop_class``: delete class c (row and column c) from a feasible
  (K + 1) x (K + 1) Zbar and centre the columns.  Every remaining margin Zbar_kk - Zbar_jk
  (j, k != c) is unchanged, so the result is feasible.  The deletion leaves a hole; the full
  smoothing continuation (from eps = 1e-2, ``COARSE_SCHEDULE``) lets the other classes spread
  into it, a warm polish alone does not (measured: it stays 1e-2 above the optimum).  All K + 1
  deletions are tried (one per spectrum: deletions in one orbit of the symmetry group agree);
  distinct results within ``search.WINDOW`` of the best (at most ``MAX_DELETIONS``) are polished to the
  end, and all of them within ``CLOSE`` of the best are refined at fixed rank before they are
  compared (polished values are only about 1e-4 accurate, the basins differ by 5e-4).
- (K, L +- 1) -> (K, L), ``across_depths``: the best matrix of a cell that the other steps
  improved, polished at the depths beside it (``WARM_SCHEDULE``) and refined; repeated from every
  cell that improves until none does (the optimum moves slowly with depth, so one cell's better
  basin spreads along the column).  The search already pools its branches across depths, so only
  improved cells can have something new to offer.

Every candidate is re-verified (``solver.verify``) and a cell is replaced only by a strictly
smaller objective (relative ``IMPROVES``), so cross-seeding never makes a cell worse.  Every
refinement here (``refine_until_stalled``, also applied first to each cell as the search left it)
repeats the exact fixed-rank refinement while it still improves: one SLSQP run of 200 iterations
stops up to 5e-6 above the minimum at K = 14, L = 3-4.
"""

from __future__ import annotations

import numpy as np

from implicitbias.numerics.maxmargin.codes import centre_columns, single_threaded
from implicitbias.numerics.maxmargin.margin import schatten_exponent, unit_margin
from implicitbias.numerics.maxmargin.search import CLOSE, funnel, same_minimum, within
from implicitbias.numerics.maxmargin.solver import (
    COARSE_SCHEDULE,
    WARM_SCHEDULE,
    MarginSolution,
    polish,
    refine_exact,
)
from implicitbias.theory import params

__all__ = [
    "MAX_DELETIONS",
    "IMPROVES",
    "REFINE_ROUNDS",
    "drop_class",
    "refine_until_stalled",
    "from_larger",
    "across_depths",
    "cross_seed",
]

MAX_DELETIONS = 8  # distinct deletions polished to the end per cell, at most
IMPROVES = 1e-12  # relative decrease that counts as an improvement
REFINE_ROUNDS = 5  # at most this many exact refinements in a row


def drop_class(Z: np.ndarray, c: int) -> np.ndarray:
    """Zbar without class c (row and column c deleted), columns centred: feasible if Zbar is."""
    Z = np.asarray(Z, dtype=float)
    c = params.integer("c", c, minimum=0, maximum=Z.shape[0] - 1)
    keep = np.delete(np.arange(Z.shape[0]), c)
    return centre_columns(Z[np.ix_(keep, keep)])


def _better(a: MarginSolution, b: MarginSolution) -> bool:
    """Is ``a`` strictly better than ``b`` (objective smaller by more than a relative ``IMPROVES``)?"""
    return a.objective < b.objective * (1 - IMPROVES)


def refine_until_stalled(sol: MarginSolution, rounds: int = REFINE_ROUNDS) -> tuple[MarginSolution, int]:
    """``refine_exact`` repeated (from its own output) while it improves, at most ``rounds`` times.

    Returns the solution and the number of refinements run.
    """
    for run in range(1, rounds + 1):
        nxt = refine_exact(sol)
        if not _better(nxt, sol):
            return sol, run
        sol = nxt
    return sol, rounds


def _finish(Z: np.ndarray, p: float, label: str) -> tuple[MarginSolution, int]:
    """Z polished to the end at p (warm stages) and refined exactly at fixed rank (never worse than Z
    at p), and the solves (polishes and refinements) this took."""
    sol, runs = refine_until_stalled(polish(Z, p, label, WARM_SCHEDULE))
    return sol, 1 + runs


def from_larger(best: MarginSolution, above: np.ndarray, L) -> tuple[MarginSolution, int]:
    """The cell (K, L) seeded by every class deletion of the (K + 1, L) matrix ``above``.

    Returns the better of ``best`` and the deletions' best, and the solves (polishes and
    refinements).
    """
    p = schatten_exponent(L)
    basins: list[MarginSolution] = []
    spectra: list[np.ndarray] = []
    for c in range(np.asarray(above).shape[0]):
        Z = drop_class(above, c)
        s = np.linalg.svd(unit_margin(Z), compute_uv=False)
        if any(np.allclose(s, t, rtol=1e-9, atol=1e-12 * s[0]) for t in spectra):
            continue  # a deletion equivalent to one tried (same spectrum: e.g. the same orbit of the symmetry group)
        spectra.append(s)
        sol = polish(Z, p, f"cross-seed: class {c} of K + 1 deleted", COARSE_SCHEDULE)
        if not any(same_minimum(sol, b) for b in basins):
            basins.append(sol)
    polished = [sol for sol, _ in funnel(basins, [b.key for b in basins], p, MAX_DELETIONS)]
    solves = len(spectra) + len(polished)
    # polished values are about 1e-4 accurate on flat low-rank families, the basins differ by less:
    # every candidate close to the best is refined before they are compared
    top = best
    for sol in polished:
        if within(sol.key, polished[0].key, p, CLOSE):
            sol, runs = refine_until_stalled(sol)
            solves += runs
            if _better(sol, top):
                top = sol
    return top, solves


def across_depths(best: dict, depths: list, changed: set) -> tuple[dict, int]:
    """Cells seeded by improved neighbours in ``depths``: each cell of ``changed`` offers its best
    matrix to the depths beside it, and every cell that improves does the same, until none does.
    Returns the new map and the solves (polishes and refinements)."""
    best = dict(best)
    solves = 0
    todo = sorted(changed, key=depths.index)
    while todo:
        i = depths.index(todo.pop(0))
        for j in (i - 1, i + 1):
            if 0 <= j < len(depths):
                L = depths[j]
                cand, runs = _finish(best[depths[i]].Z, schatten_exponent(L), f"cross-seed: best of L = {depths[i]}")
                solves += runs
                if _better(cand, best[L]):
                    best[L] = cand
                    if L not in todo:
                        todo.append(L)
    return best, solves


@single_threaded
def cross_seed(best: dict, above: dict) -> tuple[dict, int]:
    """Cross-seeded best solutions of one column.

    ``best`` maps each depth L (finite, >= 1) to its MarginSolution, ``above`` maps the same
    depths to the best matrices of K + 1 classes.  Steps: every cell refined until stalled, seeded
    from (K + 1, L) by ``from_larger``, then ``across_depths`` from the cells these steps
    improved.  Returns the new map and the solves (polishes and refinements).
    """
    depths = sorted(best, key=lambda L: params.real("L", L, minimum=1))
    out, solves = {}, 0
    for L in depths:
        out[L], runs = refine_until_stalled(best[L])
        out[L], more = from_larger(out[L], above[L], L)
        solves += runs + more
    out, more = across_depths(out, depths, {L for L in depths if _better(out[L], best[L])})
    return out, solves + more
