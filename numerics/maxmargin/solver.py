"""Local solver for the deep-UFM max-margin problem P(K, L) in logit space (Spec A, section 1).

Depth L counts weight matrices; the features are one more factor, N = L + 1, p = 2/(L + 1):

    P(K, L):  minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p  s.t.  Zbar_kk - Zbar_ck >= 1 (c != k).

L = 1 (p = 1) is the convex nuclear-norm problem, solved by cvxpy (``nuclear_norm_optimum``) with
a certified lower bound from its dual.  For L > 1 (any real L) ``polish`` finds a local minimum
near a given start; the global search over starts is ``implicitbias.numerics.maxmargin.search``.

- Variables: the gaps g_ck = Zbar_kk - Zbar_ck (c != k), with bounds g_ck >= 1, which are exactly
  the margin constraints.  Zbar = P G(g) with G_kk = 0, G_ck = -g_ck and P = I - 11^T/K (centring
  costs nothing: it leaves margins unchanged and can only shrink singular values).
- Objective: the smoothed spectral function sum_i phi_eps(sigma_i^2) with
  phi_eps(x) = (x + eps)^(p/2), eps lowered by factors of 10 from 1e-2 to 1e-11 (each stage warm
  started; ten short stages reach a relative accuracy of about 1e-9 where three long ones stall
  near 1e-6); gradient P U diag(2 sigma phi'(sigma^2)) V^T from one SVD.  p = 0 selects the
  L -> infinity objective ordered by rank, then sum log sigma (Theorem 3.2):
  phi_eps(x) = log(x + eps)/2, under which each vanishing singular value costs log(eps)/2, so
  lower rank dominates and, at equal rank, sum log sigma decides.
- Minimiser: L-BFGS-B (scipy), which keeps the bounds exactly.  Every stage's scipy status
  (``success``, ``message``) is carried in the result.

Every returned matrix is re-verified by ``verify``: margins recomputed, rescaled to minimum margin
exactly 1, objective and rank from an SVD (singular values below numpy's ``matrix_rank``
tolerance K eps sigma_1 count as zero).  Structures are named elsewhere, from invariants
(``implicitbias.numerics.maxmargin.naming``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
from scipy.optimize import minimize

from implicitbias.numerics.maxmargin.codes import (
    centre_columns,
    simplex_etf,
    single_threaded,
)
from implicitbias.numerics.maxmargin.margin import margins, min_margin, schatten_objective, unit_margin
from implicitbias.numerics.metrics.rank import numerical_rank, svd
from implicitbias.theory import params

__all__ = [
    "MarginSolution",
    "verify",
    "polish",
    "refine_exact",
    "refine_until_stalled",
    "random_gram",
    "nuclear_norm_optimum",
    "nuclear_norm_dual_bound",
    "feasible_directions",
    "nc_directional_slopes",
    "EPS_SCHEDULE",
    "WARM_SCHEDULE",
    "COARSE_SCHEDULE",
    "MAX_DIMENSION",
]

EPS_SCHEDULE = tuple(10.0**-k for k in range(2, 12))  # smoothing continuation 1e-2 ... 1e-11
COARSE_SCHEDULE = EPS_SCHEDULE[:5]  # 1e-2 ... 1e-6: which basin a start falls into, about 1e-4 accurate
WARM_SCHEDULE = EPS_SCHEDULE[3:]  # 1e-5 ... 1e-11: a local minimum of a nearby depth polished to about 1e-9
TIGHT = {"maxiter": 300, "ftol": 1e-13, "gtol": 1e-10}  # L-BFGS-B options of the final stages
LOOSE = {"maxiter": 150, "ftol": 1e-9, "gtol": 1e-6}  # ... of stages that only follow the path
REFINE_FTOL = 1e-12  # refine_exact's SLSQP stops when f moves less than this
REFINE_SCALE = 100.0  # SLSQP sees the objective scaled to this value at its start (p > 0)
REFINE_ROUNDS = 5  # refine_until_stalled runs refine_exact at most this many times in a row ...
IMPROVES = 1e-12  # ... while each run lowers the objective by more than this (relative)
MAX_DIMENSION = 256  # K above this: the dense K x K SVD per step is too slow to be useful


@dataclass
class MarginSolution:
    """A re-verified feasible Zbar: unit margin, objective and rank recomputed from its SVD.

    ``objective`` is S_p for p > 0 and sum log sigma over the numerical rank for p = 0 (then
    solutions compare by ``key`` = (rank, objective)).  ``success`` and ``message`` report the
    scipy minimisations that produced it (all stages successful; their distinct messages).
    """

    Z: np.ndarray
    p: float
    objective: float
    margin: float
    rank: int
    singular_values: list[float]
    start: str
    success: bool = True
    message: str = "given"
    iterations: int = 0

    @property
    def key(self) -> tuple:
        return (self.rank, self.objective) if self.p == 0 else (self.objective,)

    @classmethod
    def from_summary(cls, record: dict) -> MarginSolution:
        """The solution a ``summary`` record describes (the inverse of ``summary``)."""
        return cls(**{**record, "Z": np.array(record["Z"], dtype=float)})

    def summary(self) -> dict:
        """JSON-ready record (the explicit matrix included)."""
        return {
            "objective": self.objective,
            "p": self.p,
            "rank": self.rank,
            "margin": self.margin,
            "singular_values": self.singular_values,
            "start": self.start,
            "success": self.success,
            "message": self.message,
            "iterations": self.iterations,
            "Z": self.Z.tolist(),
        }


@dataclass
class _Status:
    """scipy's verdicts over the stages of one solve."""

    success: bool = True
    messages: list[str] = field(default_factory=list)
    iterations: int = 0

    def add(self, res) -> None:
        self.success = self.success and bool(res.success)
        message = str(res.message)
        if message not in self.messages:
            self.messages.append(message)
        self.iterations += int(getattr(res, "nit", 0))

    @property
    def message(self) -> str:
        return "; ".join(self.messages)


