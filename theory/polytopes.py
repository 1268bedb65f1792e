"""Exact point sets of named polytopes and spherical codes, as sympy matrices (rows = points).

These are the candidate class-vector configurations of P(K, L) that have a name (Spec A,
section 2: softmax codes; Platonic and Archimedean solids, prisms, antiprisms, rectified
simplices, half-cubes, the Hadamard antiprism, ...).  Each entry gives the exact points of a
configuration of K points in R^r (as its points or, for 2_21, its Gram matrix), centred (sum of the
points 0) so that the symmetric code Zbar = G / m is already column-centred, with
m = min_{c != k} (G_kk - G_ck) its smallest margin.  The unit-margin objective of P(K, L) (L weight
matrices, p = 2/(L + 1)) is then exactly

    S_p = sum_i lambda_i(G)^p / m^p,

the lambda_i being the non-zero eigenvalues of G (``implicitbias.theory.codes``).  Sources: the
coordinates are the standard ones (Coxeter, Regular Polytopes, 1973); antiprisms and prisms are
taken with the height that equalises their two shortest edge families (the Tammes-type member
of the family, e.g. the square antiprism of the Tammes problem for 8 points); the Schlafli
polytope 2_21 is given by its Gram matrix, built from the 27 lines on a cubic surface (two lines
skew: cosine 1/4; meeting: cosine -1/2); the Hadamard antiprism of the 8-orthoplex is two mutually unbiased
8-orthoplexes (the second rotated by Sylvester's Hadamard matrix, Sylvester 1867) on parallel hyperplanes at the
antiprisms' height rule.  Every entry is vertex-transitive.  Depth does not enter here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
import sympy as sp

from implicitbias.theory import params

__all__ = ["Polytope", "CATALOGUE", "gram", "float_gram", "spectrum", "names_with_vertices"]


@dataclass(frozen=True)
class Polytope:
    """A named configuration: its number of points, the dimension it spans, and its points."""

    name: str
    K: int
    rank: int
    build: Callable[[], sp.Matrix]  # exact points (K x rank), or the exact Gram matrix (K x K)
    given_by_gram: bool = False
    frame: tuple[tuple[sp.Expr, int], ...] | None = None  # eigenvalues of V^T V where symmetry does not fix them

    def points(self) -> sp.Matrix | None:
        """The exact points (rows), centred at the origin; None when given by its Gram matrix."""
        return None if self.given_by_gram else self.build()

    def gram(self) -> sp.Matrix:
        """The exact Gram matrix V V^T (unsimplified products for point sets)."""
        if self.given_by_gram:
            return self.build()
        V = self.build()
        return V * V.T


def _rows(points) -> sp.Matrix:
    return sp.Matrix([list(map(sp.sympify, pt)) for pt in points])


def _cube(n: int) -> sp.Matrix:
    return _rows(itertools.product((-1, 1), repeat=n))


def _demicube(n: int) -> sp.Matrix:
    pts = [pt for pt in itertools.product((-1, 1), repeat=n) if pt.count(-1) % 2 == 0]
    return _rows(pts)


def _rectified_simplex(n: int) -> sp.Matrix:
    """Midpoints e_i + e_j of the edges of the n-simplex in R^{n+1}, shifted to mean 0."""
    pts = []
    shift = sp.Rational(2, n + 1)
    for i, j in itertools.combinations(range(n + 1), 2):
        pts.append([(1 if k in (i, j) else 0) - shift for k in range(n + 1)])
    return _rows(pts)


def _icosahedron() -> sp.Matrix:
    phi = (1 + sp.sqrt(5)) / 2
    pts = []
    for a, b in itertools.product((-1, 1), repeat=2):
        base = (0, a, b * phi)
        pts += [base, (base[2], base[0], base[1]), (base[1], base[2], base[0])]
    return _rows(pts)


def _dodecahedron() -> sp.Matrix:
    phi = (1 + sp.sqrt(5)) / 2
    pts = list(itertools.product((-1, 1), repeat=3))
    for a, b in itertools.product((-1, 1), repeat=2):
        base = (0, a / phi, b * phi)
        pts += [base, (base[2], base[0], base[1]), (base[1], base[2], base[0])]
    return _rows(pts)


def _cuboctahedron() -> sp.Matrix:
    pts = set()
    for a, b in itertools.product((-1, 1), repeat=2):
        for pos in itertools.combinations(range(3), 2):
            pt = [0, 0, 0]
            pt[pos[0]], pt[pos[1]] = a, b
            pts.add(tuple(pt))
    return _rows(sorted(pts))


def _ring(m: int, height, offset) -> list:
    return [(sp.cos(2 * sp.pi * k / m + offset), sp.sin(2 * sp.pi * k / m + offset), height) for k in range(m)]


def _antiprism_height(m: int) -> sp.Expr:
    """Half-height h with 2 h^2 = cos(pi/m) - cos(2 pi/m): equal short edges (unit ring radius)."""
    return sp.sqrt((sp.cos(sp.pi / m) - sp.cos(2 * sp.pi / m)) / 2)


def _prism_height(m: int) -> sp.Expr:
    """Half-height h with 2 h^2 = 1 - cos(2 pi/m): square sides (unit ring radius)."""
    return sp.sqrt((1 - sp.cos(2 * sp.pi / m)) / 2)


def _antiprism(m: int) -> sp.Matrix:
    h = _antiprism_height(m)
    return _rows(_ring(m, h, 0) + _ring(m, -h, sp.pi / m))


def _prism(m: int) -> sp.Matrix:
    h = _prism_height(m)
    return _rows(_ring(m, h, 0) + _ring(m, -h, 0))


def _ring_frame(m: int, h: sp.Expr) -> tuple[tuple[sp.Expr, int], ...]:
    """Eigenvalues of V^T V for two rings of m points (unit radius) at heights +-h: each ring gives m/2 to
    both in-plane directions, and the axis gets 2 m h^2."""
    return (sp.Integer(m), 2), (2 * m * h**2, 1)


def _hadamard_antiprism_height(n: int) -> sp.Expr:
    """Half-height h with 2 h^2 = 1/sqrt(n): equal short edges, |e_i - e_j|^2 = 2 = 2 - 2/sqrt(n) + 4 h^2."""
    return 1 / sp.sqrt(2 * sp.sqrt(n))


def _hadamard_antiprism_frame(n: int) -> tuple[tuple[sp.Expr, int], ...]:
    """Eigenvalues of V^T V for ``_hadamard_antiprism(n)``: each orthoplex gives 2 I_n within R^n, and the axis
    gets 4 n h^2 (= 2 sqrt(n))."""
    return (sp.Integer(4), n), (4 * n * _hadamard_antiprism_height(n) ** 2, 1)


def _hadamard_antiprism(n: int) -> sp.Matrix:
    """Two n-orthoplexes of R^n, mutually unbiased, on the hyperplanes x_{n+1} = +-h of R^{n+1} (4n points).

    The first is {+-e_i}, the second the rows of +-H_n / sqrt(n), H_n[i, j] = (-1)^popcount(i & j) the
    Sylvester Hadamard matrix (n a power of 2): every vertex of one is at cosine +-1/sqrt(n) from every vertex
    of the other within R^n.  The half-height h (``_hadamard_antiprism_height``) equalises the two shortest
    edge families, the antiprisms' rule: n = 2 gives the square antiprism, n = 4 the 5-demicube (the tests
    compare them), n = 8 a 32-point code in R^9 (``_hadamard_antiprism_frame``: its V^T V).
    """
    h = _hadamard_antiprism_height(n)
    H = [[(-1) ** bin(i & j).count("1") / sp.sqrt(n) for j in range(n)] for i in range(n)]
    first = [[s if k == i else 0 for k in range(n)] + [h] for s in (1, -1) for i in range(n)]
    second = [[s * x for x in row] + [-h] for s in (1, -1) for row in H]
    return _rows(first + second)


def _duoprism(m: int, n: int) -> sp.Matrix:
    """Product of a regular m-gon and n-gon (unit radii) in R^4."""
    pts = []
    for a in range(m):
        for b in range(n):
            pts.append((sp.cos(2 * sp.pi * a / m), sp.sin(2 * sp.pi * a / m),
                        sp.cos(2 * sp.pi * b / n), sp.sin(2 * sp.pi * b / n)))
    return _rows(pts)


def _24_cell() -> sp.Matrix:
    pts = set()
    for a, b in itertools.product((-1, 1), repeat=2):
        for pos in itertools.combinations(range(4), 2):
            pt = [0, 0, 0, 0]
            pt[pos[0]], pt[pos[1]] = a, b
            pts.add(tuple(pt))
    return _rows(sorted(pts))


def _schlafli_2_21() -> sp.Matrix:
    """27 points in R^6 from the 27 lines on a cubic surface (Picard lattice I_{1,6}).

    Lines: a_i = E_i, b_i = 2 H - sum_j E_j + E_i, c_ij = H - E_i - E_j, with intersection form
    H.H = 1, E_i.E_i = -1.  Two distinct lines are skew (product 0) or meet (product 1); the
    Gram matrix of the polytope is 1 on the diagonal, 1/4 for skew and -1/2 for meeting lines.
    """
    def vec(h, es):
        return (h, *es)

    lines = [vec(0, [1 if j == i else 0 for j in range(6)]) for i in range(6)]
    lines += [vec(2, [-1 if j != i else 0 for j in range(6)]) for i in range(6)]
    lines += [vec(1, [-1 if j in (i, k) else 0 for j in range(6)]) for i, k in itertools.combinations(range(6), 2)]

    def dot(x, y):  # the intersection form diag(1, -1, ..., -1), and E.E = -1 sign convention
        return x[0] * y[0] - sum(a * b for a, b in zip(x[1:], y[1:]))

    G = sp.zeros(27, 27)
    for i, x in enumerate(lines):
        for j, y in enumerate(lines):
            G[i, j] = 1 if i == j else (sp.Rational(-1, 2) if dot(x, y) == 1 else sp.Rational(1, 4))
    return G


def _entries() -> list[Polytope]:
    out = [
        Polytope("cube", 8, 3, lambda: _cube(3)),
        Polytope("icosahedron", 12, 3, _icosahedron),
        Polytope("dodecahedron", 20, 3, _dodecahedron),
        Polytope("cuboctahedron", 12, 3, _cuboctahedron),
        Polytope("24-cell", 24, 4, _24_cell),
        Polytope("Schlafli polytope 2_21", 27, 6, _schlafli_2_21, given_by_gram=True),
        Polytope("8-orthoplex Hadamard antiprism", 32, 9, lambda: _hadamard_antiprism(8),
                 frame=_hadamard_antiprism_frame(8)),
    ]
    names = {3: "triangular", 4: "square", 5: "pentagonal", 6: "hexagonal", 7: "heptagonal", 8: "octagonal"}
    for m in range(4, 11):
        label = names.get(m, f"{m}-gonal")
        out.append(Polytope(f"{label} antiprism", 2 * m, 3, lambda m=m: _antiprism(m),
                            frame=_ring_frame(m, _antiprism_height(m))))
        if m != 4:  # the square prism with square sides is the cube
            out.append(Polytope(f"{label} prism", 2 * m, 3, lambda m=m: _prism(m),
                                frame=_ring_frame(m, _prism_height(m))))
    out.append(Polytope("triangular prism", 6, 3, lambda: _prism(3), frame=_ring_frame(3, _prism_height(3))))
    for n in range(4, 8):  # n = 3 is the octahedron (the cross-polytope)
        out.append(Polytope(f"rectified {n}-simplex", (n + 1) * n // 2, n, lambda n=n: _rectified_simplex(n)))
    for n in (4, 5):
        out.append(Polytope(f"{n}-cube", 2**n, n, lambda n=n: _cube(n)))
    for n in (5, 6):  # the 4-demicube is the 16-cell (a cross-polytope)
        out.append(Polytope(f"{n}-demicube", 2 ** (n - 1), n, lambda n=n: _demicube(n)))
    for m in range(3, 7):
        for n in range(m, 7):
            if (m, n) != (4, 4):  # the 4-4 duoprism is the tesseract
                out.append(Polytope(f"{m}-{n} duoprism", m * n, 4, lambda m=m, n=n: _duoprism(m, n)))
    return out


CATALOGUE: dict[str, Polytope] = {p.name: p for p in _entries()}


@lru_cache(maxsize=None)
def gram(name: str) -> sp.Matrix:
    """Exact Gram matrix of the named configuration (K x K, rank = its dimension, centred)."""
    params.choice("name", name, CATALOGUE)
    return CATALOGUE[name].gram()


@lru_cache(maxsize=None)
def _float_gram(name: str) -> np.ndarray:
    poly = CATALOGUE[name]
    M = np.array(poly.build().evalf(30).tolist(), dtype=float)  # the points, or the Gram matrix itself
    return M if poly.given_by_gram else M @ M.T


def float_gram(name: str) -> np.ndarray:
    """The Gram matrix of the named configuration in float64: V V^T of its points read to 30 digits
    (equal to ``gram`` read in floats to a few units of 1e-16; the tests compare the two).  Reading the
    K x r points instead of the K x K symbolic products is 20 times cheaper: ``evalf`` of the whole Gram
    matrix was the largest exact cost of an atlas's cells."""
    params.choice("name", name, CATALOGUE)
    return _float_gram(name).copy()


