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
    adam / sign / muon  no decay, steps a with |a|^2 = D and a . w = 0 (sign-like): u' = u + eta^2 D
        => u_K = u_0 + D sum_k eta_k^2: memory rho_0^2 / (rho_0^2 + D sum eta^2)  (clock sum eta^2
        = b T_SGD).  Muon's step O sqrt(max(1, rows / cols)) (``numerics.optim``) has
        ||O||_F^2 = min(rows, cols), so D -> rows.  The displacement |w_K - w_0| <= sqrt(D) T_adapt
        is a bound only (steps in a fixed direction); the norm, which the claims measure, grows by
        the squares.  torch's Adam is sign-like only approximately: its elementwise normalisation
        is not orthogonal to w, and its momentum shrinks |a|^2 below D under noisy gradients.

In units of the initial norm (``units``: the clock X at which the law's memory is ``forgetting``
of X): sgd X = 2 tr Sigma T_SGD / rho_0^4 and adam X = D sum eta^2 / rho_0^2, memory 1 / (1 + X);
sgd + L2 and adamw X = 2 T_L2, heavy ball X = 2 T_L2 / (1 - beta), memory exp(-X).  A kernel
drawn sigma_w x He normal has rho_0^2 = 2 sigma_w^2 D / fan_in in expectation, so adam's
X = fan_in sum eta^2 / (2 sigma_w^2).  Where the law sums increments of rho^p (``power``: sgd 4,
adam 2) the realised X = rho_K^p / rho_0^p - 1 can be read off the norms (sgd: tr Sigma is not
known, so this is how its X is measured: ``numerics.metrics.radial_memory``).

Every law is derived here with sympy from its recursion (``derive``) and checked numerically on
simulated scale-invariant weights in tests/test_radial_laws.py.

Sources: Hoffer et al., "Norm matters" (2018); van Laarhoven (2017); Li & Arora (2020); Kunin et
al., "Neural Mechanics" (2021); Das et al. arXiv 2605.29152 (the clocks).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import sympy as sp
from implicitbias.theory import params
from implicitbias.theory.display import latex_block
from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import beta, coupled_l2, heavy_ball, lam

__all__ = ["RadialLaw", "derive", "LAWS", "u", "eta", "gamma", "D", "T", "X", "rho_0", "trace", "in_units",
           "memory_fraction"]

u, eta, gamma, D, T, X = sp.symbols("u eta gamma D T X", positive=True)
rho_0 = sp.Symbol("rho_0", positive=True)
trace = sp.Symbol(r"\operatorname{tr}\Sigma", positive=True)
LAWS = ("sgd", "sgd_l2", "heavy_ball_l2", "adamw", "adam")


@dataclass(frozen=True)
class RadialLaw:
    """A derived radial law: recursion u -> u', invariant increment, memory law, its clock in units
    of the initial norm (``units``, X as a function of T) and the memory as a function of X
    (``forgetting``), the power p of rho whose increments it sums (None: a decay law, whose
    equilibrium hides the initial norm's share), and the equilibrium."""

    name: str
    recursion: sp.Expr  # u_{k+1} as a function of u = u_k
    increment: sp.Expr  # leading per-step increment of the conserved-up-to-noise quantity
    memory: sp.Expr  # fraction of the initial contribution left, as a function of the clock T
    clock: str
    forgetting: sp.Expr  # the memory as a function of X
    units: sp.Expr  # X: the clock in units of the initial norm, solved from memory = forgetting(X)
    power: int | None = None
    equilibrium: sp.Expr | None = None

    def latex(self) -> str:
        """LaTeX of the recursion, the memory law, the clock's units and the equilibrium (``sympy.latex``)."""
        eq = rf"; u_* = {sp.latex(self.equilibrium)}" if self.equilibrium is not None else ""
        return (rf"u_{{k+1}} = {sp.latex(self.recursion)}; \text{{memory}} = {sp.latex(self.memory)}"
                rf" = {sp.latex(self.forgetting)}, X = {sp.latex(self.units)}{eq}")

    def _repr_latex_(self) -> str:
        return latex_block([self.latex()])


def _decay_rate_of(recursion: sp.Expr) -> sp.Expr:
    """-d/d eta log(du'/du)|_{eta=0}: the exponential rate (per unit sum eta) of the initial term."""
    factor = sp.diff(recursion, u).subs(gamma, 0).subs(D, 0)
    return sp.simplify(-sp.diff(sp.log(factor), eta).subs(eta, 0))