def verify(Z: np.ndarray, p: float, start: str = "given", status: _Status | None = None) -> MarginSolution:
    """Re-verify a candidate: recompute margins, rescale to minimum margin exactly 1, SVD.

    Raises ``ValueError`` if Zbar does not separate the classes.
    """
    Z = unit_margin(np.asarray(Z, dtype=float))
    s = np.linalg.svd(Z, compute_uv=False)
    r = numerical_rank(s)
    rtol = max(Z.shape) * np.finfo(float).eps
    value = float(np.sum(np.log(s[:r]))) if p == 0 else schatten_objective(Z, p, rtol=rtol)
    status = status or _Status()
    return MarginSolution(
        Z=Z,
        p=float(p),
        objective=value,
        margin=float(margins(Z).min()),
        rank=r,
        singular_values=s.tolist(),
        start=start,
        success=status.success,
        message=status.message or "given",
        iterations=status.iterations,
    )


def _penalty(p: float, eps: float):
    """phi_eps and its derivative: (x + eps)^(p/2), or log(x + eps)/2 when p = 0."""
    if p == 0:
        return (lambda x: 0.5 * np.log(x + eps)), (lambda x: 0.5 / (x + eps))
    return (lambda x: (x + eps) ** (p / 2)), (lambda x: (p / 2) * (x + eps) ** (p / 2 - 1))


