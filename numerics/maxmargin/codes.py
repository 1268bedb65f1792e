"""Candidate codes of P(K, L) as explicit K x K matrices, and their recognition by invariants.

Zbar in R^{K x K}: column k = logits of class k; margin of column k = min_{c != k} Zbar_kk -
Zbar_ck.  P(K, L) minimises S_p(Zbar) = sum sigma_i^p, p = 2/(L + 1), L = number of weight
matrices (N = L + 1 factors including the features), subject to margins >= 1 (Spec A, s. 1-2).
Every code here is column-centred and scaled to minimum margin exactly 1; the exact objectives
are in ``implicitbias.theory.codes``.

- ``simplex_etf``: NC, I - 11^T/K.
- ``kgon_code``: rank 2, Zbar_ck = cos(2 pi (c - k)/K) / (1 - cos(2 pi/K)).
- ``cross_polytope_code``: antipodal pairs (2i, 2i+1) on +-e_i, plus one singleton for odd K.
- ``softmax_code``: rank-r softmax codes (Jiang et al. 2023, arXiv 2310.05351): unit classifier
  vectors w_1..w_K in R^r maximising the one-vs-rest distance
      delta(W) = min_k dist(w_k, conv{w_j : j != k})
  = max over unit features h_k of min_{j != k} <h_k, w_k - w_j> (minimax), so Zbar = W H^T has
  margin delta.  Known optima: r = 2: 1 - cos(2 pi/K); K <= r + 1: K/(K - 1) (simplex);
  r + 1 < K <= 2r: 1 (part of the cross-polytope).
- ``identify_structure``: names a matrix from invariants only (rank, spectrum, Gram matrix and
  sorted angles of its class vectors), never from the code that built it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import torch
from scipy.optimize import minimize
from threadpoolctl import ThreadpoolController

from implicitbias.numerics.maxmargin.margin import min_margin, unit_margin
from implicitbias.numerics.metrics.rank import RANK_RTOL, numerical_rank
from implicitbias.theory import params

__all__ = [
    "simplex_etf",
    "kgon_code",
    "cross_polytope_code",
    "CODES",
    "centre_columns",
    "SoftmaxCode",
    "softmax_code",
    "one_vs_rest_distance",
    "pair_margin_constraint",
    "class_vectors",
    "identify_structure",
    "single_threaded",
]


# Decorator: run with one BLAS/OpenMP thread.  The optimisers here call BLAS on tiny matrices
# thousands of times; a multi-threaded BLAS on a shared machine spends milliseconds per call
# spinning threads (measured 7x slower on the 2-core dev VM under load).
single_threaded = ThreadpoolController().wrap(limits=1)


def _k(K) -> int:
    return params.integer("K", K, minimum=2, maximum=4096)


def centre_columns(Z: np.ndarray) -> np.ndarray:
    """P Z with P = I - 11^T/K: every column shifted to sum zero (margins unchanged)."""
    Z = np.asarray(Z, dtype=float)
    return Z - Z.mean(axis=0, keepdims=True)


def simplex_etf(K: int) -> np.ndarray:
    """Neural collapse: Zbar = I - 11^T/K (margin 1, K - 1 singular values 1)."""
    K = _k(K)
    return np.eye(K) - 1.0 / K


def kgon_code(K: int) -> np.ndarray:
    """Regular K-gon: Zbar_ck = cos(2 pi (c - k)/K) scaled to margin 1 (rank 2; rank 1 at K = 2)."""
    K = _k(K)
    idx = np.arange(K)
    return unit_margin(np.cos(2 * np.pi * (idx[:, None] - idx[None, :]) / K))


def cross_polytope_code(K: int) -> np.ndarray:
    """Cross-polytope: classes 2i, 2i+1 at +-e_i, odd K adds a singleton e_{m+1}; rank ceil(K/2).

    K >= 3 (at K = 2 the pair alone is NC with margin 2 to the antipode).
    """
    K = params.integer("K", K, minimum=3, maximum=4096)
    V = np.zeros((K, (K + 1) // 2))
    for k in range(K):
        V[k, k // 2] = -1.0 if k % 2 else 1.0
    return unit_margin(centre_columns(V @ V.T))


CODES = {"nc": simplex_etf, "kgon": kgon_code, "cross_polytope": cross_polytope_code}


@dataclass
class SoftmaxCode:
    """Unit classifier rows ``W`` (K x r), unit features ``H`` (K x r), ``margin`` of W H^T."""

    W: np.ndarray
    H: np.ndarray
    margin: float

    @property
    def logits(self) -> np.ndarray:
        """Zbar = W H^T (column k = logits of class k), margin ``self.margin``."""
        return self.W @ self.H.T


def _unit_rows(X):
    return X / torch.linalg.norm(X, dim=1, keepdim=True)


def _pair_margins(W, H):
    """<h_k, w_k - w_j> for all j != k, as a flat vector (torch)."""
    G = H @ W.T  # G[k, j] = <h_k, w_j>
    gaps = torch.diagonal(G)[:, None] - G
    K = W.shape[0]
    return gaps[~torch.eye(K, dtype=torch.bool)]


@single_threaded
def softmax_code(
    K: int, r: int, seed=0, starts: int = 2, temperatures=(10.0, 100.0), polish: bool = True
) -> SoftmaxCode:
    """A rank-r softmax code: maximise min_{k, j != k} <h_k, w_k - w_j> over unit w, h in R^r.

    Stage 1, smooth reformulation: the minimum is replaced by a soft minimum
    -(1/tau) logsumexp(-tau m) (torch autograd, float64), maximised by L-BFGS (scipy) with tau
    raised along ``temperatures``.  Stage 2, exact polish: SLSQP on max t subject to
    <h_k, w_k - w_j> >= t and ||w_k|| = ||h_k|| = 1 (analytic Jacobians).  ``starts`` random
    Gaussian starts drawn from ``seed``; the best kept.  The returned margin is recomputed (a hard
    minimum) from the unit vectors.  The polish solves dense QPs of about 2 K r variables and
    K^2 constraints: fast up to K ~ 16, minutes at K = 32 (``polish=False`` skips it).
    """
    K = _k(K)
    r = params.integer("r", r, minimum=2, maximum=K)
    starts = params.integer("starts", starts, minimum=1, maximum=10_000)
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(starts):
        x = rng.standard_normal(2 * K * r)
        for tau in temperatures:

            def f(x, tau=tau):
                t = torch.tensor(x, requires_grad=True)
                W, H = _unit_rows(t[: K * r].view(K, r)), _unit_rows(t[K * r :].view(K, r))
                val = torch.logsumexp(-tau * _pair_margins(W, H), 0) / tau
                (g,) = torch.autograd.grad(val, t)
                return val.item(), g.numpy()

            x = minimize(f, x, jac=True, method="L-BFGS-B", options={"maxiter": 300}).x
        t = torch.tensor(x)
        W, H = _unit_rows(t[: K * r].view(K, r)).numpy(), _unit_rows(t[K * r :].view(K, r)).numpy()
        if polish:
            W, H = _polish_softmax_code(W, H)
        code = SoftmaxCode(W, H, min_margin(W @ H.T))
        if best is None or code.margin > best.margin:
            best = code
    return best


def pair_margin_constraint(K: int, r: int, extra: int = 0):
    """Margins <h_k, w_k - w_j> (j != k) of Zbar = W H^T and their Jacobian, on flat vectors.

    x = (W.ravel(), H.ravel(), ...) with W, H in R^{K x r} and ``extra`` trailing variables
    (untouched here).  Returns ``(fun, jac)`` for scipy constraints; written by hand because
    SLSQP needs dense Jacobians and these are sparse outer-product patterns.
    """
    kk, jj = np.nonzero(~np.eye(K, dtype=bool))
    n = K * r
    rows = np.arange(kk.size)

    def fun(x):
        W, H = x[:n].reshape(K, r), x[n : 2 * n].reshape(K, r)
        return np.einsum("ij,ij->i", H[kk], W[kk] - W[jj])

    def jac(x):
        W, H = x[:n].reshape(K, r), x[n : 2 * n].reshape(K, r)
        J = np.zeros((kk.size, 2 * n + extra))
        for a in range(r):
            np.add.at(J, (rows, kk * r + a), H[kk, a])
            np.add.at(J, (rows, jj * r + a), -H[kk, a])
            J[rows, n + kk * r + a] = W[kk, a] - W[jj, a]
        return J

    return fun, jac


def _polish_softmax_code(W: np.ndarray, H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SLSQP on (W, H, t): max t s.t. <h_k, w_k - w_j> >= t (j != k), unit rows; renormalised."""
    K, r = W.shape
    n = K * r
    gaps, gaps_jac = pair_margin_constraint(K, r, extra=1)

    def margins_jac(x):
        J = gaps_jac(x)
        J[:, -1] = -1.0
        return J

    def norms(x):
        W, H = x[:n].reshape(K, r), x[n : 2 * n].reshape(K, r)
        return np.concatenate([(W**2).sum(1) - 1, (H**2).sum(1) - 1])

    def norms_jac(x):
        J = np.zeros((2 * K, 2 * n + 1))
        for k in range(K):
            J[k, k * r : (k + 1) * r] = 2 * x[k * r : (k + 1) * r]
            J[K + k, n + k * r : n + (k + 1) * r] = 2 * x[n + k * r : n + (k + 1) * r]
        return J

    x0 = np.concatenate([W.ravel(), H.ravel(), [min_margin(W @ H.T)]])
    grad = np.zeros_like(x0)
    grad[-1] = -1.0
    res = minimize(
        lambda x: (-x[-1], grad),
        x0,
        jac=True,
        method="SLSQP",
        constraints=[
            {"type": "ineq", "fun": lambda x: gaps(x) - x[-1], "jac": margins_jac},
            {"type": "eq", "fun": norms, "jac": norms_jac},
        ],
        options={"maxiter": 200, "ftol": 1e-14},
    )
    W, H = res.x[:n].reshape(K, r), res.x[n : 2 * n].reshape(K, r)
    return W / np.linalg.norm(W, axis=1, keepdims=True), H / np.linalg.norm(H, axis=1, keepdims=True)


