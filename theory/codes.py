"""Exact unit-margin objectives of the named codes of P(K, L), and their exact tie depths (sympy).

Problem (Spec A, section 1).  Depth L counts weight matrices; N = L + 1 factors including the
features, p = 2 / (L + 1).  P(K, L): minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p over Zbar in
R^{K x K} subject to Zbar_kk - Zbar_ck >= 1 (c != k).  Adding a constant to a column leaves every
margin unchanged and the column-centring projection P = I - 11^T/K can only shrink singular
values, so every code below is column-centred and scaled to minimum margin exactly 1.  A code
is given by its unit-margin spectrum: non-zero singular values lambda_i with multiplicities
n_i, so S_p = sum_i n_i lambda_i^p.

- NC (simplex ETF): Zbar = I - 11^T/K, K - 1 singular values 1:           S_p = K - 1.
- Regular K-gon (rank 2, K >= 3): Zbar_ck = a cos(2 pi (c - k)/K); the circulant has the two
  non-zero eigenvalues K a / 2 (frequencies +-1); the smallest margin is a (1 - cos(2 pi/K)), so
  a = 1 / (1 - cos(2 pi / K)) = 1 / (2 sin^2(pi/K)) and     S_p = 2 (K / (4 sin^2(pi/K)))^p.
- Cross-polytope, K = 2m >= 4 even (rank m): classes 2i, 2i+1 are +-e_i; Zbar = V V^T with V the
  K x m matrix of rows +-e_i: margin 1 to the K - 2 orthogonal classes, 2 to the antipode, and
  V^T V = 2 I_m, so m singular values 2:                                    S_p = (K/2) 2^p.
- Cross-polytope + singleton, K = 2m + 1 >= 3 odd (rank m + 1): the m antipodal pairs plus a class
  e_{m+1}.  Column-centring changes only the singleton's column, to e_K - 1/K, orthogonal to the
  pairs' column space, so the singular values are 2 (m times) and sqrt((K - 1)/K):
                                      S_p = ((K - 1)/2) 2^p + ((K - 1)/K)^(p/2).
- Every entry of ``implicitbias.theory.polytopes.CATALOGUE`` (icosahedron, square antiprism,
  rectified simplices, half-cubes, the Schlafli polytope, duoprisms, the Hadamard antiprism, ...):
  Zbar = G / m with G the Gram matrix of its centred points and m its smallest margin, spectrum
  ``polytopes.spectrum`` divided by m.
- A catalogue entry X + singleton (K = |X| + 1) or + antipodal pair (K = |X| + 2): X's unit-margin code
  G_X / m with one class e or two classes +-e of unit norm on a new axis, the Gram matrix block-diagonal.  X's
  points are centred, so column-centring changes only the singleton's column, to e_K - 1/K (norm
  sqrt((K - 1)/K), orthogonal to X's columns); the pair's block [[1, -1], [-1, 1]] is already centred (eigenvalue
  2).  Margins: X's own are unchanged; X's classes against the new ones |v|^2 / m = 1 / (1 - max cos) >= 1 (every
  entry has a pair at cosine >= 0, tested); the new classes against X's 1, a pair's classes against each other 2.
  So the spectrum is X's plus sqrt((K - 1)/K), or plus 2:  S_p = S_p(X) + ((K - 1)/K)^(p/2), or S_p(X) + 2^p
  (the cross-polytope + singleton is the same construction on the cross-polytope).

Ties.  Two codes a, b tie where f(p) = S_p(a) - S_p(b) = 0, p in (0, 1] (L = 2/p - 1 >= 1).  When
each has a single distinct singular value (n_a lambda_a^p = n_b lambda_b^p) the tie is the closed
form p = log(n_b / n_a) / log(lambda_a / lambda_b); otherwise the roots of the exponential sum f
(at most (number of distinct lambdas) - 1 of them, Descartes' rule for exponential sums) are
bracketed where f (mpmath, ``digits`` + 10 digits) changes sign on a grid of p, the signs at the
rational ends of each bracket are checked exactly by sympy, and each root is polished by
``mpmath.findroot`` (bisection) to ``digits`` digits.
The L -> infinity order is (rank, sum log sigma) (Theorem 3.2).  Sources: Spec A, sections 1-3;
derivations above.
"""

from __future__ import annotations

