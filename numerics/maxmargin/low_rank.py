"""The large-K route to P(K, L): rank-r factorised codes, a smooth soft-min margin, exact verification.

Problem (Spec A, section 1; L counts weight matrices, N = L + 1 factors, p = 2/(L + 1)):

    P(K, L):  minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p  s.t.  Zbar_kk - Zbar_ck >= 1 (c != k).

The exact search (``search``: K^2 gap variables per polish, SLSQP at fixed rank, every start at
every search depth) grows to many minutes beyond K = 32.  Here the variables are a rank-r
factorisation Zbar = A B^T, A, B in R^{K x r}: a width-r bottleneck, whose max-margin codes are the
rank-r softmax codes of Jiang et al. (2023, "Generalized neural collapse for a large number of
classes"), and by the representation cost (Spec A, section 1)

    min { 1/2 sum_l ||F_l||_F^2 : F_N ... F_1 = Z } = (N/2) sum_i sigma_i(Z)^(2/N)

a depth-L network of width r pays exactly (N/2) S_p(A B^T) for the code.

- Objective.  S_p is homogeneous of degree p and the margins of degree 1, so
  P(K, L) = min over separating Z of S_p(Z / m(Z)), m(Z) the smallest gap g_ck = Z_kk - Z_ck.  The
  smallest gap is replaced by the generalised mean M_q(Z) = (sum_{c != k} g_ck^(-q))^(-1/q), smooth
  where all gaps are positive, homogeneous of degree 1, with m n^(-1/q) <= M_q <= m
  (n = K (K - 1)), and sigma^p by (sigma^2 + eps)^(p/2) >= sigma^p:

      F_{q,eps}(A, B) = sum_i ((sigma_i(A B^T) / M_q)^2 + eps)^(p/2)  >=  S_p(Z / m(Z)),

  so every iterate's value bounds its verified value from above, and M_q is a barrier: it
  vanishes where a gap does.  sigma_i(A B^T) = sigma_i(R_A R_B^T) with thin QR factorisations
  A = Q_A R_A, B = Q_B R_B: one r x r SVD per evaluation, plus K^2 r for the gaps.
- Minimiser.  scipy's L-BFGS-B (no bounds) over (A, B), one run per start, gradient in closed
  form (``soft_value``; checked against torch autograd in the tests), along the continuation ``SCHEDULE`` of (q, eps), each stage warm started
  (q = 16 spreads the code, q = 4096 pins the active margins to about 1e-3 / p relative).
  Random starts take the whole schedule; structured starts and codes carried between depths
  start at q = 64 (``SHARP``): q = 16 moves an already spread code out of its basin (measured at
  K = 32, L = 3-5: the same Riesz code ends 1.0e-3, 5.6e-5, 3.7e-5 above the optimum from
  q = 16, on it from q = 64).
- Starts (``large_starts``, ``random_starts``): the K-gon, the cross-polytope, the catalogue's
  polytopes with K vertices, Riesz-energy spherical codes at the ranks ``RANKS``
  (``spherical.repulsion_code``), the best codes of the neighbouring depths (``large_search``: the
  optimum's rank falls with depth, so at each depth only starts of rank at most one above the
  previous depth's best), and at each depth fresh random and Riesz codes at the best's rank
  and one either side (rare basins: at K = 16, L = 4 the optimum, which the exact search alone
  misses, is reached by 3 of 12 random rank-4 codes and by no
  converged Riesz code; ``random_starts``).  NC, a KKT point at every depth, is the cell's
  fallback and is not descended.
- Exact finish (``finish``).  Every descended code is re-verified (``solver.verify``: rescaled
  to unit margin, S_p and rank from its SVD); the best ``FINISHED`` within ``WINDOW`` are
  polished with the exact margins (``solver.polish``, fine stages: L-BFGS-B bounds on the gaps)
  and, for K <= ``LOW_RANK_K`` (where the route is compared with the exact search), refined at
  fixed rank with the exact objective (``solver.refine_exact``, too slow beyond: ``finish``); the
  best verified matrix is the depth's candidate.  Above K = 32 a candidate is an exactly verified
  code (an upper bound on the optimum, like every cell) polished with exact margins, not refined.

Measured (benchmarks/bench_large_k.py, RESULTS.md "A hundred classes, second pass"): against the
exact default column at K = 8, 12, 16, 24, 32 and L = 2..6 the route is equal (1e-6, same rank) in
23 of 25 cells and below it in the other 2 (K = 32 at L = 2 by 1.0e-5 and at L = 6 by 3.0e-4, same
rank: basins the exact default's reduced search above K = 16 misses), never above; it reaches
K = 16 at L = 4, which the exact search alone misses, from a random rank-4 code (measured before
the ladder, ``ladder``, joined the exact column).  The columns K = 50 and 100 at L = 1..6 take 45
and 170 CPU s (idle 2-core Xeon; the closed-form
gradient of ``soft_value`` made the descents 1.9x and 1.6x faster there, 3.2-4.1x at K = 8-24).  Against the
best of 40 exact searches (efforts 1-8 x 5 seeds; the ledger ``benchmarks/phase_consistency.jsonl``) at
K = 17-32, L = 2..12, one run of this route (16-65 CPU s a column) is equal in 98 of 176 cells, below in 73 (by
up to 3.5e-3: rank-3 and rank-4 codes the exact searches miss) and above in 5 (K = 17, 28, 32, L = 2; K = 31, L = 4, 5).

``phase.search_column`` sends K above ``LOW_RANK_K`` here; above ``search.SMALL_K`` its exact search at the
shallow depths polishes screened fresh codes of this route beside its branches (``tickets``); up to ``LOW_RANK_K`` it runs the ladder
(``ladder``: random rank-4 and rank-3 codes and converged Riesz rank-3 and rank-4 codes at two pivot
depths, each depth L >= 4 finished exactly) beside the exact search.  Naming at large K
(``naming.identify(Z, group=False)``): the exact name when the matrix is a known configuration relabelled
(``symmetry.isomorphic``, milliseconds), otherwise ``rank-r code, WL classes = c``, c the number of
colour-refinement classes of its entries (one when the code is vertex-transitive); the full
symmetry group (``symmetry.symmetry_group``) takes minutes at K = 100 for NC and the
cross-polytope (their groups have orders 100! and 2^50 50!), so its order is not computed (0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.linalg import lapack
from scipy.optimize import minimize

from implicitbias.numerics.maxmargin import polytopes
from implicitbias.numerics.maxmargin.codes import CODES, single_threaded
from implicitbias.numerics.maxmargin.margin import min_margin, schatten_exponent, unit_margin
from implicitbias.numerics.maxmargin.search import SearchResult, distinct, same_minimum, starts
from implicitbias.numerics.maxmargin.solver import COARSE_SCHEDULE, WARM_SCHEDULE, MarginSolution, polish, refine_exact, verify
from implicitbias.numerics.maxmargin.spherical import RIESZ_EXPONENTS, code_logits, repulsion_code
from implicitbias.numerics.metrics.rank import numerical_rank, svd
from implicitbias.theory import params

__all__ = [
    "LOW_RANK_K",
    "RANKS",
    "SCHEDULE",
    "SHARP",
    "RANDOM_PER_RANK",
    "CODES_AT_BEST",
    "CODES_PER_RANK",
    "WINDOW",
    "FINISHED",
    "soft_value",
    "descend",
    "large_starts",
    "random_code",
    "riesz_code",
    "random_starts",
    "finish",
    "large_search",
    "LADDER_FROM",
    "LADDER",
    "LADDER_CODES",
    "LADDER_ITERATIONS",
    "PIVOT_ITERATIONS",
    "ladder",
    "TICKETS",
    "TICKET_SCREEN",
    "tickets",
]

LOW_RANK_K = 32  # phase columns with more classes take this route (the exact search's grid stops here)
RANKS = (*range(3, 13), 16, 20, 24, 32)  # ranks of the spherical-code starts (those below K - 1)
SCHEDULE = ((16.0, 1e-2), (64.0, 1e-3), (256.0, 1e-5), (1024.0, 1e-7), (4096.0, 1e-9))  # (q, eps) stages
SHARP = SCHEDULE[1:]  # from q = 64: a spread code stays near its own basin (structured and carried starts)
RANDOM_PER_RANK = 3  # random codes per rank, at the ranks next to each depth's best ...
CODES_AT_BEST = 4  # ... and fresh Riesz codes at the best's rank ...
CODES_PER_RANK = 1  # ... and beside it
RANDOM = "random-"  # label prefix of the random codes (descended along the whole SCHEDULE)
SPREAD_ITERATIONS = 3  # Riesz iterations that separate a random code's near-collisions, keeping it random
WINDOW = 0.02  # descended codes within 2% of a depth's best are finished exactly ...
FINISHED = 3  # ... at most this many
CARRIED = 2  # best codes of each depth that start the next depths
MAXITER = 200  # L-BFGS-B iterations per stage
PERTURBATION = 1e-3  # size of the random move of a start (unit margin)
LADDER_FROM = 4  # the ladder serves the depths L >= 4, where the optimal ranks are 3 to 5 (K = 17-32)
LADDER = ((4, (4,), (3, 4), "polish"), (8, (3,), (3, 4), "descend"))  # its pivot depths, the ranks of their random
# codes and of their Riesz codes, and how the Riesz codes move there (the other way changed no calibration cell; the
# other random ranks won no cell but 1 of 176 above K = 16: benchmarks/RESULTS.md, "Faster atlas, values kept") ...
LADDER_CODES = 4  # ... and this many fresh random codes per random rank (3 left K = 26, L = 4, 5 above the best of 40:
# benchmarks/RESULTS.md, "A fourth random code per ladder pivot")
LADDER_ITERATIONS = 100  # SLSQP iterations of the ladder's exact finish at each depth (40 stopped 4e-5 high at K = 32, L = 4)
PIVOT_ITERATIONS = 15  # SLSQP iterations that finish a descended pivot's best codes before the pool is ranked (the
# soft values rank them only to about 1e-3: benchmarks/RESULTS.md, "The ladder's descended pivot finished exactly")
TICKETS = (4, 3)  # random and Riesz codes at a rank of a shallow depth's polished branches (``tickets``) ...
TICKET_SCREEN = SHARP[0]  # ... ranked once each is descended through this (q, eps) stage; the best one to the end


def soft_value(A: np.ndarray, B: np.ndarray, p: float, q: float, eps: float) -> tuple[float, np.ndarray, np.ndarray]:
    """F_{q,eps}(A, B) of the module docstring and its gradients in A and B; +inf (zero gradients)
    if a gap is <= 0.

    Closed form (Z = A B^T; thin QR A = Q_A R_A, B = Q_B R_B and R_A R_B^T = U_s S V_s^T give the
    singular triplets U = Q_A U_s, sigma, V = Q_B V_s of Z; x_i = sigma_i / M_q):

        dF/dsigma_i = p x_i (x_i^2 + eps)^(p/2 - 1) / M_q =: a_i,
        dF/dlog M_q = -p sum_i x_i^2 (x_i^2 + eps)^(p/2 - 1) =: b,
        dlog M_q/dg_ck = w_ck / g_ck, w the softmax of -q log g (the weights of the generalised mean),
        dF/dZ = U diag(a) V^T + b D,  D = diag(column sums of W) - W,  W_ck = w_ck / g_ck (c != k),
        dF/dA = (dF/dZ) B,  dF/dB = (dF/dZ)^T A,

    where U diag(a) V^T B = Q_A U_s diag(a) V_s^T R_B (no K x K product).  Written by hand because
    torch's autograd of the same expression spends 0.6 ms a call on K x r tensors at K = 20 (its
    backward alone 0.25 ms), against the few tens of microseconds of these dense numpy products:
    the descents make tens of thousands of calls per column.  Checked against torch autograd and
    finite differences in tests/test_low_rank.py.
    """
    Z = A @ B.T
    G = np.diagonal(Z)[None, :] - Z  # G[c, k] = g_ck = Z_kk - Z_ck
    np.fill_diagonal(G, np.inf)  # no gap on the diagonal: weight exp(-q log inf) = 0 below, no boolean masks
    if not G.min() > 0:
        return math.inf, np.zeros_like(A), np.zeros_like(B)
    logs = -q * np.log(G)
    # the shifted exponentials give log M_q and the softmax weights in one pass; scipy.special.logsumexp
    # and softmax would take two, at about 60 us a call against 4 us here (measured on 600 gaps)
    top = logs.max()
    weights = np.exp(logs - top)
    total = weights.sum()
    log_mean = -(top + math.log(total)) / q  # log M_q = -logsumexp(-q log g) / q
    QA, RA = _thin_qr(A)
    QB, RB = _thin_qr(B)
    Us, s, Vst = svd(RA @ RB.T)
    mean = math.exp(log_mean)
    x = s / mean
    power = (x * x + eps) ** (p / 2 - 1)
    value = float(np.sum((x * x + eps) * power))
    a = p * x * power / mean
    b = -p * float(np.sum(x * x * power))
    W = weights / (total * G)  # W_ck = w_ck / g_ck, zero on the diagonal; D = diag(column sums of W) - W
    column = W.sum(axis=0)
    grad_A = QA @ ((Us * a) @ (Vst @ RB)) + b * (column[:, None] * B - W @ B)
    grad_B = QB @ ((Vst.T * a) @ (Us.T @ RA)) + b * (column[:, None] * A - W.T @ A)
    return value, grad_A, grad_B


_GEQRF, _ORGQR = lapack.dgeqrf, lapack.dorgqr


def _thin_qr(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reduced QR factorisation A = Q R of a K x r matrix, k = min(K, r): Q (K x k) with orthonormal
    columns, R (k x r) upper triangular.  LAPACK's geqrf and orgqr through scipy's raw wrappers, as
    ``numpy.linalg.qr`` does, without its Python per call (about 16 of its 18 us at 24 x 4)."""
    k = min(A.shape)
    factored, tau, _, _ = _GEQRF(A)
    Q, _, _ = _ORGQR(factored[:, :k], tau)
    return Q, np.triu(factored[:k])