@single_threaded
def polish(Z0: np.ndarray, p: float, start: str = "given", eps_schedule=EPS_SCHEDULE) -> MarginSolution:
    """Local minimisation of P from a separating Z0 (any scale), re-verified.

    After the continuation, every SVD truncation of the result that still separates the classes
    is re-verified too (the smoothing leaves singular values of order sqrt(eps) where the
    true objective wants zeros); the best of these and of Z0 itself is returned, so polishing
    never returns a worse matrix than its start.  The gap parametrisation with L-BFGS-B bounds is
    written by hand because no library solves Schatten-quasi-norm problems over polyhedra; scipy
    does the minimisation.  Stages with eps >= 1e-6 only follow the continuation path (loose
    L-BFGS-B tolerances, ``LOOSE``); later ones converge tightly (``TIGHT``).  The smoothed
    problem is ill-conditioned at small eps (curvature ~ eps^(p/2 - 1) across the vanishing
    singular values), so on flat low-rank families the result can sit 1e-4 above the minimum;
    ``refine_exact`` finishes the job at fixed rank.
    """
    Z0 = unit_margin(centre_columns(Z0))
    K = Z0.shape[0]
    off = np.flatnonzero(~np.eye(K, dtype=bool))  # flat positions of the gaps, row by row
    g = np.maximum((np.diag(Z0)[None, :] - Z0).ravel()[off], 1.0)
    status = _Status()

    # the objective runs about a million times per atlas: the centring P X = X - 1 (1^T X)/K is
    # written out (the same floating-point operations as ``centre_columns``'s mean, without
    # numpy's per-call overhead of ``mean``), the gaps are scattered into flat positions
    def build(g):
        G = np.zeros(K * K)
        G[off] = -g
        G = G.reshape(K, K)
        return G - G.sum(axis=0) / K

    for eps in eps_schedule:
        phi, dphi = _penalty(p, eps)

        def f(g, phi=phi, dphi=dphi):
            U, s, Vt = svd(build(g))
            dZ = (U * (2 * s * dphi(s * s))) @ Vt
            return float(np.sum(phi(s * s))), (dZ.sum(axis=0) / K - dZ).ravel()[off]

        res = minimize(
            f,
            g,
            jac=True,
            method="L-BFGS-B",
            bounds=[(1.0, None)] * g.size,
            options=LOOSE if eps >= 1e-6 else TIGHT,
        )
        status.add(res)
        g = res.x
    candidates = [verify(Z, p, start, status) for Z in [Z0, *_truncations(build(g))]]
    return min(candidates, key=lambda s: s.key)


def _truncations(Z: np.ndarray) -> list[np.ndarray]:
    """Z and its rank-r SVD truncations (r >= 1) that still separate the classes."""
    U, s, Vt = svd(Z)
    out = []
    for r in range(1, numerical_rank(s) + 1):
        Zr = (U[:, :r] * s[:r]) @ Vt[:r]
        if min_margin(Zr) > 0:
            out.append(Zr)
    return out or [Z]