def _law(name, recursion, increment, memory, clock, forgetting, power=None, equilibrium=None) -> RadialLaw:
    """The law with its clock in units of the initial norm: X solved from memory(T) = forgetting(X)."""
    units = sp.solve(sp.Eq(forgetting, memory), X)
    if len(units) != 1:
        raise ValueError(f"law {name}: memory = forgetting(X) has {len(units)} solutions, not one")
    x = sp.simplify(sp.expand_log(units[0], force=True))  # log(exp(2 T / (1 - beta))) -> 2 T / (1 - beta)
    return RadialLaw(name, recursion, increment, memory, clock, forgetting, x, power, equilibrium)


@functools.cache
def derive(name: str) -> RadialLaw:
    """Derive the radial law ``name`` (one of ``LAWS``) from its one-step recursion (module docstring)."""
    params.choice("law", name, LAWS)
    diluted, decayed = 1 / (1 + X), sp.exp(-X)  # an added random walk dilutes u_0; a decay shrinks it
    if name == "sgd":
        rec = u + eta**2 * gamma**2 / u
        # rho^4 = u^2: its increment per step, to leading order in eta
        inc = sp.series(sp.expand(rec**2 - u**2), eta, 0, 3).removeO()
        # summing inc over steps with gamma^2 -> tr Sigma / b gives 2 tr Sigma T_SGD
        memory = rho_0**4 / (rho_0**4 + inc.subs(gamma**2, trace).subs(eta**2, T))
        return _law(name, rec, inc, memory, "T_SGD", diluted, power=4)
    if name == "sgd_l2":
        rec = (1 - eta * lam) ** 2 * u + eta**2 * gamma**2 / u
        rate = _decay_rate_of(rec)
        eq = sp.solve(sp.Eq(u, rec), u)[0]
        return _law(name, rec, rate, sp.exp(-rate / lam * T), "T_L2", decayed, equilibrium=sp.simplify(eq))
    if name == "heavy_ball_l2":
        flow = modified_flow(coupled_l2(heavy_ball()), 0)
        theta = flow.X[0]
        # radial part of f_0: the coefficient of theta with the loss gradient orthogonal (set to 0)
        drift = sp.diff(flow.terms[0][0], theta).subs(sp.Derivative(flow.losses[0], theta, 2), 0)
        rate = sp.simplify(-2 * drift)  # d u / dt = 2 theta . f_0 = -rate u
        return _law(name, u * (1 - eta * rate), rate, sp.exp(-rate / lam * T), "T_L2", decayed)
    if name == "adamw":
        rec = (1 - eta * lam) ** 2 * u + eta**2 * D
        rate = _decay_rate_of(rec)
        eq = sp.solve(sp.Eq(u, rec), u)[0]
        return _law(name, rec, rate, sp.exp(-rate / lam * T), "T_L2", decayed, equilibrium=sp.simplify(eq))
    rec = u + eta**2 * D
    inc = sp.expand(rec - u)  # u_K = u_0 + sum_k inc: the increments add, nothing multiplies u_0
    memory = rho_0**2 / (rho_0**2 + inc.subs(eta**2, T))  # T = sum eta_k^2
    return _law(name, rec, inc, memory, "sum eta^2", diluted, power=2)


_SYMBOLS = {"rho_0": rho_0, "D": D, "trace": trace, "beta": beta}


@functools.cache
def _units_function(name: str):
    """The lambdified X of law ``name`` and the names of its symbols besides T (in ``_SYMBOLS``)."""
    units = derive(name).units
    names = [k for k, v in _SYMBOLS.items() if v in units.free_symbols]
    return sp.lambdify([T, *(_SYMBOLS[k] for k in names)], units, "numpy"), names


def in_units(name: str, clock, **values) -> np.ndarray:
    """X of law ``name`` at clock value(s) ``clock`` (T_SGD, T_L2 or sum eta^2, the law's ``clock``),
    the law's other symbols by name: ``rho_0``, ``D``, ``trace`` (tr Sigma), ``beta``; arrays broadcast."""
    params.choice("law", name, LAWS)
    unknown = sorted(set(values) - set(_SYMBOLS))
    if unknown:
        raise params.ParameterError(f"values must name rho_0, D, trace or beta; got {unknown[0]!r}")
    f, names = _units_function(name)
    missing = [k for k in names if k not in values]
    if missing:
        raise params.ParameterError(f"law {name} needs {missing[0]} for its clock in units of the initial norm")
    return np.asarray(f(np.asarray(clock, dtype=float), *(np.asarray(values[k], dtype=float) for k in names)), dtype=float)


def memory_fraction(name: str, x) -> np.ndarray:
    """The memory law ``name`` implies at X = ``x`` (its ``forgetting``: 1 / (1 + X) or exp(-X))."""
    params.choice("law", name, LAWS)
    return np.asarray(sp.lambdify(X, derive(name).forgetting, "numpy")(np.asarray(x, dtype=float)), dtype=float)