def _factors(Z: np.ndarray, r: int) -> np.ndarray:
    """Balanced rank-r factors of Z, A = U_r S_r^(1/2), B = V_r S_r^(1/2), as one vector."""
    U, s, Vt = svd(Z)
    root = np.sqrt(s[:r])
    return np.concatenate([(U[:, :r] * root).ravel(), (Vt[:r].T * root).ravel()])


@single_threaded
def descend(Z0: np.ndarray, p: float, r: int | None = None, start: str = "given", seed: int = 0,
            schedule=SCHEDULE) -> MarginSolution:
    """Minimise F_{q,eps} over rank-r factors from the separating Z0 (rank r: Z0's), re-verified.

    The rank-r truncation of Z0 must separate the classes (its numerical rank always does).  The
    factors are moved (Gaussian, from ``seed``) so that Zbar moves by about ``PERTURBATION`` first: a symmetric code
    (the cross-polytope, the K-gon) is a stationary point of F by symmetry, where L-BFGS would stop.
    Returns the verified code (``solver.verify``) of the last stage, or of Z0's truncation if
    that is better (descending never returns a worse matrix than its start).
    """
    Z0 = unit_margin(Z0)
    K = Z0.shape[0]
    r = numerical_rank(np.linalg.svd(Z0, compute_uv=False)) if r is None else r
    x = _factors(Z0, r)
    first = verify(x[: K * r].reshape(K, r) @ x[K * r:].reshape(K, r).T, p, start)
    step = PERTURBATION / (2 * math.sqrt(r) * np.abs(x).max())  # moves Zbar's entries by about PERTURBATION
    x = x + step * np.random.default_rng(seed).standard_normal(x.size)

    def f(x, q, eps):
        value, grad_A, grad_B = soft_value(x[: K * r].reshape(K, r), x[K * r:].reshape(K, r), p, q, eps)
        return value, np.concatenate([grad_A.ravel(), grad_B.ravel()])

    for q, eps in schedule:
        x = minimize(f, x, args=(q, eps), jac=True, method="L-BFGS-B", options={"maxiter": MAXITER, "ftol": 1e-13, "gtol": 1e-10}).x
    Z = x[: K * r].reshape(K, r) @ x[K * r:].reshape(K, r).T
    if not min_margin(Z) > 0:  # a stage ended on a failed line search beyond the barrier
        return first
    return min(first, verify(Z, p, start), key=lambda s: s.key)