@single_threaded
def refine_exact(sol: MarginSolution, slack: float = 0.2, maxiter: int = 200, ftol: float = REFINE_FTOL) -> MarginSolution:
    """Refine a solution at its rank r with the exact objective and SLSQP; never worse.

    Zbar = A B^T with A, B in R^{K x r}, the gauge fixed by B[J] = I_r on r rows J chosen by a
    pivoted QR of the right singular vectors (without it the r^2 directions of (A G, B G^-T)
    leave the problem degenerate and SLSQP stalls).  Objective sum_{i <= r} sigma_i^p
    (p = 0: sum log sigma_i), smooth while sigma_r > 0, gradient G B in A and G^T A in B with
    G = U_r diag(phi'(sigma)) V_r^T; constraints: the margins within ``slack`` of active at the
    start, <A_k - A_c, B_k> >= 1 (every margin is rechecked by ``verify``, which rescales to
    unit margin, so the value returned is honest).  Needed because the smoothed problem is
    ill-conditioned on flat low-rank families: measured 7e-4 below the smoothed minimum at
    K = 16, L = 4.  The Jacobians are written by hand: SLSQP needs them dense.  SLSQP stops when an
    iteration moves the objective by less than ``ftol`` (absolute, in the objective's own units; ``REFINE_FTOL``).
    For p > 0 SLSQP sees the objective scaled to ``REFINE_SCALE`` at the start: its quasi-Newton matrix starts
    at the identity, and at the objective's own scale (S_p about 2-25) it took twice the iterations over the
    atlas (benchmarks/RESULTS.md, "SLSQP's objective scaled").  With ftol 1e-16 it ran to
    ``maxiter`` at the precision limit, with 6-10 line-search evaluations per iteration, for values
    equal to 1e-13 (measured on the searches of K = 14 and 24, all depths 2-12).  The argmin is only
    about sqrt(ftol) accurate where the minimum is quadratic: pass 1e-16 where the matrix itself is
    compared (``rank2``: the K-gon's structure to 1e-6).
    """
    K, r, p = sol.Z.shape[0], sol.rank, sol.p
    if r >= K - 1 or r < 1:
        return sol
    U, s, Vt = svd(sol.Z)
    B0 = Vt[:r].T
    _, _, pivots = scipy.linalg.qr(B0.T, pivoting=True)
    rows, rest = np.sort(pivots[:r]), np.sort(pivots[r:])
    M = B0[rows]
    A0 = (U[:, :r] * s[:r]) @ M.T
    C0 = B0[rest] @ np.linalg.inv(M)
    where = np.full(K, -1)
    where[rest] = np.arange(rest.size)
    gaps0 = np.diag(sol.Z)[None, :] - sol.Z
    cc, kk = np.nonzero(~np.eye(K, dtype=bool) & (gaps0 <= 1 + slack))
    n_a = K * r
    span = np.arange(r)
    j = np.flatnonzero(where[kk] >= 0)
    # the Jacobian's sparsity pattern, fixed: row i holds B_k at A_k's and -B_k at A_c's columns (c != k:
    # no two entries share a cell) and A_k - A_c at the free rows of B
    rows_a = np.repeat(np.arange(kk.size), r)
    cols_k, cols_c = (kk[:, None] * r + span).ravel(), (cc[:, None] * r + span).ravel()
    rows_b, cols_b = np.repeat(j, r), (n_a + where[kk[j]][:, None] * r + span).ravel()

    def unpack(x):
        A = x[:n_a].reshape(K, r)
        B = np.empty((K, r))
        B[rows] = np.eye(r)
        B[rest] = x[n_a:].reshape(rest.size, r)
        return A, B

    def f(x):
        A, B = unpack(x)
        Uz, sz, Vz = svd(A @ B.T)
        sz = np.maximum(sz[:r], 1e-300)
        val, dphi = (np.log(sz).sum(), 1 / sz) if p == 0 else ((sz**p).sum(), p * sz ** (p - 1))
        G = (Uz[:, :r] * dphi) @ Vz[:r]
        return float(val), np.concatenate([(G @ B).ravel(), (G.T @ A)[rest].ravel()])

    def margins_active(x):
        A, B = unpack(x)
        return np.einsum("ij,ij->i", A[kk] - A[cc], B[kk]) - 1.0

    def jacobian(x):
        A, B = unpack(x)
        J = np.zeros((kk.size, x.size))
        J[rows_a, cols_k] = B[kk].ravel()
        J[rows_a, cols_c] = -B[kk].ravel()
        J[rows_b, cols_b] = (A[kk[j]] - A[cc[j]]).ravel()
        return J

    x0 = np.concatenate([A0.ravel(), C0.ravel()])
    scale = REFINE_SCALE / abs(f(x0)[0]) if p > 0 else 1.0

    def scaled(x):
        value, grad = f(x)
        return value * scale, grad * scale

    res = minimize(scaled, x0, jac=True, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": margins_active, "jac": jacobian}],
                   options={"maxiter": maxiter, "ftol": ftol * scale})
    status = _Status()
    status.add(res)
    A, B = unpack(res.x)
    Z = A @ B.T
    if not np.all(np.isfinite(Z)) or min_margin(Z) <= 0:
        return sol
    return min(sol, verify(Z, p, sol.start, status), key=lambda s: s.key)


def refine_until_stalled(sol: MarginSolution, rounds: int = REFINE_ROUNDS) -> tuple[MarginSolution, int]:
    """``refine_exact`` repeated from its own output while it lowers the objective by more than a
    relative ``IMPROVES``, at most ``rounds`` times; never worse.  Returns the solution and the number
    of refinements run.  Needed because one SLSQP run of 200 iterations can stop up to 5e-6 above
    the minimum (measured at K = 14, L = 3-4).
    """
    for run in range(1, rounds + 1):
        nxt = refine_exact(sol)
        if not nxt.objective < sol.objective * (1 - IMPROVES):
            return sol, run
        sol = nxt
    return sol, rounds


def random_gram(K: int, r: int, rng: np.random.Generator) -> np.ndarray:
    """Gram matrix of K random unit vectors in R^r: rank r, margin 1 - max cos > 0 (a.s.)."""
    X = rng.standard_normal((K, r))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X @ X.T


