"""Representation cost of a product of N factors (Spec A, section 1), derived with sympy.

Depth convention: L counts weight matrices; the free features are one more factor, so the logits
Z = W_L ... W_1 H are a product of N = L + 1 factors.

    R_N(Z) = min { 1/2 sum_{l=1}^N ||F_l||_F^2 : F_N ... F_1 = Z } = (N/2) sum_i sigma_i(Z)^(2/N)

Derivation (balanced diagonal factorisations).  Both sides are invariant under Z -> U Z V^T with
U, V orthogonal, so take Z = diag(sigma) and diagonal factors F_l = diag(f_{l,1}, f_{l,2}, ...).
The cost splits over singular values: for each sigma > 0,

    c_N(sigma) = min { 1/2 sum_l f_l^2 : prod_l f_l = sigma }.

Writing f_l = sigma^(1/N) exp(u_l) with sum_l u_l = 0 parametrises every positive factorisation;
the cost 1/2 sigma^(2/N) sum_l exp(2 u_l) is strictly convex in u and its gradient vanishes on
the constraint set only at u = 0 (the balanced point f_l = sigma^(1/N)), hence

    c_N(sigma) = (N/2) sigma^(2/N).

``stationary_factors`` solves the Lagrange system of the constrained problem with sympy for a
concrete N (all stationary points with positive factors), an independent route to the same value.
Source: the standard variational form of Schatten quasi-norms (e.g. Shang, Liu, Cheng 2016;
Dai et al. 2021 for deep linear networks); Spec A, section 1.
"""

from __future__ import annotations

import sympy as sp

from implicitbias.theory import params

__all__ = [
    "sigma",
    "N",
    "balanced_cost",
    "log_parametrised_cost",
    "stationary_factors",
    "representation_cost",
    "schatten_exponent",
]

sigma = sp.Symbol("sigma", positive=True)
N = sp.Symbol("N", positive=True, integer=True)


def schatten_exponent(L) -> sp.Expr:
    """p = 2 / N = 2 / (L + 1) as an exact sympy number (L counts weight matrices, N = L + 1).

    L may be an integer, a sympy number, or a float (read as the decimal it prints as).
    """
    if isinstance(L, sp.Basic):
        if not (L.is_real and L >= 1):
            raise params.ParameterError(f"L must be a finite number >= 1, got {L}")
        return sp.Integer(2) / (L + 1)
    value = params.real("L", L, minimum=1)
    return sp.Rational(2, int(value) + 1) if value.is_integer() else 2 / (sp.Rational(repr(value)) + 1)


def log_parametrised_cost(n: int) -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    """1/2 sum_l f_l^2 with f_l = sigma^(1/n) exp(u_l), u_n = -(u_1 + ... + u_{n-1}).

    Returns the cost and the free symbols (u_1, ..., u_{n-1}); every positive factorisation of
    sigma into n factors is reached exactly once.
    """
    n = params.integer("N", n, minimum=1, maximum=64)
    u = sp.symbols(f"u1:{n}", real=True)
    exps = list(u) + [-sum(u, sp.Integer(0))]
    cost = sp.Rational(1, 2) * sum((sigma ** sp.Rational(1, n) * sp.exp(e)) ** 2 for e in exps)
    return sp.simplify(cost), tuple(u)


def balanced_cost(n: int | None = None) -> sp.Expr:
    """c_N(sigma) derived from the log parametrisation: the value at its unique stationary point.

    With ``n`` given, the cost of ``log_parametrised_cost(n)`` is a sum of exponentials of
    linear forms, hence convex in u; sympy checks that its gradient vanishes exactly at u = 0 and
    that the Hessian there is positive definite (so u = 0 is the unique global minimum), and
    returns the value there.  Without ``n`` the general expression (N/2) sigma^(2/N).
    """
    if n is None:
        return N / 2 * sigma ** (2 / N)
    cost, u = log_parametrised_cost(n)
    origin = {ui: 0 for ui in u}
    if any(sp.simplify(sp.diff(cost, ui).subs(origin)) != 0 for ui in u):
        raise ArithmeticError("the balanced point is not stationary")
    if u and not sp.simplify(sp.hessian(cost, u).subs(origin)).is_positive_definite:
        raise ArithmeticError("the balanced point is not a strict minimum")
    return sp.simplify(cost.subs(origin))


def stationary_factors(n: int) -> list[dict[sp.Symbol, sp.Expr]]:
    """Positive solutions of the Lagrange system of min 1/2 sum f_l^2 s.t. prod f_l = sigma.

    Unknowns f_1..f_n > 0 and multiplier lam: f_l = lam prod_{m != l} f_m, prod_l f_l = sigma.
    """
    n = params.integer("N", n, minimum=1, maximum=3)
    f = sp.symbols(f"f1:{n + 1}", positive=True)
    lam = sp.Symbol("lam", positive=True)
    prod = sp.Mul(*f)
    eqs = [fl - lam * prod / fl for fl in f] + [prod - sigma]
    return sp.solve(eqs, list(f) + [lam], dict=True)


def representation_cost(singular_values, n) -> sp.Expr:
    """(N/2) sum_i sigma_i^(2/N) for given singular values and N = L + 1 factors."""
    n = sp.sympify(n)
    return sum((balanced_cost().subs({N: n, sigma: s}) for s in singular_values), sp.Integer(0))