def large_starts(K: int, seed: int = 0) -> list[tuple[str, np.ndarray]]:
    """Labelled starts ``(label, Zbar)`` of the large-K route (module docstring)."""
    K = params.integer("K", K, minimum=4, maximum=4096)
    rng = np.random.default_rng(seed)
    out = [("kgon", CODES["kgon"](K)), ("cross_polytope", CODES["cross_polytope"](K))]
    out += polytopes.with_vertices(K)
    out += [(f"repulsion-r{r}", code_logits(repulsion_code(K, r, rng))) for r in RANKS if r < K - 1]
    return out


def finish(candidates: Sequence[MarginSolution], p: float) -> MarginSolution:
    """The best of ``candidates`` after the exact finish (module docstring): the best ``FINISHED``
    within ``WINDOW`` polished with the exact margins (fine stages) and, for K <= ``LOW_RANK_K``,
    refined at fixed rank (measured at K = 50: 6 to 12 CPU s per refinement at r = 5..12, where the
    polish takes 0.3 s; SLSQP's dense steps grow with the cube of its 2 K r - r^2 variables)."""
    ranked, chosen = _within_window(candidates)
    polished = [polish(s.Z, p, s.start, WARM_SCHEDULE) for s in chosen]
    finished = [refine_exact(s) if s.Z.shape[0] <= LOW_RANK_K else s for s in polished]
    return min([*finished, ranked[0]], key=lambda s: s.key)