def one_vs_rest_distance(W: np.ndarray) -> np.ndarray:
    """dist(w_k, conv{w_j : j != k}) for every row k of W (a QP solved by cvxpy, Clarabel)."""
    W = np.asarray(W, dtype=float)
    K = W.shape[0]
    A = cp.Variable((K, K), nonneg=True)  # column k: convex weights of the hull point for class k
    diff = W.T - W.T @ A
    prob = cp.Problem(
        cp.Minimize(cp.sum_squares(diff)),
        [cp.sum(A, axis=0) == 1, cp.diag(A) == 0],
    )
    prob.solve(solver=cp.CLARABEL)
    return np.linalg.norm(W.T - W.T @ A.value, axis=0)


def class_vectors(Z: np.ndarray, tol: float = RANK_RTOL) -> tuple[np.ndarray, np.ndarray]:
    """Balanced factors of Zbar = W H^T: W = U S^(1/2) (classifier rows), H = V S^(1/2).

    Trimmed to the numerical rank.  The Gram matrices W W^T = (Z Z^T)^(1/2) and
    H H^T = (Z^T Z)^(1/2) do not depend on the choice of singular vectors.
    """
    U, s, Vt = np.linalg.svd(np.asarray(Z, dtype=float))
    r = numerical_rank(s, tol)
    root = np.sqrt(s[:r])
    return U[:, :r] * root, Vt[:r].T * root


