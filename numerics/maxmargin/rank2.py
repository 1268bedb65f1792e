"""The best rank-2 code of P(K, L) from random planar starts: a smoothed-margin continuation.

Problem (Spec A, section 1; L counts weight matrices, N = L + 1, p = 2/(L + 1)):

    P(K, L):  minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p  s.t.  Zbar_kk - Zbar_ck >= 1 (c != k),

here restricted to rank 2: Zbar = W H^T with classifier rows w_c and class vectors h_k in R^2,
Zbar_ck = <w_c, h_k>, margins m_ck = <w_k - w_c, h_k>.  The two singular values are those of
the 2 x 2 matrix R_W R_H^T (thin QR factors W = Q_W R_W, H = Q_H R_H).
The objective is invariant under W -> t W G, H -> H G^-T (t > 0, G in GL(2)): no gauge or
scale is fixed:

    F_0 = log sigma_1 + log sigma_2 - 2 log m     (L = inf: sum log sigma at unit margin),

with m the smallest margin (at finite L the objective is S_p = sigma_1^p + sigma_2^p at unit
margin).  Why rank 2 is the whole problem at L = inf: the p -> 0 objective is
ordered by (rank, sum log sigma) (Theorem 3.2), and rank 1 cannot separate K >= 3 classes (with
Zbar = a b^T, b_k (a_k - a_c) >= 1 for all c != k makes a_k the strict maximum of a if b_k > 0,
the strict minimum if b_k < 0: at most two classes), so the best rank-2 code is the optimum.
Theorem 3.2 (Garrod, Keating, Thrampoulidis, ICML 2026) says it is the regular K-gon, with
sigma_1 = sigma_2 = K / (4 sin^2(pi/K)) (``implicitbias.theory.codes``).

Route (``rank2_search``): from each start (``rank2_starts``: Gram matrices of K random unit
vectors in R^2, ``solver.random_gram``, factored by ``codes.class_vectors``; never the regular
polygon, almost surely, and named and counted by the caller), minimise F_0 with the smallest
margin replaced by the power mean M_-q(m) = (mean_ck m_ck^-q)^(-1/q), which decreases to min m as
q -> infinity (Hardy, Littlewood, Polya, Inequalities, 1934, Theorem 16), along the continuation
q = 0.5, 1, 2, ..., 1024 (``Q_SCHEDULE``; L-BFGS-B, scipy, warm started, analytic gradients).
The best end is polished with the exact objective and margins at fixed rank
(``solver.refine_exact``, SLSQP) into the L = inf optimum; every finite depth L is polished the
same way at p(L) from that optimum (exact S_p), and every value re-verified (``solver.verify``).
The continuation is the global strategy.  At small q every margin counts, which smooths the
kinks of the minimum over the K (K - 1) margins; measured over 8 random starts per K
(benchmarks/RESULTS.md, "Theorem 3.2 from random rank-2 starts"): along the continuation every
start ends within 1e-4 of the K-gon at every K = 4..32; with the exact minimum alone (q = 1024
only) 7/8 at K = 12, 5/8 at K = 14, 1/8 at K = 15, 16 and 0/8 at K = 17..32 (K = 20: ends 3-12%
above, on non-regular codes the exact polish does not leave), at 5-15 times the cost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from implicitbias.numerics.maxmargin.codes import class_vectors, single_threaded
from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.numerics.maxmargin.solver import MAX_DIMENSION, MarginSolution, random_gram, refine_exact, verify
from implicitbias.numerics.metrics.rank import svd
from implicitbias.theory import params

__all__ = ["Q_SCHEDULE", "START_LABEL", "Rank2Search", "rank2_starts", "rank2_search", "smoothed_objective"]

Q_SCHEDULE = tuple(2.0**k for k in range(-1, 11))  # power-mean exponents of the continuation: 0.5, 1, ..., 1024
START_LABEL = "rank2:gram#"  # label prefix of the random planar starts
LBFGS = {"maxiter": 2000, "gtol": 1e-9}
TAU = 1e-4  # below this margin (relative to max |Zbar_ij|) log m is continued by a quadratic (``smoothed_objective``)
EXACT_FTOL = 1e-16  # the exact polish runs to the precision limit: the K-gon is compared as a matrix (refine_exact)


@dataclass(frozen=True)
class Rank2Search:
    """The best rank-2 code found per requested depth, and every start's end point at L = inf."""

    K: int
    depths: tuple  # the requested depths (reals >= 1, math.inf)
    best: dict  # depth -> MarginSolution, polished by ``refine_exact`` and re-verified
    ends: tuple[MarginSolution, ...]  # each start's end of the continuation at L = inf, verified, in start order
    starts: tuple[str, ...]  # the start labels, in order


def rank2_starts(K: int, count: int, seed=0) -> list[tuple[str, np.ndarray]]:
    """``count`` labelled random rank-2 starts ``(label, Zbar)``: Gram matrices of K random unit
    vectors in R^2 (``solver.random_gram``), seeded from ``seed``."""
    K = params.integer("K", K, minimum=3, maximum=MAX_DIMENSION)
    count = params.integer("count", count, minimum=1, maximum=10_000)
    rng = np.random.default_rng(seed)
    return [(f"{START_LABEL}{i}", random_gram(K, 2, rng)) for i in range(count)]