def _within_window(candidates: Sequence[MarginSolution]) -> tuple[list[MarginSolution], list[MarginSolution]]:
    """``candidates`` ranked by ``key``, and the ones to finish exactly: the first ``FINISHED`` within ``WINDOW``
    of the best (a prefix of the ranking)."""
    ranked = sorted(candidates, key=lambda s: s.key)
    return ranked, [s for s in ranked if s.objective <= ranked[0].objective * (1 + WINDOW)][:FINISHED]


def random_code(K: int, r: int, seed: int, salt: int, index: int) -> tuple[str, np.ndarray]:
    """A labelled random rank-r code ``(random-r<r>#<index>, Zbar)``: K uniform points on S^(r-1) moved by
    ``SPREAD_ITERATIONS`` iterations of the Riesz energy (s = 8, ``spherical.repulsion_code``), drawn from
    (seed, salt, r, index).  The iterations separate near-collisions (a random code with two almost equal
    rows has a tiny margin, where the descent stalls) but keep the code random."""
    V = repulsion_code(K, r, [seed, salt, r, index], exponents=RIESZ_EXPONENTS[:1], maxiter=SPREAD_ITERATIONS)
    return f"{RANDOM}r{r}#{index}", code_logits(V)


def riesz_code(K: int, r: int, seed: int, salt: int, index: int, offset: int) -> tuple[str, np.ndarray]:
    """A labelled converged Riesz-energy code ``(repulsion-r<r>.<salt>#<index>, Zbar)`` of rank r
    (``spherical.repulsion_code``), drawn from (seed, salt, r, offset + index): ``offset`` keeps its draws
    apart from those of the random codes (``random_code``) of the same salt, which take the indices below it."""
    return f"repulsion-r{r}.{salt}#{index}", code_logits(repulsion_code(K, r, [seed, salt, r, offset + index]))