from functools import lru_cache

import mpmath
import sympy as sp

from implicitbias.theory import params
from implicitbias.theory.polytopes import CATALOGUE, spectrum
from implicitbias.theory.representation_cost import schatten_exponent

__all__ = [
    "K",
    "p",
    "BASE",
    "STRUCTURES",
    "objective",
    "unit_spectrum",
    "objective_at",
    "compare",
    "compare_with_nc",
    "tie_depths",
    "threshold_depth",
    "rank",
    "limit_objective",
    "limit_objective_at",
    "structures_with_vertices",
    "EXTRA",
    "AUGMENTED",
    "vertices",
    "augmented_with_vertices",
]

K = sp.Symbol("K", positive=True, integer=True)
p = sp.Symbol("p", positive=True)

BASE = ("nc", "kgon", "cross_polytope")
EXTRA = {"singleton": 1, "antipodal pair": 2}  # classes put on a new axis beside a catalogue entry
AUGMENTED = {f"{name} + {extra}": (name, extra) for name in CATALOGUE for extra in EXTRA}  # key -> (entry, extra)
STRUCTURES = BASE + tuple(CATALOGUE) + tuple(AUGMENTED)
GRID = 400  # sign-scan points on p in (0, 1] for tie depths (ties at L <= 2 GRID - 1 = 799)
DEEP = 2 * 10**6 - 1  # p = 1e-6: "beats NC at large depth"
CACHE = 4096  # entries of each exact-evaluation cache: an atlas asks for the same (code, K, p) from its cells,
# crossovers and boundary (measured on the K <= 32 atlas: its boundary table 4.07 CPU s, again 0.01)


def objective(structure: str, parity: str | None = None) -> sp.Expr:
    """Unit-margin S_p of a base code as a sympy expression in K and p = 2/(L + 1).

    ``parity`` ("even" or "odd") is required for the cross-polytope.
    """
    params.choice("structure", structure, BASE)
    if structure == "nc":
        return K - 1
    if structure == "kgon":
        return 2 * (K / (4 * sp.sin(sp.pi / K) ** 2)) ** p
    params.choice("parity", parity, ("even", "odd"))
    if parity == "even":
        return K / 2 * 2**p
    return (K - 1) / 2 * 2**p + ((K - 1) / K) ** (p / 2)


def limit_objective(structure: str, parity: str | None = None) -> tuple[sp.Expr, sp.Expr]:
    """The L -> infinity objective of a base code: (rank, sum_i log sigma_i over its non-zero sigma_i).

    (N/2) S_{2/N}(Z) = (N/2) rank(Z) + sum log sigma_i + O(1/N) (Spec A, Theorem 3.2), so codes
    compare by rank first, then by sum log sigma.  From the spectra above: NC (K - 1, 0);
    K-gon (2, 2 log(K / (4 sin^2(pi/K)))); cross-polytope even (K/2, (K/2) log 2), odd
    ((K + 1)/2, ((K - 1)/2) log 2 + log((K - 1)/K) / 2).
    """
    params.choice("structure", structure, BASE)
    if structure == "nc":
        return K - 1, sp.Integer(0)
    if structure == "kgon":
        return sp.Integer(2), 2 * sp.log(K / (4 * sp.sin(sp.pi / K) ** 2))
    params.choice("parity", parity, ("even", "odd"))
    if parity == "even":
        return K / 2, K / 2 * sp.log(2)
    return (K + 1) / 2, (K - 1) / 2 * sp.log(2) + sp.log((K - 1) / K) / 2


def _check_cell(structure: str, k: int) -> int:
    params.choice("structure", structure, STRUCTURES)
    k = params.integer("K", k, minimum=2, maximum=100_000)
    if structure in ("kgon", "cross_polytope") and k < 3:
        raise params.ParameterError(f"K must be an integer >= 3 for the {structure} code, got {k}")
    if structure in CATALOGUE and CATALOGUE[structure].K != k:
        raise params.ParameterError(f"K must be {CATALOGUE[structure].K} for the {structure}, got {k}")
    if structure in AUGMENTED and vertices(structure) != k:
        raise params.ParameterError(f"K must be {vertices(structure)} for the {structure}, got {k}")
    return k


