"""Exact unit-margin objectives of the competing codes of P(K, L), as sympy expressions.

Problem (Spec A, section 1).  Depth L counts weight matrices; N = L + 1 factors including the
features, p = 2 / (L + 1).  P(K, L): minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p over Zbar in
R^{K x K} subject to Zbar_kk - Zbar_ck >= 1 (c != k).  Adding a constant to a column leaves every
margin unchanged and the column-centring projection P = I - 11^T/K can only shrink singular
values, so every code below is given column-centred, scaled to minimum margin exactly 1.

- NC (simplex ETF): Zbar = I - 11^T/K, K - 1 singular values 1:           S_p = K - 1.
- Regular K-gon (rank 2, K >= 3): Zbar_ck = a cos(2 pi (c - k)/K); the circulant has the two
  non-zero eigenvalues K a / 2 (frequencies +-1); the smallest margin is a (1 - cos(2 pi/K)), so
  a = 1 / (1 - cos(2 pi / K)) = 1 / (2 sin^2(pi/K)) and

      S_p = 2 (K / (4 sin^2(pi/K)))^p.

- Cross-polytope, K = 2m >= 4 even (rank m): classes 2i, 2i+1 are +-e_i; Zbar = V V^T with V the
  K x m matrix of rows +-e_i: margin 1 to the K - 2 orthogonal classes, 2 to the antipode, and
  V^T V = 2 I_m, so m singular values 2:                                    S_p = (K/2) 2^p.
  In the symmetric family Zbar = a I + b J + c 11^T (J swaps partners) the objective after
  centring is m |a - b|^p + (m - 1) |a + b|^p with a >= 1, a - b >= 1; it is concave in b on
  [-a, 0] so the optimum is an end point: b = -a = -1 (this code) or b = 0 (NC).
- Cross-polytope, K = 2m + 1 >= 3 odd (rank m + 1): the m antipodal pairs as above plus a singleton
  class e_{m+1}.  Column-centring changes only the singleton's column, to e_K - 1/K, which is
  orthogonal to the pairs' column space (antisymmetric vectors), so the singular values are
  2 (m times) and ||e_K - 1/K|| = sqrt((K - 1)/K):
                                      S_p = ((K - 1)/2) 2^p + ((K - 1)/K)^(p/2).

Exact threshold depths (the real L where a code ties NC): even cross-polytope
L* = 2 log 2 / log(2 (K - 1)/K) - 1; K-gon L* = 2 log(K / (4 sin^2(pi/K))) / log((K - 1)/2) - 1;
odd cross-polytope: the root of a transcendental equation, isolated in a certified bracket.
Source: Spec A, sections 1-3 (codes); derivations above.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from implicitbias.theory import params
from implicitbias.theory.representation_cost import schatten_exponent

__all__ = [
    "K",
    "p",
    "STRUCTURES",
    "objective",
    "objective_at",
    "threshold_depth",
    "compare_with_nc",
    "rank",
    "limit_objective",
]

K = sp.Symbol("K", positive=True, integer=True)
p = sp.Symbol("p", positive=True)

STRUCTURES = ("nc", "kgon", "cross_polytope")


def objective(structure: str, parity: str | None = None) -> sp.Expr:
    """Unit-margin S_p of a code as a sympy expression in K and p = 2/(L + 1).

    ``parity`` ("even" or "odd") is required for the cross-polytope.
    """
    params.choice("structure", structure, STRUCTURES)
    if structure == "nc":
        return K - 1
    if structure == "kgon":
        return 2 * (K / (4 * sp.sin(sp.pi / K) ** 2)) ** p
    params.choice("parity", parity, ("even", "odd"))
    if parity == "even":
        return K / 2 * 2**p
    return (K - 1) / 2 * 2**p + ((K - 1) / K) ** (p / 2)


def limit_objective(structure: str, parity: str | None = None) -> tuple[sp.Expr, sp.Expr]:
    """The L -> infinity objective of a code: (rank, sum_i log sigma_i over its non-zero sigma_i).

    (N/2) S_{2/N}(Z) = (N/2) rank(Z) + sum log sigma_i + O(1/N) (Spec A, Theorem 3.2), so codes
    compare by rank first, then by sum log sigma.  From the spectra above: NC (K - 1, 0);
    K-gon (2, 2 log(K / (4 sin^2(pi/K)))); cross-polytope even (K/2, (K/2) log 2), odd
    ((K + 1)/2, ((K - 1)/2) log 2 + log((K - 1)/K) / 2).
    """
    params.choice("structure", structure, STRUCTURES)
    if structure == "nc":
        return K - 1, sp.Integer(0)
    if structure == "kgon":
        return sp.Integer(2), 2 * sp.log(K / (4 * sp.sin(sp.pi / K) ** 2))
    params.choice("parity", parity, ("even", "odd"))
    if parity == "even":
        return K / 2, K / 2 * sp.log(2)
    return (K + 1) / 2, (K - 1) / 2 * sp.log(2) + sp.log((K - 1) / K) / 2


def _parity(k: int) -> str:
    return "even" if k % 2 == 0 else "odd"


def _check_cell(structure: str, k: int) -> int:
    params.choice("structure", structure, STRUCTURES)
    k = params.integer("K", k, minimum=2, maximum=100_000)
    if structure != "nc" and k < 3:
        raise params.ParameterError(f"K must be an integer >= 3 for the {structure} code, got {k}")
    return k


def rank(structure: str, k: int) -> int:
    """Rank of the code's Zbar: NC K - 1, K-gon 2, cross-polytope ceil(K/2) (K >= 3 for both)."""
    k = _check_cell(structure, k)
    return {"nc": k - 1, "kgon": 2, "cross_polytope": (k + 1) // 2}[structure]


def objective_at(structure: str, k: int, L) -> sp.Expr:
    """Exact S_p of the unit-margin code at K = k and depth L (L weight matrices, p = 2/(L+1))."""
    k = _check_cell(structure, k)
    parity = _parity(k) if structure == "cross_polytope" else None
    return objective(structure, parity).subs({K: k, p: schatten_exponent(L)})


def compare_with_nc(structure: str, k: int, L) -> int:
    """Exact sign of S_p(code) - S_p(NC): -1 (code strictly better), 0 (tie), +1 (worse).

    L counts weight matrices (N = L + 1).  The difference is an algebraic number (a sum of
    rational powers of rationals and of sin(pi/K)); its sign is read from sympy's
    error-controlled ``evalf`` at 60 digits when the value is clearly non-zero, and a zero is
    decided by exact simplification (e.g. the 3-gon is NC).
    """
    diff = objective_at(structure, k, L) - objective_at("nc", k, L)
    value = diff.evalf(60)
    if value.is_Number and abs(value) > sp.Float("1e-45", 60):
        return -1 if value < 0 else 1
    if sp.simplify(diff) == 0:
        return 0
    raise ArithmeticError(f"sympy could not decide the sign of {diff}")


def threshold_depth(structure: str, k: int, digits: int = 30) -> sp.Expr:
    """The real depth L* at which the code ties NC; it beats NC exactly for L > L*.

    Closed form for the K-gon and the even cross-polytope; for the odd cross-polytope the root of
    f(p) = S_p(code) - (K - 1) in p in (0, 1), found by ``mpmath.findroot`` (bisection) at
    ``digits`` digits inside a bracket whose end signs sympy checks exactly.  Returns
    ``sympy.oo`` when the code never beats NC (it cannot at L = 1, where NC is optimal).
    """
    k = _check_cell(structure, k)
    if structure == "nc":
        raise params.ParameterError("structure must be kgon or cross_polytope for a threshold")
    if structure == "kgon":
        if k <= 3:
            return sp.oo
        return 2 * sp.log(k / (4 * sp.sin(sp.pi / k) ** 2)) / sp.log(sp.Rational(k - 1, 2)) - 1
    if k % 2 == 0:
        return 2 * sp.log(2) / sp.log(sp.Rational(2 * (k - 1), k)) - 1
    f = objective("cross_polytope", "odd").subs(K, k) - (k - 1)
    lo, hi = sp.Rational(1, 10**6), sp.Integer(1)
    if not (f.subs(p, lo).is_negative and f.subs(p, hi).is_positive):
        return sp.oo
    with mpmath.workdps(digits + 10):
        root = mpmath.findroot(sp.lambdify(p, f, "mpmath"), (mpmath.mpf(lo), mpmath.mpf(hi)), solver="anderson")
    return sp.Float(2 / root - 1, digits)