def random_starts(K: int, rank: int, seed: int = 0, salt: int = 0) -> list[tuple[str, np.ndarray]]:
    """Labelled fresh codes ``(label, Zbar)`` at ``rank`` and one either side (3 <= r < K - 1):
    ``RANDOM_PER_RANK`` random ones (``random_code``) at each, and Riesz-energy codes
    (``repulsion-r<r>.<salt>#<i>``), ``CODES_AT_BEST`` at ``rank`` and ``CODES_PER_RANK`` beside it.

    The converged codes are new draws of ``spherical.repulsion_code``.  Each kind reaches basins the
    other misses (measured: at K = 16, L = 4 the optimum from 3 of 12 random rank-4 codes, 0 of 12
    converged ones; at K = 32, L = 4-5 from 6 of 12 converged codes, 0 of 6 random ones descended from
    q = 64).  ``salt`` separates the draws of different depths.
    """
    out = []
    for r in (rank - 1, rank, rank + 1):
        if not 3 <= r < K - 1:
            continue
        out += [random_code(K, r, seed, salt, i) for i in range(RANDOM_PER_RANK)]
        out += [riesz_code(K, r, seed, salt, i, RANDOM_PER_RANK) for i in range(CODES_AT_BEST if r == rank else CODES_PER_RANK)]
    return out