def identify_structure(Z: np.ndarray, tol: float = 1e-4) -> dict:
    """Name Zbar from invariants: rank, spectrum, Gram and angles of its class vectors.

    - ``nc``: rank K - 1, equal singular values, class vectors with equal norms and pairwise
      cosine -1/(K - 1) (a simplex ETF);
    - ``kgon``: rank 2, equal singular values, equal norms, sorted angles of the class vectors
      equally spaced by 2 pi/K (a regular K-gon);
    - ``cross_polytope``: every class vector has exactly one partner at cosine -1 and is
      orthogonal to the others (odd K: one singleton orthogonal to all pair differences);
    - otherwise ``rank-r code``.
    Returns ``{"name", "rank", "singular_values", "equal_spectrum"}``.
    """
    Z = np.asarray(Z, dtype=float)
    K = Z.shape[0]
    s = np.linalg.svd(Z, compute_uv=False)
    r = numerical_rank(s)
    equal = bool(np.ptp(s[:r]) <= tol * s[0])
    _, H = class_vectors(Z)
    norms = np.linalg.norm(H, axis=1)
    cos = (H @ H.T) / np.outer(norms, norms)
    equal_norms = bool(np.ptp(norms) <= tol * norms.max())
    name = f"rank-{r} code"
    if r == K - 1 and equal and equal_norms and np.allclose(cos[~np.eye(K, dtype=bool)], -1 / (K - 1), atol=tol):
        name = "nc"
    elif r == 2 and K >= 3 and equal and equal_norms:
        angles = np.sort(np.arctan2(H[:, 1], H[:, 0]))
        gaps = np.diff(np.append(angles, angles[0] + 2 * np.pi))
        if np.allclose(gaps, 2 * np.pi / K, atol=tol):
            name = "kgon"
    if name.startswith("rank") and _is_cross_polytope(cos, r, tol):
        name = "cross_polytope"
    return {"name": name, "rank": r, "singular_values": s.tolist(), "equal_spectrum": equal}


def _is_cross_polytope(cos: np.ndarray, r: int, tol: float) -> bool:
    K = cos.shape[0]
    if r != (K + 1) // 2:
        return False
    antipodes = np.isclose(cos, -1, atol=tol).sum(axis=1)
    paired = antipodes == 1
    if paired.sum() != 2 * (K // 2):
        return False
    sub = cos[np.ix_(paired, paired)]
    off = ~np.eye(sub.shape[0], dtype=bool) & ~np.isclose(sub, -1, atol=tol)
    return bool(np.allclose(sub[off], 0, atol=tol))
