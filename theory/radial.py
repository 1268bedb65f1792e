"""Radial dynamics of a scale-invariant weight and the forgetting clocks they imply.

A kernel w followed by BatchNorm has L(c w) = L(w) for c > 0, so its gradient is orthogonal to
w and scales as 1/rho (rho = ||w||): g = g_hat / rho with gamma = ||g_hat|| the gradient norm at
unit scale (Hoffer et al. 2018; van Laarhoven 2017).  With u = rho^2, step eta_k, coupled decay
lambda (g -> g + lambda w), heavy-ball momentum beta, and D the number of entries of w:

    sgd                 u' = u + eta^2 gamma^2 / u
        => u'^2 = u^2 + 2 eta^2 gamma^2 + O(eta^4):   rho_K^4 = rho_0^4 + 2 sum_k eta_k^2 gamma_k^2
        with minibatch noise E gamma^2 = G^2 + tr Sigma / b the noise part is 2 tr Sigma T_SGD:
        memory rho_0^4 / rho_K^4 = 1 / (1 + 2 tr Sigma T_SGD / rho_0^4)          (clock T_SGD)
    sgd + coupled L2    u' = (1 - eta lambda)^2 u + eta^2 gamma^2 / u
        => initial norm weighted by prod_k (1 - eta_k lambda)^2 = exp(-2 T_L2 + O(eta lambda T_L2)),
        equilibrium u*^2 = eta gamma^2 / (lambda (2 - eta lambda)) ~ eta gamma^2 / (2 lambda),
        independent of rho_0                                                       (clock T_L2)
    heavy ball + L2     the modified flow's leading term f_0 = -(g + lambda w) / (1 - beta) gives
        d u / dt = -2 lambda u / (1 - beta): memory exp(-2 T_L2 / (1 - beta))      (T_L2 / (1-beta))
    adamw (decoupled)   w' = (1 - eta lambda) w - eta a with |a_j| ~ 1 (sign-like, a . w ~ 0):
        u' = (1 - eta lambda)^2 u + eta^2 D: memory exp(-2 T_L2), equilibrium u* ~ eta D / (2 lambda)
    adam / sign / muon  no decay: |w_K - w_0| <= sqrt(D) sum_k eta_k = sqrt(D) T_adapt (Muon: D ->
        min(rows, cols), ||polar||_F^2 = rank); the initial scale rho_0 = sigma_w ||W_He|| is
        overwritten once sqrt(D) T_adapt >> rho_0                                  (clock T_adapt)

Every law is derived here with sympy from its recursion (``derive``) and checked numerically on
simulated scale-invariant weights in tests/test_radial_laws.py.

Sources: Hoffer et al., "Norm matters" (2018); van Laarhoven (2017); Li & Arora (2020); Kunin et
al., "Neural Mechanics" (2021); Das et al. arXiv 2605.29152 (the clocks).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from implicitbias.theory import params
from implicitbias.theory.display import latex_block
from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import coupled_l2, heavy_ball, lam

__all__ = ["RadialLaw", "derive", "LAWS", "u", "eta", "gamma", "D", "T"]

u, eta, gamma, D, T = sp.symbols("u eta gamma D T", positive=True)
LAWS = ("sgd", "sgd_l2", "heavy_ball_l2", "adamw", "adam")


@dataclass
class RadialLaw:
    """A derived radial law: recursion u -> u', invariant increment, memory law, equilibrium."""

    name: str
    recursion: sp.Expr  # u_{k+1} as a function of u = u_k
    increment: sp.Expr  # leading per-step increment of the conserved-up-to-noise quantity
    memory: sp.Expr  # fraction of the initial contribution left, as a function of the clock T
    clock: str
    equilibrium: sp.Expr | None = None

    def latex(self) -> str:
        eq = rf"; u_* = {sp.latex(self.equilibrium)}" if self.equilibrium is not None else ""
        return rf"u_{{k+1}} = {sp.latex(self.recursion)}; \text{{memory}} = {sp.latex(self.memory)}{eq}"

    def _repr_latex_(self) -> str:
        return latex_block([self.latex()])


def _decay_rate_of(recursion: sp.Expr) -> sp.Expr:
    """-d/d eta log(du'/du)|_{eta=0}: the exponential rate (per unit sum eta) of the initial term."""
    factor = sp.diff(recursion, u).subs(gamma, 0).subs(D, 0)
    return sp.simplify(-sp.diff(sp.log(factor), eta).subs(eta, 0))


def derive(name: str) -> RadialLaw:
    """Derive the radial law ``name`` (one of ``LAWS``) from its one-step recursion."""
    params.choice("law", name, LAWS)
    if name == "sgd":
        rec = u + eta**2 * gamma**2 / u
        # rho^4 = u^2: its increment per step, to leading order in eta
        inc = sp.series(sp.expand(rec**2 - u**2), eta, 0, 3).removeO()
        rho0_4 = sp.Symbol("rho_0", positive=True) ** 4
        trace = sp.Symbol(r"\operatorname{tr}\Sigma", positive=True)
        # summing inc over steps with gamma^2 -> tr Sigma / b gives 2 tr Sigma T_SGD
        memory = rho0_4 / (rho0_4 + inc.subs(gamma**2, trace).subs(eta**2, T))
        return RadialLaw(name, rec, inc, memory, "T_SGD")
    if name == "sgd_l2":
        rec = (1 - eta * lam) ** 2 * u + eta**2 * gamma**2 / u
        rate = _decay_rate_of(rec)
        eq = sp.solve(sp.Eq(u, rec), u)[0]
        return RadialLaw(name, rec, rate, sp.exp(-rate / lam * T), "T_L2", sp.simplify(eq))
    if name == "heavy_ball_l2":
        flow = modified_flow(coupled_l2(heavy_ball()), 0)
        theta = flow.X[0]
        # radial part of f_0: the coefficient of theta with the loss gradient orthogonal (set to 0)
        drift = sp.diff(flow.terms[0][0], theta).subs(sp.Derivative(flow.losses[0], theta, 2), 0)
        rate = sp.simplify(-2 * drift)  # d u / dt = 2 theta . f_0 = -rate u
        return RadialLaw(name, u * (1 - eta * rate), rate, sp.exp(-rate / lam * T), "T_L2")
    if name == "adamw":
        rec = (1 - eta * lam) ** 2 * u + eta**2 * D
        rate = _decay_rate_of(rec)
        eq = sp.solve(sp.Eq(u, rec), u)[0]
        return RadialLaw(name, rec, rate, sp.exp(-rate / lam * T), "T_L2", sp.simplify(eq))
    rec = u + eta**2 * D
    rho0 = sp.Symbol("rho_0", positive=True)
    # displacement bound sqrt(D) sum eta against the initial norm
    return RadialLaw(name, rec, sp.sqrt(D) * eta, rho0 / (rho0 + sp.sqrt(D) * T), "T_adapt")