def _leaders(first: MarginSolution, pool: Sequence[MarginSolution]) -> list[MarginSolution]:
    """``first`` and the best distinct codes of ``pool``, ``CARRIED`` in all."""
    out: list[MarginSolution] = []
    for s in [first, *sorted(pool, key=lambda s: s.key)]:
        if len(out) < CARRIED and not any(same_minimum(s, c) for c in out):
            out.append(s)
    return out


def large_search(K: int, depths: Sequence, seed: int = 0) -> SearchResult:
    """Best verified candidate of P(K, L) for every finite L > 1 in ``depths`` (module docstring).

    Two sweeps over the depths.  Up (increasing L): at each depth the structured starts of rank at
    most one above the previous depth's best (all of them at the first depth) and the ``CARRIED``
    best distinct codes of the previous depth are descended from q = 64 (``SHARP``), then the
    fresh codes of ``random_starts`` at each rank next to the best so far (its rank and one either
    side, 3 <= r < K - 1: random ones along the full ``SCHEDULE``, Riesz codes from q = 64), and
    the best are finished exactly.  Down: the ``CARRIED`` codes of each depth are offered to the depth below
    (descended from q = 64 and finished there), replacing its best when smaller.  Returns a
    ``search.SearchResult`` (``best``: depth -> ``MarginSolution``; ``branches``: the distinct
    best codes; ``solves``: descents and finishes).
    """
    K = params.integer("K", K, minimum=4, maximum=4096)
    depths = sorted({params.real("L", d, minimum=1, open_minimum=True, maximum=10_000) for d in depths})
    labelled = [(label, Z, numerical_rank(np.linalg.svd(Z, compute_uv=False))) for label, Z in large_starts(K, seed)]
    best: dict = {}
    carried: dict = {}
    previous: list[MarginSolution] = []
    solves = 0
    for i, L in enumerate(depths):
        p = schatten_exponent(L)
        top = previous[0].rank + 1 if previous else K
        pool = [descend(Z, p, r, label, seed, SHARP) for label, Z, r in labelled if r <= top]
        pool += [descend(s.Z, p, start=s.start, seed=seed, schedule=SHARP) for s in previous]
        extra = random_starts(K, min(pool, key=lambda s: s.key).rank, seed, i)
        pool += [descend(Z, p, start=label, seed=seed, schedule=SCHEDULE if label.startswith(RANDOM) else SHARP)
                 for label, Z in extra]
        solves += len(pool) + FINISHED
        best[L] = finish(pool, p)
        carried[L] = previous = _leaders(best[L], pool)
    for deeper, L in zip(depths[::-1], depths[-2::-1]):
        p = schatten_exponent(L)
        offered = finish([descend(s.Z, p, start=s.start, seed=seed, schedule=SHARP) for s in carried[deeper]], p)
        solves += len(carried[deeper]) + FINISHED
        if offered.objective < best[L].objective * (1 - 1e-9):
            best[L] = offered
            carried[L] = _leaders(offered, carried[L])
    return SearchResult(K, depths, best, distinct([best[L] for L in depths]), [label for label, _, _ in labelled],
                        solves, 1, seed)


