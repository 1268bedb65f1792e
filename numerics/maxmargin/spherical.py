"""Spherical codes as starting points of P(K, L): K unit vectors in R^r spread apart.

The optima of P(K, L) found so far are logit matrices Zbar = W H^T whose class vectors are close
to well-separated spherical codes (Spec A, section 2: rank-r softmax codes; the icosahedron at
K = 12, the square antiprism at K = 8, ...).  A symmetric code V (rows v_k, unit norm) gives the
feasible logit matrix

    Zbar = P V V^T / (1 - max_{c != k} <v_c, v_k>),   P = I - 11^T/K,

with margins |v_k|^2 - <v_c, v_k> = 1 - cos(v_c, v_k) >= 1 after the scaling (column-centring
changes no margin).  ``repulsion_code`` spreads K points on the sphere S^{r-1} by minimising the
Riesz energy

    E_s(V) = sum_{c < k} |v_c - v_k|^{-s},

for growing s (s -> infinity is the Tammes problem, maximise the smallest distance), by L-BFGS
(scipy) on unnormalised rows v_k / |v_k|.  Depth does not enter: these are starts; the solver
(``implicitbias.numerics.maxmargin.solver.polish``) moves them to the optimum of each depth
(L weight matrices, p = 2/(L + 1)).

``one_vs_rest_distance`` reads a code as a softmax code (Jiang et al. 2023, "Generalized neural
collapse for a large number of classes", ICML 2024, arXiv 2310.05351, Definition 2.1): the
one-vs-rest distance of class k is dist(w_k, conv{w_j : j != k}), the largest margin
min_{j != k} <h, w_k - w_j> over unit features h (minimax), and a rank-r softmax code maximises
its minimum over unit w_k in R^r.  The symmetric logits V V^T of ``code_logits`` (features =
classifier rows) have the smaller margin min_{j != k} (1 - <v_j, v_k>) (the one-vs-one distance
of the Tammes problem); the two agree when the hull point nearest to v_k lies on the ray of v_k.
``max_margin_code`` maximises either margin over unit rows, from repulsion and random starts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from implicitbias.numerics.maxmargin.codes import centre_columns, single_threaded
from implicitbias.numerics.maxmargin.margin import unit_margin
from implicitbias.theory import params

__all__ = ["RIESZ_EXPONENTS", "repulsion_code", "code_logits", "random_unit_vectors", "one_vs_rest_distance",
           "MarginCode", "max_margin_code"]

RIESZ_EXPONENTS = (8.0, 64.0)  # energy exponents s, warm-started: spread, then Tammes-like


def random_unit_vectors(K: int, r: int, rng: np.random.Generator) -> np.ndarray:
    """K independent uniform points on S^{r-1} (rows)."""
    V = rng.standard_normal((K, r))
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def _log_energy(x: np.ndarray, K: int, r: int, s: float, iu) -> tuple[float, np.ndarray]:
    """log E_s of the normalised rows of x, and its gradient (scale-free, overflow-safe)."""
    V = x.reshape(K, r)
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    U = V / norms
    d2 = np.maximum(2.0 - 2.0 * (U @ U.T)[iu], 1e-300)  # squared distances of unit vectors
    dmin = d2.min()
    w = (d2 / dmin) ** (-s / 2)  # energy terms relative to the closest pair
    total = w.sum()
    value = float(np.log(total) - (s / 2) * np.log(dmin))
    coef = np.zeros((K, K))
    coef[iu] = s * w / (total * d2)  # d value / d <u_c, u_k>
    coef += coef.T
    gU = coef @ U
    gV = (gU - U * np.sum(gU * U, axis=1, keepdims=True)) / norms  # through u = v / |v|
    return value, gV.ravel()


def repulsion_code(K: int, r: int, seed=0, exponents=RIESZ_EXPONENTS, maxiter: int = 100) -> np.ndarray:
    """K unit vectors in R^r (rows) from a random start by Riesz-energy minimisation.

    The exponents are raised along ``exponents``, each stage warm-started; ``seed`` (an int or a
    numpy Generator) draws the start, so different seeds give different local optima of the
    energy.  Hand-written energy and gradient: scipy has no spherical-code routine.
    """
    K = params.integer("K", K, minimum=2, maximum=4096)
    r = params.integer("r", r, minimum=1, maximum=K)
    rng = np.random.default_rng(seed)
    x = random_unit_vectors(K, r, rng).ravel()
    iu = np.triu_indices(K, 1)
    for s in exponents:
        x = minimize(_log_energy, x, args=(K, r, float(s), iu), jac=True, method="L-BFGS-B",
                     options={"maxiter": maxiter}).x
    V = x.reshape(K, r)
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def code_logits(V: np.ndarray) -> np.ndarray:
    """The feasible logit matrix of a symmetric code: P V V^T scaled to minimum margin 1."""
    V = np.asarray(V, dtype=float)
    return unit_margin(centre_columns(V @ V.T))


def one_vs_rest_distance(W: np.ndarray) -> np.ndarray:
    """dist(w_k, conv{w_j : j != k}) for every row k of W (Jiang et al. 2023, Definition 2.1).

    One convex QP (cvxpy, Clarabel) for all classes: column k of A holds the convex weights of
    the hull point nearest to w_k (A >= 0, columns summing to 1, A_kk = 0).  The rows are taken
    as given (a softmax code has unit rows).
    """
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] < 2 or not np.all(np.isfinite(W)):
        raise params.ParameterError(f"W must be a finite 2-d array with at least 2 rows, got shape {W.shape}")
    K = W.shape[0]
    import cvxpy as cp  # imported where used: 0.4 s that the search's workers never need

    A = cp.Variable((K, K), nonneg=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(W.T - W.T @ A)), [cp.sum(A, axis=0) == 1, cp.diag(A) == 0])
    problem.solve(solver=cp.CLARABEL)
    return np.linalg.norm(W.T - W.T @ A.value, axis=0)


@dataclass(frozen=True)
class MarginCode:
    """Unit classifier rows ``W`` and unit features ``H`` (K x r) and the margin of W H^T.

    ``margin`` = min_{k, j != k} <h_k, w_k - w_j>, recomputed from the returned unit rows.
    """

    W: np.ndarray
    H: np.ndarray
    margin: float


def _pair_margins(W: np.ndarray, H: np.ndarray, off: np.ndarray) -> np.ndarray:
    G = H @ W.T  # G[k, j] = <h_k, w_j>
    return (np.diag(G)[:, None] - G)[off]


@single_threaded
def max_margin_code(K: int, r: int, symmetric: bool = False, seeds: int = 4, maxiter: int = 500) -> MarginCode:
    """K unit vectors in R^r maximising the smallest margin min_{k, j != k} <h_k, w_k - w_j>.

    ``symmetric=False``: unit classifier rows w_k and unit features h_k both free, the rank-r
    softmax code of Jiang et al. (2023, Definition 2.1): for fixed W the best features give
    margin min_k dist(w_k, conv{w_j : j != k}) (``one_vs_rest_distance``).
    ``symmetric=True``: h_k = w_k, margin min_{j != k} (1 - <w_j, w_k>) = 1 - cos(theta_min),
    the Tammes problem (largest smallest angle of K points on S^{r-1}).
    SLSQP (scipy) on (W, H, t): maximise t subject to <h_k, w_k - w_j> >= t and unit rows, with
    the hand-written Jacobians SLSQP needs dense; a local method, started from the repulsion code
    (seed 0) and from uniform random points (seeds 1 .. ``seeds`` - 1; at K = 13, 14 in R^3 the
    Riesz minimisers lie in another basin than the Tammes optima); the best is returned.
    ``maxiter``: SLSQP iterations per start.
    """
    K = params.integer("K", K, minimum=2, maximum=256)
    r = params.integer("r", r, minimum=1, maximum=K)
    seeds = params.integer("seeds", seeds, minimum=1, maximum=1000)
    maxiter = params.integer("maxiter", maxiter, minimum=1, maximum=100_000)
    n = K * r
    off = ~np.eye(K, dtype=bool)
    kk, jj = np.nonzero(off)
    rows = np.arange(kk.size)

    def unpack(x):
        W = x[:n].reshape(K, r)
        return W, (W if symmetric else x[n:2 * n].reshape(K, r))

    def margins(x):
        W, H = unpack(x)
        return _pair_margins(W, H, off) - x[-1]

    def margins_jac(x):
        W, H = unpack(x)
        J = np.zeros((kk.size, x.size))
        for a in range(r):  # d/dw_k = h_k, d/dw_j = -h_k, d/dh_k = w_k - w_j
            np.add.at(J, (rows, kk * r + a), H[kk, a])
            np.add.at(J, (rows, jj * r + a), -H[kk, a])
            np.add.at(J, (rows, (0 if symmetric else n) + kk * r + a), W[kk, a] - W[jj, a])
        J[:, -1] = -1.0
        return J

    def norms(x):
        return (x[:-1].reshape(-1, r) ** 2).sum(axis=1) - 1.0

    def norms_jac(x):
        J = np.zeros(((x.size - 1) // r, x.size))
        J[np.repeat(np.arange(J.shape[0]), r), np.arange(x.size - 1)] = 2 * x[:-1]
        return J

    objective = np.zeros(n + (0 if symmetric else n) + 1)
    objective[-1] = -1.0
    best = None
    for seed in range(seeds):
        V = repulsion_code(K, r) if seed == 0 else random_unit_vectors(K, r, np.random.default_rng(seed))
        x0 = np.concatenate([V.ravel()] + ([] if symmetric else [V.ravel()]) + [[_pair_margins(V, V, off).min()]])
        res = minimize(lambda x: (-x[-1], objective), x0, jac=True, method="SLSQP",
                       constraints=[{"type": "ineq", "fun": margins, "jac": margins_jac},
                                    {"type": "eq", "fun": norms, "jac": norms_jac}],
                       options={"maxiter": maxiter, "ftol": 1e-15})
        W, H = unpack(res.x)
        W = W / np.linalg.norm(W, axis=1, keepdims=True)
        H = W if symmetric else H / np.linalg.norm(H, axis=1, keepdims=True)
        code = MarginCode(W, H, float(_pair_margins(W, H, off).min()))
        if best is None or code.margin > best.margin:
            best = code
    return best
