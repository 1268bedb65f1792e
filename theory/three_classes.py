"""K = 3: neural collapse is the global optimum of P(3, L) at every depth (a proof, checked by sympy).

P(K, L): minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p, p = 2/(L + 1) (L weight matrices, N = L + 1
factors), subject to the margins Zbar_kk - Zbar_ck >= 1 (c != k).  NC = I - 11^T/3 has two
singular values 1, so S_p(NC) = 2 = K - 1.

Theorem.  For every feasible Zbar in R^{3 x 3}, sigma_1 sigma_2 >= 1.  Hence for every p > 0
(every real depth L >= 1, and the p -> 0 limit)

    S_p(Zbar) >= sigma_1^p + sigma_2^p >= 2 (sigma_1 sigma_2)^(p/2) >= 2 = S_p(NC)      (AM-GM),

so NC is a global optimum of P(3, L) for every L (uniquely: equality forces sigma_1 = sigma_2 = 1
and equality in every step below).

Proof.  Column-centring (P = I - 11^T/3) changes no margin and shrinks every singular value, so
take Zbar centred: its columns z_0, z_1, z_2 lie in the plane 1^perp, and sigma_3 = 0.
1. Parametrisation.  With a_k = e_k - 1/3 (the columns of NC), every feasible centred column is
   z_k = a_k - s_k a_{k-1} - t_k a_{k+1} (indices mod 3) with s_k = g_{k-1,k} - 1 >= 0 and
   t_k = g_{k+1,k} - 1 >= 0, where g_ck = Zbar_kk - Zbar_ck are the margins (``margins_hold``).
2. Cauchy-Binet / Lagrange.  sigma_1^2 sigma_2^2 is the second elementary symmetric function of
   the eigenvalues of Zbar^T Zbar, the sum of its 2 x 2 principal minors
   |z_j|^2 |z_k|^2 - <z_j, z_k>^2 = |z_j x z_k|^2; the cross product of two vectors of 1^perp is
   parallel to 1, so |z_j x z_k| = |det[1, z_j, z_k]| / sqrt(3).  With X_k = det[1, z_k, z_{k+1}]:
   sigma_1^2 sigma_2^2 = (X_0^2 + X_1^2 + X_2^2) / 3 (``gram_identity``).  At NC every X_k = 1.
3. Two factorisations (``factorisations``), with d_k = s_k - t_k:
   X_k = (1 + t_k)(1 + t_{k+1}) + d_k (1 + s_{k+1}) = (1 + s_k)(1 + s_{k+1}) - d_{k+1} (1 + t_k).
   So X_k >= 1 unless d_k < 0 < d_{k+1}; around a cycle of three this happens for one k at most.
4. If no X_k < 1, sum X_k^2 >= 3.  If X_k < 1 (so d_k < 0 < d_{k+1}), with a = t_k, b = s_{k+1}
   (``bounds``): X_{k+1} >= 1 + b, X_{k+2} >= 1 + a, X_k >= 1 - a b.  If a b <= 1 then
   X_k^2 >= (1 - a b)^2 and sum X^2 >= (1 - ab)^2 + (1 + a)^2 + (1 + b)^2
   = 3 + 2a + 2b + (a - b)^2 + a^2 b^2 >= 3 (``final_identity``); if a b > 1 then a + b > 2 and
   (1 + a)^2 + (1 + b)^2 > 6.  Either way sum X_k^2 >= 3, i.e. sigma_1 sigma_2 >= 1.  QED.

(Rank 1 is excluded by the theorem itself: it would make sigma_1 sigma_2 = 0.)  Each algebraic
step is an identity in the six nonnegative parameters that sympy verifies exactly (``proof``);
the case analysis is the text above.  Source: derived here for this package (Spec A, section 3
leaves K = 3 open at L >= 2; Theorem 3.1 starts at K = 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

__all__ = ["Proof", "proof", "columns", "cross_terms", "S", "T"]

S = sp.symbols("s0:3", nonnegative=True)
T = sp.symbols("t0:3", nonnegative=True)


def _a(k: int) -> sp.Matrix:
    return sp.Matrix([sp.Integer(1 if i == k % 3 else 0) - sp.Rational(1, 3) for i in range(3)])


def columns() -> list[sp.Matrix]:
    """The feasible centred columns z_k = a_k - s_k a_{k-1} - t_k a_{k+1} (step 1)."""
    return [_a(k) - S[k] * _a(k - 1) - T[k] * _a(k + 1) for k in range(3)]


def cross_terms() -> list[sp.Expr]:
    """X_k = det[1, z_k, z_{k+1}] (step 2), expanded polynomials in s, t."""
    z = columns()
    one = sp.ones(3, 1)
    return [sp.expand(sp.Matrix.hstack(one, z[k], z[(k + 1) % 3]).det()) for k in range(3)]


@dataclass(frozen=True)
class Proof:
    """Each checked step of the proof (True when sympy verified the identity)."""

    margins_hold: bool
    gram_identity: bool
    nc_value: bool
    factorisations: bool
    bounds: bool
    final_identity: bool

    @property
    def holds(self) -> bool:
        return all(vars(self).values())


def proof() -> Proof:
    """Verify every identity of the proof in the module docstring (exact, sympy)."""
    z = columns()
    X = cross_terms()
    # step 1: margins of column k are 1 + s_k (against class k - 1) and 1 + t_k (against k + 1)
    margins_hold = all(
        sp.simplify(z[k][k] - z[k][(k - 1) % 3] - (1 + S[k])) == 0
        and sp.simplify(z[k][k] - z[k][(k + 1) % 3] - (1 + T[k])) == 0
        and sp.simplify(sum(z[k])) == 0
        for k in range(3)
    )
    # step 2: sigma_1^2 sigma_2^2 = e_2(eigenvalues of Z^T Z) = sum of 2 x 2 principal minors
    Z = sp.Matrix.hstack(*z)
    G = Z.T * Z
    e2 = sum(G[i, i] * G[j, j] - G[i, j] ** 2 for i in range(3) for j in range(i + 1, 3))
    gram_identity = sp.expand(3 * e2 - sum(x**2 for x in X)) == 0
    nc_value = all(x.subs({**{s: 0 for s in S}, **{t: 0 for t in T}}) == 1 for x in X)
    # step 3: two factorisations of each X_k
    d = [S[k] - T[k] for k in range(3)]
    factorisations = all(
        sp.expand(X[k] - ((1 + T[k]) * (1 + T[(k + 1) % 3]) + d[k] * (1 + S[(k + 1) % 3]))) == 0
        and sp.expand(X[k] - ((1 + S[k]) * (1 + S[(k + 1) % 3]) - d[(k + 1) % 3] * (1 + T[k]))) == 0
        for k in range(3)
    )
    # step 4: the three lower bounds when X_k < 1, as identities with the slack written out
    bounds = True
    for k in range(3):
        k1, k2 = (k + 1) % 3, (k + 2) % 3
        bounds &= sp.expand(X[k1] - (1 + S[k1]) - ((1 + T[k1]) * T[k2] + d[k1] * S[k2])) == 0  # >= 0 as d_{k+1} > 0
        bounds &= sp.expand(X[k2] - (1 + T[k]) - (S[k2] * (1 + S[k]) - d[k] * T[k2])) == 0  # >= 0 as d_k < 0
        bounds &= sp.expand(X[k] - (1 - T[k] * S[k1]) - (S[k] + T[k1] + S[k] * S[k1] + T[k] * T[k1])) == 0
    a, b = sp.symbols("a b", nonnegative=True)
    final_identity = sp.expand((1 - a * b) ** 2 + (1 + a) ** 2 + (1 + b) ** 2 - 3
                               - (2 * a + 2 * b + (a - b) ** 2 + a**2 * b**2)) == 0
    return Proof(margins_hold, gram_identity, nc_value, factorisations, bool(bounds), final_identity)