@single_threaded
def ladder(K: int, depths: Sequence, seed: int = 0) -> SearchResult:
    """The deep cells (finite L >= ``LADDER_FROM``) of a column by a few low-rank codes, finished exactly.

    At each pivot depth of ``LADDER`` ``LADDER_CODES`` random codes (``random_code``, salt 10 x pivot)
    of each of the pivot's random ranks are descended along the full ``SCHEDULE``; the ``CARRIED`` best
    distinct codes of each pivot, the regular K-gon (the rank-2 optimum at large depth, Theorem 3.2)
    and the exact search's converged Riesz codes of the pivot's Riesz ranks (``search.starts``,
    ``repulsion-r<r>#0``), at L = 4 polished with the exact margins and the coarse stages
    (``solver.COARSE_SCHEDULE``, as the exact search makes its branches), at L = 8 descended from
    q = 64 (``SHARP``), form the pool: the random codes miss basins those reach (K = 28, L = 6-11;
    K = 32, L = 4-5: 2e-4 to 5e-4 above the best of 40 without them).  At the pivot whose codes are
    all descended (L = 8), the best within ``WINDOW`` (at most ``FINISHED``) are first refined there
    (``solver.refine_exact``, ``PIVOT_ITERATIONS``): the soft objective ranks codes only to about 1e-3
    (K = 31: the Riesz rank-3 code descends to 1.6e-3 above the best random one and refines to 8e-5
    below it, a basin 38 of the 40 exact searches miss).  Each depth L takes the pool's
    best code at p(L), unmoved (``solver.verify``), and refines it at its rank with the exact
    objective (``solver.refine_exact``, ``LADDER_ITERATIONS`` SLSQP iterations).  Cheap because the
    deep optima barely change shape with depth: a rank-3 optimum of L = 6 taken unmoved to L = 7
    (K = 26) is 2.4e-7 above the optimum there, and 40 iterations from it reach 1e-9.  A cell's value
    does not depend on the other depths asked for.

    ``phase.search_column`` runs it beside the exact search for K <= ``LOW_RANK_K`` and keeps the
    better code per depth; at effort 1 it serves the depths beyond the exact search's alone (measured in
    benchmarks/RESULTS.md, "A low-rank ladder for the deep cells above K = 16" and "A shallow exact
    search above K = 16").  Returns a ``search.SearchResult`` over the depths it serves; its solves are
    the descents, the polishes and the exact finishes.
    """
    K = params.integer("K", K, minimum=4, maximum=4096)
    depths = sorted({params.real("L", d, minimum=LADDER_FROM, maximum=10_000) for d in depths})
    pool = [verify(CODES["kgon"](K), 1.0, "kgon")]
    labels = ["kgon"]
    converged = dict(starts(K, 1, seed))  # the exact search's default starts: its Riesz codes
    descents = 0
    for pivot, random_ranks, riesz_ranks, way in LADDER:
        p = schatten_exponent(pivot)
        fresh = [(r, *random_code(K, r, seed, 10 * pivot, i)) for r in random_ranks if 3 <= r < K - 1
                 for i in range(LADDER_CODES)]
        fresh = [(r, f"L = {pivot}: {label}", Z) for r, label, Z in fresh]
        riesz = [(r, f"L = {pivot}: repulsion-r{r}#0", converged[f"repulsion-r{r}#0"])
                 for r in riesz_ranks if f"repulsion-r{r}#0" in converged]
        labels += [label for _, label, _ in fresh + riesz]
        descended = [descend(Z, p, r, label, seed) for r, label, Z in fresh]
        here = _leaders(min(descended, key=lambda s: s.key), descended) if descended else []  # none below 5 classes
        here += [polish(Z, p, label, COARSE_SCHEDULE) if way == "polish" else descend(Z, p, r, label, seed, SHARP)
                 for r, label, Z in riesz]
        if way == "descend" and here:
            ranked, chosen = _within_window(here)
            here = [refine_exact(s, maxiter=PIVOT_ITERATIONS) for s in chosen] + ranked[len(chosen):]
        pool += here
        descents += len(descended) + len(riesz)
    best = {}
    for L in depths:
        p = schatten_exponent(L)
        start = min((verify(s.Z, p, s.start) for s in pool), key=lambda s: s.key)
        best[L] = refine_exact(start, maxiter=LADDER_ITERATIONS)
    return SearchResult(K, depths, best, distinct([best[L] for L in depths]), labels, descents + len(depths), 1, seed)


