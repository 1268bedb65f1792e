"""Linearisation of the balanced singular-value flow at the neural-collapse ray (Theorem 4.3).

Balanced system in log coordinates v_j = log S_j (``per_mode_system(L, balanced=True)``; L counts
weight matrices, N = L + 1 factors):  dv_j/dt = F(v_j, g_j) = N/(K sqrt n) e^{(1-2/N) v_j} (1 - g_j).
On the NC ray all S_j = S (j = 1..K-1), the logits are Zbar = (S/sqrt n)(I - 11^T/K) with margin
gamma = S / sqrt(n), and the softmax puts p_0 = 1/(1 + (K-1)e^{-gamma}) on the true class and
q = e^{-gamma}/(1 + (K-1)e^{-gamma}) on each other class, so g = p_0 - q and 1 - g = K q.

The coupling derivative dg_j/dv_k = Cov_p(chi_j, chi_k) S/(K sqrt n) with Cov_p(chi_j, chi_k) =
g_{j XOR k} - g_j g_k: 1 - g^2 on the diagonal and g - g^2 off it.  So the Jacobian on the ray is
a I + b (11^T - I): the radial eigenvalue a + (K-2) b along (1, ..., 1) and the (K-2)-fold
transverse eigenvalue (perturbations with sum 0, i.e. leaving the NC direction)

    mu_perp = a - b = N K q S^{(N-2)/N} / (K sqrt n) * ( (N-2)/N - gamma/K )   (sympy-derived below)

Hence the NC direction is unstable exactly for margins gamma < gamma* = K (L-1)/(L+1), i.e. for
logit singular values S < sigma*(K, L) = K sqrt(n) (L-1)/(L+1): no such region for L = 1, and it
grows with L towards K sqrt(n).  Source: Theorem 4.3 of Garrod, Keating, Thrampoulidis (arXiv
2605.23087) states the instability; the eigenvalues and the threshold are derived here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp
from implicitbias.theory import params
from implicitbias.theory.display import latex_block
from implicitbias.theory.spectral_ode import (
    K_sym,
    check_depth,
    g_sym,
    n_sym,
    per_mode_system,
)

__all__ = ["RayLinearisation", "instability_threshold", "ray_linearisation", "transverse_eigenvalue"]

gamma_sym = sp.Symbol("gamma", positive=True)


@dataclass
class RayLinearisation:
    """Eigenvalues of the log-coordinate Jacobian on the NC ray, as sympy functions of gamma, K, n."""

    L: int
    transverse: sp.Expr
    radial: sp.Expr
    threshold_margin: sp.Expr  # gamma* where the transverse eigenvalue changes sign (0: never unstable)
    threshold_singular_value: sp.Expr  # sigma* = sqrt(n) gamma*

    def latex(self) -> str:
        """LaTeX of the transverse eigenvalue and the threshold margin (``sympy.latex``)."""
        return rf"\mu_\perp = {sp.latex(self.transverse)},\quad \gamma^* = {sp.latex(self.threshold_margin)}"

    def _repr_latex_(self) -> str:
        return latex_block([self.latex()])


@lru_cache(maxsize=64)
def ray_linearisation(L: int) -> RayLinearisation:
    """Derive the radial and transverse eigenvalues at the NC ray for depth L (N = L + 1 factors)."""
    system = per_mode_system(check_depth(L), K_sym, balanced=True)
    v = system.log_state[0]
    F = system.log_rhs[0]
    S = sp.sqrt(n_sym) * gamma_sym
    p0 = 1 / (1 + (K_sym - 1) * sp.exp(-gamma_sym))
    q = sp.exp(-gamma_sym) / (1 + (K_sym - 1) * sp.exp(-gamma_sym))
    g = p0 - q
    on_ray = {v: sp.log(S), g_sym: g}
    dF_dv = sp.diff(F, v).xreplace(on_ray)
    dF_dg = sp.diff(F, g_sym).xreplace(on_ray)
    scale = S / (K_sym * sp.sqrt(n_sym))
    diag = dF_dv + dF_dg * scale * (1 - g**2)
    off = dF_dg * scale * (g - g**2)
    # Factor out the (positive) radial growth rate F on the ray: the sign of each eigenvalue is
    # that of a simple rational function of gamma, whose root sympy finds at once.
    rate = sp.simplify(F.xreplace(on_ray))
    transverse_factor = sp.simplify((diag - off) / rate)
    radial_factor = sp.simplify((diag + (K_sym - 2) * off) / rate)
    roots = sp.solve(sp.Eq(transverse_factor, 0), gamma_sym)
    gamma_star = roots[0] if roots else sp.Integer(0)
    return RayLinearisation(
        system.L,
        rate * transverse_factor,
        rate * radial_factor,
        sp.simplify(gamma_star),
        sp.simplify(sp.sqrt(n_sym) * gamma_star),
    )


def transverse_eigenvalue(margin, K: int, L: int, n: int = 1) -> np.ndarray:
    """mu_perp at NC-ray margin(s) ``margin`` (numpy), for K classes, depth L (N = L + 1), n per class."""
    K = params.integer("K", K, minimum=2)
    n = params.integer("n", n, minimum=1)
    margin = np.asarray(margin, dtype=float)
    if not np.isfinite(margin).all() or (margin <= 0).any():
        raise params.ParameterError("margin must be finite and > 0")
    f = sp.lambdify(gamma_sym, ray_linearisation(L).transverse.subs({K_sym: K, n_sym: n}), "numpy")
    return np.asarray(f(margin), dtype=float)


def instability_threshold(K: int, L: int, n: int = 1) -> float:
    """sigma*(K, L): logit singular value below which the NC ray is transversally unstable (0 for L = 1).

    L counts weight matrices (N = L + 1 factors); sigma* = sqrt(n) gamma*, gamma* the margin threshold.
    """
    K = params.integer("K", K, minimum=2)
    n = params.integer("n", n, minimum=1)
    return float(ray_linearisation(L).threshold_singular_value.subs({K_sym: K, n_sym: n}))