def vertices(structure: str) -> int | None:
    """The number of classes of a catalogue entry or of an entry with added classes; None for the base codes."""
    if structure in AUGMENTED:
        name, extra = AUGMENTED[structure]
        return CATALOGUE[name].K + EXTRA[extra]
    return CATALOGUE[structure].K if structure in CATALOGUE else None


def _singleton(k: int) -> tuple[sp.Expr, int]:
    """The singular value a unit class on a new axis adds to a centred code of k - 1 classes (its centred column
    e_k - 1/k): sqrt((k - 1)/k), once."""
    return sp.sqrt(sp.Rational(k - 1, k)), 1


@lru_cache(maxsize=None)
def unit_spectrum(structure: str, k: int) -> tuple[tuple[sp.Expr, int], ...]:
    """Exact non-zero singular values of the unit-margin code at K = k, with multiplicities."""
    k = _check_cell(structure, k)
    if structure == "nc":
        return ((sp.Integer(1), k - 1),)
    if structure == "kgon":
        return ((sp.Integer(k) / (4 * sp.sin(sp.pi / k) ** 2), 2),)
    if structure == "cross_polytope":
        if k % 2 == 0:
            return ((sp.Integer(2), k // 2),)
        return ((sp.Integer(2), (k - 1) // 2), _singleton(k))
    if structure in AUGMENTED:
        name, extra = AUGMENTED[structure]
        added = _singleton(k) if extra == "singleton" else (sp.Integer(2), 1)
        return unit_spectrum(name, CATALOGUE[name].K) + (added,)
    values, margin = spectrum(structure)
    return tuple((sp.radsimp(sp.simplify(lam / margin)), n) for lam, n in values)


def rank(structure: str, k: int) -> int:
    """Rank of the code's Zbar (NC K - 1, K-gon 2, cross-polytope ceil(K/2), ...)."""
    return sum(n for _, n in unit_spectrum(structure, k))


_EXACT_NUMERATOR = 10**3  # rational exponents up to this numerator are expanded by sympy as usual


def _power(base: sp.Expr, q: sp.Expr) -> sp.Expr:
    """base**q, left unevaluated when q is a rational with a large numerator (a float depth such
    as L = 1.7809156622694773 gives q = 2*10**16/27809156622694773): sympy's automatic
    simplification of an algebraic base raised to it computes integer powers of size ~10**16 and
    exhausts memory.  The unevaluated power is the same exact number; ``evalf`` reads it at any
    precision."""
    big = q.is_Rational and abs(q.p) > _EXACT_NUMERATOR
    return sp.Pow(base, q, evaluate=not big)


@lru_cache(maxsize=CACHE)
def _objective_p(structure: str, k: int, q) -> sp.Expr:
    return sum(n * _power(lam, q) for lam, n in unit_spectrum(structure, k))


def objective_at(structure: str, k: int, L) -> sp.Expr:
    """Exact S_p of the unit-margin code at K = k and depth L (L weight matrices, p = 2/(L+1))."""
    return _objective_p(structure, k, schatten_exponent(L))


def limit_objective_at(structure: str, k: int) -> tuple[int, sp.Expr]:
    """(rank, sum log sigma) of the unit-margin code at K = k: its L -> infinity order."""
    return rank(structure, k), sum(n * sp.log(lam) for lam, n in unit_spectrum(structure, k))


def _sign(diff: sp.Expr) -> int:
    value = diff.evalf(60)
    if value.is_Number and abs(value) > sp.Float("1e-45", 60):
        return -1 if value < 0 else 1
    if sp.simplify(diff) == 0:
        return 0
    raise ArithmeticError(f"sympy could not decide the sign of {diff}")


def compare(a: str, b: str, k: int, L) -> int:
    """Exact sign of S_p(a) - S_p(b) at K = k, depth L: -1 (a strictly better), 0 (tie), +1.

    The difference is an algebraic number (sums of rational powers of algebraic numbers); its
    sign is read from sympy's error-controlled ``evalf`` at 60 digits when it is clearly non-zero,
    and a zero is decided by exact simplification (e.g. the 3-gon is NC).
    """
    return _compare_p(a, b, k, schatten_exponent(L))


@lru_cache(maxsize=CACHE)
def _compare_p(a: str, b: str, k: int, q: sp.Expr) -> int:
    return _sign(_objective_p(a, k, q) - _objective_p(b, k, q))


def compare_with_nc(structure: str, k: int, L) -> int:
    """Exact sign of S_p(code) - S_p(NC) = S_p(code) - (K - 1) (see ``compare``)."""
    return compare(structure, "nc", k, L)


def tie_depths(a: str, b: str, k: int, digits: int = 30) -> list[sp.Expr]:
    """Every real depth L >= 1 where codes a and b tie at K = k, increasing (see module docstring).

    Closed form when both codes have a single distinct singular value; otherwise mpmath roots of
    f(p) = S_p(a) - S_p(b) in sign-certified brackets of p in (0, 1], returned as ``sympy.Float``.
    An identically equal pair (same spectrum) has no isolated tie and returns [].
    """
    return list(_ties(a, b, k, digits))


@lru_cache(maxsize=CACHE)
def _ties(a: str, b: str, k: int, digits: int) -> tuple[sp.Expr, ...]:
    sa, sb = unit_spectrum(a, k), unit_spectrum(b, k)
    if len(sa) == 1 and len(sb) == 1:
        (la, na), (lb, nb) = sa[0], sb[0]
        if _sign(la - lb) == 0:
            return ()
        q = sp.log(sp.Rational(nb, na)) / sp.log(la / lb)
        qf = q.evalf(digits)
        # L = 2/q - 1, which sympy keeps as the exact quotient of logarithms; its simplify took 0.1-0.2 s a pair
        # and returned no shorter form (e.g. -log((20/9)**(1/log(5/9))) for NC and the 10-cross-polytope)
        return (2 / q - 1,) if 0 < qf <= 1 else ()
    f = sp.Lambda(p, _objective_p(a, k, p) - _objective_p(b, k, p))
    g = sp.lambdify(p, f(p), "mpmath")
    ends = [sp.Rational(i, GRID) for i in range(1, GRID + 1)]
    with mpmath.workdps(digits + 10):
        values = [g(mpmath.mpf(q.p) / q.q) for q in ends]
    roots = []
    for i, (v0, v1) in enumerate(zip(values, values[1:])):
        if v0 * v1 > 0 or v0 == 0:
            continue
        q0, q1 = ends[i], ends[i + 1]
        s0, s1 = _sign_or_zero(f(q0)), _sign_or_zero(f(q1))  # exact signs at the rational ends
        if s1 == 0:
            roots.append(sp.Integer(2) / q1 - 1)
        elif s0 * s1 < 0:
            with mpmath.workdps(digits + 10):
                root = mpmath.findroot(g, (mpmath.mpf(q0.p) / q0.q, mpmath.mpf(q1.p) / q1.q), solver="anderson")
            roots.append(sp.Float(2 / root - 1, digits))
    return tuple(sorted(roots, key=float))


def _sign_or_zero(value: sp.Expr) -> int:
    try:
        return _sign(value)
    except ArithmeticError:
        return 0


@lru_cache(maxsize=CACHE)
def threshold_depth(structure: str, k: int, digits: int = 30) -> sp.Expr:
    """The real depth L* beyond which the code beats NC (its last tie with NC); oo if it does not
    beat NC at large depth (L = ``DEEP``).

    For the K-gon, the even cross-polytope and every single-eigenvalue catalogue code this is
    the closed form of ``tie_depths``; otherwise an mpmath root to ``digits`` digits.
    """
    k = _check_cell(structure, k)
    if structure == "nc":
        raise params.ParameterError("structure must differ from nc for a threshold")
    ties = tie_depths(structure, "nc", k, digits)
    beats_deep = compare_with_nc(structure, k, DEEP) < 0
    return ties[-1] if ties and beats_deep else sp.oo


def structures_with_vertices(k: int) -> list[str]:
    """Keys of the named codes defined at K = k (base codes and catalogue entries; ``augmented_with_vertices``
    for the entries with added classes)."""
    k = params.integer("K", k, minimum=2, maximum=100_000)
    base = [s for s in BASE if s == "nc" or k >= (4 if s == "kgon" else 3)]
    return base + [name for name in CATALOGUE if vertices(name) == k]


def augmented_with_vertices(k: int) -> list[str]:
    """Keys of the catalogue entries with a singleton or an antipodal pair added that have k classes."""
    k = params.integer("K", k, minimum=2, maximum=100_000)
    return [key for key in AUGMENTED if vertices(key) == k]