def tickets(K: int, rank: int, L, seed: int = 0) -> tuple[MarginSolution | None, int]:
    """The best of fresh codes of rank ``rank`` at depth L, screened: ``(code, descents)``; ``(None, 0)``
    unless 3 <= rank < K - 1.

    ``TICKETS`` = (random, Riesz) codes of that rank, drawn from (seed, salt 100 + round(10 L)): random
    ones (``random_code``) along ``SCHEDULE``, Riesz-energy ones (``riesz_code``) from q = 64 (``SHARP``).
    Each is descended through its schedule up to the stage ``TICKET_SCREEN`` (q = 64, the first of ``SHARP``: two
    stages for a random code, one for a Riesz code), so that all are ranked at the same sharpness; only the best of
    them (``solver.verify``'s key) is descended through the rest.  Ranked after one stage each (a random code at
    q = 16 against a Riesz code at q = 64), the tickets at K = 19 and 23, L = 3 took a Riesz code out of the winning
    basin over a random one in it (benchmarks/RESULTS.md, "Offers from the column above").
    The exact search above ``search.SMALL_K`` classes polishes it beside its own branches at each shallow depth,
    for each rank of its polished branches (``search.search``'s ``tickets``): the optimum there is often a rare
    basin of the optimal rank that the search's one Riesz code per rank misses (measured:
    ``benchmarks/shallow_routes.py``, RESULTS.md "What the 14 shallow cells above the best of 40 would cost").
    L counts weight matrices (p = 2/(L + 1)), L > 1 and finite.
    """
    K = params.integer("K", K, minimum=4, maximum=4096)
    rank = params.integer("rank", rank, minimum=1, maximum=K)
    L = params.real("L", L, minimum=1, open_minimum=True, maximum=10_000)
    if not 3 <= rank < K - 1:
        return None, 0
    p, salt = schatten_exponent(L), 100 + round(10 * L)
    random_codes, riesz_codes = TICKETS
    drawn = [(*random_code(K, rank, seed, salt, i), SCHEDULE) for i in range(random_codes)]
    drawn += [(*riesz_code(K, rank, seed, salt, i, random_codes), SHARP) for i in range(riesz_codes)]
    cuts = [schedule.index(TICKET_SCREEN) + 1 for _, _, schedule in drawn]
    screened = [(descend(Z, p, rank, label, seed, schedule[:cut]), schedule[cut:])
                for (label, Z, schedule), cut in zip(drawn, cuts)]
    first, rest = min(screened, key=lambda pair: pair[0].key)
    return descend(first.Z, p, rank, first.start, seed, rest), len(drawn) + 1