def nuclear_norm_optimum(K: int) -> dict:
    """P(K, 1) = min ||Zbar||_* s.t. margins >= 1, by cvxpy (Clarabel), with a dual certificate.

    Lagrange dual: max sum_{c != k} lam_ck s.t. ||M(lam)||_2 <= 1, lam >= 0, where
    M(lam) = sum lam_ck (e_k - e_c) e_k^T.  Any lam >= 0 gives the lower bound
    sum(lam) / ||M(lam)||_2 on the optimum (weak duality), so the multipliers cvxpy returns
    certify the value up to the solver's accuracy.  Returns the primal value, that lower bound,
    the verified primal matrix and the solver status.
    """
    K = params.integer("K", K, minimum=2, maximum=64)
    import cvxpy as cp  # imported where used: 0.4 s that the search's workers never need

    Z = cp.Variable((K, K))
    diag = cp.reshape(cp.diag(Z), (1, K), order="C")
    off = ~np.eye(K, dtype=bool)
    gap = diag - Z  # gap[c, k] = Z_kk - Z_ck
    constraint = cp.multiply(off.astype(float), gap - 1) >= 0
    prob = cp.Problem(cp.Minimize(cp.normNuc(Z)), [constraint])
    prob.solve(solver=cp.CLARABEL)
    lam = np.asarray(constraint.dual_value, dtype=float)
    return {
        "value": float(prob.value),
        "lower_bound": nuclear_norm_dual_bound(lam),
        "solution": verify(Z.value, 1.0, "cvxpy"),
        "status": prob.status,
    }


def nuclear_norm_dual_bound(lam: np.ndarray) -> float:
    """Weak-duality lower bound on P(K, 1) from multipliers lam (K x K, lam_ck for c != k).

    With M(lam) = sum_{c != k} lam_ck (e_k - e_c) e_k^T and lam >= 0, every feasible Zbar has
    ||Zbar||_* >= <M, Zbar> / ||M||_2 >= sum(lam) / ||M||_2.  The uniform choice lam_ck = 1/K
    gives M = I - 11^T/K with ||M||_2 = 1, so the bound K - 1: NC is optimal at L = 1 for every K.
    """
    lam = np.clip(np.asarray(lam, dtype=float), 0, None) * (1 - np.eye(len(lam)))
    M = np.diag(lam.sum(axis=0)) - lam  # column k: sum_c lam_ck (e_k - e_c)
    return float(lam.sum() / np.linalg.norm(M, 2))


def feasible_directions(K: int, count: int, seed=0) -> np.ndarray:
    """``count`` random unit-Frobenius directions D (K x K) feasible at NC to first order.

    NC's margins are all active, so D is feasible iff D_kk - D_ck >= 0 for all c != k; D is built
    from random gaps d_ck = D_kk - D_ck >= 0 (exponential draws, some set to zero so that faces of
    the cone are sampled too), column-centred (centring changes no margin).
    """
    K = params.integer("K", K, minimum=2, maximum=MAX_DIMENSION)
    count = params.integer("count", count, minimum=1, maximum=100_000)
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(size=(count, K, K)) * (rng.random((count, K, K)) < 0.7)
    gaps[:, np.arange(K), np.arange(K)] = 0.0
    gaps[gaps.sum(axis=(1, 2)) == 0, 0, 1] = 1.0  # never the zero direction
    D = -gaps  # D_kk = 0, D_ck = -d_ck: gaps D_kk - D_ck = d_ck >= 0
    D = D - D.mean(axis=1, keepdims=True)
    return D / np.linalg.norm(D, axis=(1, 2), keepdims=True)


def nc_directional_slopes(K: int, p: float, directions: np.ndarray, t: float = 1e-7) -> np.ndarray:
    """One-sided slopes (S_p(NC + t D) - (K - 1)) / t of the objective along directions D.

    Finite differences of the objective from an SVD, independent of any formula for the
    derivative (first-order theory: p tr(D) >= 0 for feasible centred D).  The directions are
    centred, so NC + t D keeps its exact zero singular value; values below 1e-9 sigma_1 count as
    zero (rounding would otherwise add (1e-16)^p).
    """
    nc = simplex_etf(K)
    return np.array([(schatten_objective(nc + t * D, p, rtol=1e-9) - (K - 1)) / t for D in directions])
