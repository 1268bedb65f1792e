"""Rank-r softmax codes (Jiang et al. 2023, "Generalized neural collapse for a large number of
classes", arXiv 2310.05351): the max-margin solutions of a width-r bottleneck (Spec A, section 2).

Unit classifier vectors w_1..w_K in R^r maximising the one-vs-rest distance

    delta(W) = min_k dist(w_k, conv{w_j : j != k})
             = max over unit features h_k of min_{j != k} <h_k, w_k - w_j>   (minimax),

so Zbar = W H^T (column k = logits of class k) has margin delta.  Known optima: r = 2:
1 - cos(2 pi/K) (regular polygon); K <= r + 1: K/(K - 1) (simplex); r + 1 < K <= 2r: 1 (part of
the cross-polytope).  Depth does not enter (these are the p -> 0 limit at a fixed width r).
"""

from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import torch
from scipy.optimize import minimize

from implicitbias.numerics.maxmargin.codes import pair_margin_constraint, single_threaded
from implicitbias.numerics.maxmargin.margin import min_margin
from implicitbias.theory import params

__all__ = ["SoftmaxCode", "softmax_code", "one_vs_rest_distance"]


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
    K = params.integer("K", K, minimum=2, maximum=4096)
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