@lru_cache(maxsize=None)
def spectrum(name: str) -> tuple[tuple[tuple[sp.Expr, int], ...], sp.Expr]:
    """Exact non-zero eigenvalues of G = V V^T with multiplicities, and its smallest margin m.

    Every configuration here has points of equal norm |v|, so m = |v|^2 (1 - max cos), taken
    exactly at the pair where a float evaluation finds the largest cosine.  The eigenvalues are
    those of the frame operator V^T V: where the entry states them (``Polytope.frame``: prisms and
    antiprisms, diag(m_ring, m_ring, 2 m_ring h^2) for unit ring radius and half-height h; the
    Hadamard antiprism, diag(4 I_n, 2 sqrt(n))), those; for every other entry the symmetry group acts
    irreducibly on the span (or, for the duoprisms, the two rings have equal radii), so
    V^T V = (K |v|^2 / r) I_r.
    The tests compare these with the SVD of the explicit matrices.
    """
    params.choice("name", name, CATALOGUE)
    poly = CATALOGUE[name]
    G = gram(name)
    Gf = _float_gram(name)
    c, k = max(((c, k) for k in range(poly.K) for c in range(poly.K) if c != k), key=lambda ck: Gf[ck])
    norm2 = sp.radsimp(sp.simplify(G[0, 0]))
    margin = sp.radsimp(sp.simplify(G[k, k] - G[c, k]))
    if poly.frame is not None:
        return tuple((sp.simplify(lam), n) for lam, n in poly.frame), margin
    return ((sp.simplify(poly.K * norm2 / poly.rank), poly.rank),), margin


def names_with_vertices(K: int) -> list[str]:
    """Names of the catalogue entries with exactly K points."""
    K = params.integer("K", K, minimum=2, maximum=100_000)
    return [name for name, p in CATALOGUE.items() if p.K == K]
