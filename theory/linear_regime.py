"""Near-origin ("linearised") regime of the balanced singular-value flow (Theorem 4.4).

At the origin the logits vanish, p is uniform and g_j = <chi_j, p> = 0 for j != 0, with
g_j = S_j/(K sqrt n) + O(S^2).  Dropping g from the balanced system of
``implicitbias.theory.spectral_ode`` (L counts weight matrices, N = L + 1 factors) gives the
growth law, to first order in S,

    dS/dt = c S^alpha,   c = N / (K sqrt n),   alpha = 2 - 2/N = 2L/(L+1),

solved here by sympy (separation of variables):

    L = 1 (alpha = 1):  S(t) = S_0 e^{c t}        -> every mode has the same relative rate c,
                                                     ratios S_i/S_j are constant;
    L > 1 (alpha > 1):  S(t) = (S_0^{1-alpha} - (alpha-1) c t)^{-1/(alpha-1)},
                        blow-up at T*(S_0) = S_0^{1-alpha} / ((alpha - 1) c)
                                           = K sqrt(n) / (L-1) * S_0^{-(L-1)/(L+1)},

so the relative rate c S^{alpha-1} grows with S: larger singular values grow faster and blow up
first ("rich get richer").  The true flow leaves the linear regime before T* (g_j -> 1 saturates
growth), so T* is the time scale on which the spectrum separates.  Source: Theorem 4.4 of
Garrod, Keating, Thrampoulidis (arXiv 2605.23087); the closed forms are derived here.
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

__all__ = ["GrowthLaw", "blowup_time", "growth_law", "linear_solution", "relative_rate"]

t_sym = sp.Symbol("t", nonnegative=True)
S0_sym = sp.Symbol("S_0", positive=True)


@dataclass
class GrowthLaw:
    """dS/dt = rate (sympy, in S), its solution S(t) from S_0 and the blow-up time (oo for L = 1)."""

    L: int
    S: sp.Symbol
    rate: sp.Expr
    solution: sp.Expr
    blowup: sp.Expr

    def latex(self) -> str:
        """LaTeX of the rate, the solution and the blow-up time (``sympy.latex``)."""
        return rf"\dot S = {sp.latex(self.rate)},\quad S(t) = {sp.latex(self.solution)},\quad T^* = {sp.latex(self.blowup)}"

    def _repr_latex_(self) -> str:
        return latex_block([self.latex()])


@lru_cache(maxsize=64)
def growth_law(L: int) -> GrowthLaw:
    """The near-origin law for depth L (N = L + 1 factors), solved by separation of variables."""
    system = per_mode_system(check_depth(L), balanced=True)
    S = system.layer_values[0]
    rate = system.rhs[0].xreplace({g_sym: 0})
    St = sp.Symbol("S_t", positive=True)
    elapsed = sp.integrate(1 / rate, (S, S0_sym, St))  # time to go from S_0 to S_t
    blowup = sp.limit(elapsed, St, sp.oo)
    if system.L == 1:
        solution = sp.solve(sp.Eq(elapsed, t_sym), St)[0]
    else:  # elapsed is linear in w = S_t^(1 - alpha): solve for w, the real branch is unique
        power = 1 - sp.diff(rate, S) * S / rate
        w = sp.Symbol("w", positive=True)
        linear = sp.powsimp(sp.expand(elapsed.xreplace({St: w ** (1 / power)})), force=True)
        solution = sp.solve(sp.Eq(linear, t_sym), w)[0] ** (1 / power)
    return GrowthLaw(system.L, S, rate, sp.simplify(solution), sp.simplify(blowup))


def _numeric(expr: sp.Expr, K: int, n: int):
    K = params.integer("K", K, minimum=2)
    n = params.integer("n", n, minimum=1)
    return expr.subs({K_sym: K, n_sym: n})


def _positive(name: str, value) -> np.ndarray:
    x = np.asarray(value, dtype=float)
    if not np.isfinite(x).all() or (x <= 0).any():
        raise params.ParameterError(f"{name} must be finite and > 0")
    return x


def linear_solution(S0, t, K: int, L: int, n: int = 1) -> np.ndarray:
    """S(t) of the growth law from S_0 (broadcast; nan after blow-up).  L: weight matrices, N = L + 1."""
    S0 = _positive("S0", S0)
    t = np.asarray(t, dtype=float)
    f = sp.lambdify((S0_sym, t_sym), _numeric(growth_law(L).solution, K, n), "numpy")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(t < blowup_time(S0, K, L, n), np.asarray(f(S0, t), dtype=float), np.nan)


def blowup_time(S0, K: int, L: int, n: int = 1) -> np.ndarray:
    """T*(S_0) of the growth law (inf for L = 1).  L counts weight matrices, N = L + 1 factors."""
    S0 = _positive("S0", S0)
    expr = _numeric(growth_law(L).blowup, K, n)
    if expr == sp.oo:
        return np.full_like(S0, np.inf)
    return np.asarray(sp.lambdify(S0_sym, expr, "numpy")(S0), dtype=float)


def relative_rate(S, K: int, L: int, n: int = 1) -> np.ndarray:
    """(dS/dt)/S = c S^(alpha-1) of the growth law: constant for L = 1, increasing in S for L > 1."""
    S = _positive("S", S)
    law = growth_law(L)
    return np.asarray(sp.lambdify(law.S, _numeric(law.rate / law.S, K, n), "numpy")(S), dtype=float) * np.ones_like(S)