def smoothed_objective(x: np.ndarray, K: int, q: float) -> tuple[float, np.ndarray]:
    """F_0 of the module docstring with min m replaced by M_-q(m), and its gradient in x = (W, H):

        F_0,q = log sigma_1 + log sigma_2 + (2/q) log mean_ck exp(-q l(m_ck)),   l = log above TAU.

    ``x`` holds W then H (K x 2 each, row-major).  Gradients: d log sigma_i = u_i^T dZ v_i, so the
    spectral part contributes G H to W and G^T W to H with G = U diag(1/sigma) V^T (U, V from the
    QR factors and the 2 x 2 SVD); the margin part has d/dm_ck = -2 s_ck l'(m_ck) with
    s = softmax(-q l(m)).  Below ``TAU`` (x is scaled to max |Zbar_ij| = 1 by the caller) log m is
    continued by its second-order Taylor polynomial at TAU, l(m) = log TAU + d - d^2/2 with
    d = m/TAU - 1: finite everywhere, so that L-BFGS-B's line search can step back from a trial
    point with a negative margin (with log m it gets +inf there and stops; with a large finite
    value its interpolation shrinks the step to nothing: measured, random starts with two almost
    coincident classes, min margin 1e-10, stalled where they began).
    """
    W, H = x[: 2 * K].reshape(K, 2), x[2 * K :].reshape(K, 2)
    Z = W @ H.T
    m = np.diag(Z)[None, :] - Z  # m[c, k] = <w_k - w_c, h_k>
    off = ~np.eye(K, dtype=bool)
    Qw, Rw = np.linalg.qr(W)
    Qh, Rh = np.linalg.qr(H)
    u, s, vt = svd(Rw @ Rh.T)
    U, V = Qw @ u, Qh @ vt.T
    value = float(np.sum(np.log(s)))
    mo = m[off]
    d = np.minimum(mo / TAU - 1, 0.0)
    log_m = np.where(d < 0, math.log(TAU) + d - d * d / 2, np.log(np.maximum(mo, TAU)))
    dlog_m = np.where(d < 0, (1 - d) / TAU, 1 / np.maximum(mo, TAU))
    value += 2 / q * (float(logsumexp(-q * log_m)) - math.log(mo.size))
    dm = np.zeros((K, K))
    dm[off] = -2 * softmax(-q * log_m) * dlog_m
    dZ = -dm
    dZ[np.diag_indices(K)] += dm.sum(axis=0)  # m[c, k] = Z[k, k] - Z[c, k]
    dW = (U / s) @ (V.T @ H) + dZ @ H
    dH = (V / s) @ (U.T @ W) + dZ.T @ W
    return value, np.concatenate([dW.ravel(), dH.ravel()])


def _continuation(Z0: np.ndarray, schedule: Sequence[float]) -> np.ndarray:
    """The end of the q-continuation along ``schedule`` (L = inf) from a separating rank-2 Z0."""
    K = Z0.shape[0]
    W, H = class_vectors(Z0)
    x = np.concatenate([W.ravel(), H.ravel()])
    for q in schedule:
        x = x / math.sqrt(np.abs(W @ H.T).max())  # F is scale-invariant: max |Zbar_ij| = 1, the scale of TAU
        x = minimize(smoothed_objective, x, args=(K, q), jac=True, method="L-BFGS-B", options=LBFGS).x
        W, H = x[: 2 * K].reshape(K, 2), x[2 * K :].reshape(K, 2)
    return W @ H.T


@single_threaded
def rank2_search(K: int, depths: Sequence, count: int = 4, seed=0, refine_iterations: int = 200,
                 schedule: Sequence[float] = Q_SCHEDULE) -> Rank2Search:
    """The best rank-2 Zbar of P(K, L) for every L in ``depths``, from ``count`` random planar starts.

    ``depths``: reals >= 1 or ``math.inf`` (L weight matrices, p = 2/(L + 1); inf: p -> 0, sum
    log sigma).  Every start is followed along the q-continuation ``schedule`` at L = inf; the
    best end is polished by ``solver.refine_exact`` (``refine_iterations`` SLSQP iterations) into
    the L = inf optimum, and each finite L is polished from that optimum at p(L) (a continuation
    in depth: Theorem 3.2 concerns large L; at small L, where the best rank-2 code can differ,
    this is the local minimum near the L = inf one).  Every value is re-verified from an SVD at
    unit margin.
    """
    depths = tuple(math.inf if d == math.inf else params.real("L", d, minimum=1) for d in depths)
    refine_iterations = params.integer("refine_iterations", refine_iterations, minimum=1, maximum=100_000)
    labelled = rank2_starts(K, count, seed)
    ends = tuple(verify(_continuation(Z, schedule), 0.0, label) for label, Z in labelled)
    limit = refine_exact(min(ends, key=lambda s: s.key), maxiter=refine_iterations, ftol=EXACT_FTOL)
    best = {L: limit if L == math.inf else
            refine_exact(verify(limit.Z, schatten_exponent(L), limit.start), maxiter=refine_iterations, ftol=EXACT_FTOL)
            for L in depths}
    return Rank2Search(K, depths, best, ends, tuple(label for label, _ in labelled))
