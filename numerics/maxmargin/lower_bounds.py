"""Certified lower bounds on the optimal value of P(K, L), valid for every feasible Zbar.

P(K, L): minimise S_p(Zbar) = sum_i sigma_i^p, p = 2/(L + 1) (L weight matrices, N = L + 1), over
Zbar in R^{K x K} with margins Zbar_kk - Zbar_ck >= 1.  Three bounds hold for every K >= 3 and
every p in (0, 1]; ``spectral_bound`` is their maximum.

1. Nuclear norm.  ||Zbar||_* >= K - 1 for every feasible Zbar (L = 1: the dual certificate with
   uniform multipliers, ``solver.nuclear_norm_dual_bound``), and t -> t^p is subadditive for
   p <= 1, so S_p(Zbar) >= (sum_i sigma_i)^p >= (K - 1)^p.
2. Three classes.  For any three classes J, the principal submatrix Zbar_JJ is feasible for
   P(3, L), so sigma_1 sigma_2 (Zbar_JJ) >= 1 (``theory.three_classes``; centring the submatrix
   only shrinks its singular values), and singular values of a submatrix are interlaced below
   those of the matrix: sigma_1 sigma_2 (Zbar) >= 1, hence S_p >= 2 (sigma_1 sigma_2)^(p/2) >= 2.
3. All triples at once.  E = sum_{i<j} sigma_i^2 sigma_j^2 is the sum of the squared 2 x 2 minors
   of Zbar (Cauchy-Binet).  Summing the same identity over the C(K, 3) principal 3 x 3
   submatrices counts each 2 x 2 minor at most K - 2 times (a minor with row and column indices
   {r, r', c, c'} lies in the triples containing that set: K - 2 of them if it has two
   elements, one if three, none if four), and each submatrix contributes at least 1 (step 2),
   so E >= C(K, 3) / (K - 2) = K (K - 1) / 6.  With y_i = sigma_i^p, s = sum y and q = 4/p >= 4:
   E = sum_{i<j} (y_i y_j)^(q/2) <= max_{i<j}(y_i y_j)^(q/2 - 1) sum_{i<j} y_i y_j
   <= (s^2/4)^(q/2 - 1) s^2/2 = 2 (s/2)^q, so S_p = s >= 2 (E/2)^(p/4) >= 2 (K (K - 1)/12)^(p/4).

4. Splitting the largest singular value (``sigma1_split_bound``).  Outside NC's certified
   neighbourhood (below) the nuclear norm is at least N_0 = K - 1 + u_0/K.  For sigma_1 in [a, b],
   the other m = K - 2 nonzero singular values of the centred Zbar lie in [0, b], sum to at least
   N_0 - b, and the largest is at least 1/b (bound 2: sigma_1 sigma_2 >= 1).  x -> sum x_i^p is
   concave, so its minimum over that polytope is at a vertex, where as many values as fit sit at b
   and the rest in one (``vertex_floor``): S_p >= a^p + vertex_floor(m, b, max(N_0 - b, 1/b), p).
   sigma_1 ranges over [N_0/(K - 1), (K - 1)^(1/p)] (below, the nuclear norm cannot reach N_0;
   above, sigma_1^p >= K - 1 alone); the bound is the minimum over a geometric partition of it.
   ``tail_certificate`` sharpens the same split with SDP bounds on the tail.

They are weak away from small K and small L (they do not see which ranks are feasible); the
phase diagram reports the gap between each cell's best value and its best certified bound.

Local certificate of NC (``nc_local_radius``).  Write a feasible centred Zbar through its margin
excesses t_ck = g_ck - 1 >= 0 and u = sum t_ck; D = Zbar - NC has columns -sum_c t_ck a_c with
|a_c| = sqrt((K - 1)/K), so ||D||_F <= sqrt((K - 1)/K) u =: delta.  Then (i) tr Zbar =
(K - 1) + u/K, so sum_i sigma_i >= K - 1 + u/K; (ii) |sigma_i - 1| <= delta (Weyl) and
sum_i (sigma_i - 1)^2 <= ||D||_F^2 (Mirsky), i <= K - 1 (both matrices have sigma_K = 0); (iii)
Taylor with remainder on [1 - delta, 1 + delta]: sigma^p >= 1 + p (sigma - 1) - c (sigma - 1)^2,
c = p (1 - p)/2 (1 - delta)^(p - 2).  Summing:
    S_p(Zbar) >= (K - 1) + p u / K - c (K - 1)/K u^2 > K - 1   whenever 0 < u < p / ((K - 1) c),
so NC is the unique minimum of P(K, L) on {u <= u_0} with the u_0 returned (a certified strict
local optimum, for every K and every depth).  Outside, u > u_0 and (i) give sum sigma >
K - 1 + u_0/K, hence (bound 1 sharpened) S_p >= (K - 1 + u_0/K)^p everywhere (``local_bound``).
"""

from __future__ import annotations

import numpy as np

from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.theory import params

__all__ = ["nc_local_radius", "local_bound", "vertex_floor", "outside_nuclear", "sigma1_range", "sigma1_split_bound",
           "nc_certified_depth", "nuclear_bound", "three_class_bound", "triples_bound", "spectral_bound", "certified_lower_bound",
           "monotone_bound"]


def nuclear_bound(K: int, p: float) -> float:
    """(K - 1)^p (bound 1 of the module docstring)."""
    return float((K - 1) ** p)


def three_class_bound(K: int, p: float) -> float:
    """2 for K >= 3 (bound 2), 1 for K = 2."""
    return 2.0 if K >= 3 else 1.0


def triples_bound(K: int, p: float) -> float:
    """2 (K (K - 1) / 12)^(p/4) for K >= 3 (bound 3)."""
    return float(2 * (K * (K - 1) / 12) ** (p / 4)) if K >= 3 else 1.0


def local_bound(K: int, p: float) -> float:
    """min(K - 1, (K - 1 + u_0/K)^p): the nuclear-norm bound outside NC's certified radius u_0."""
    return float(min(K - 1, (K - 1 + nc_local_radius(K, p) / K) ** p))


SPLIT_WIDTH = 2e-3  # relative width of the sigma_1 intervals of bound 4


def vertex_floor(m: int, cap, total, p: float):
    r""":math:`\min\{\sum_{i=1}^m x_i^p : 0 \le x_i \le c,\ \sum x_i \ge t\}` (concave: at a vertex) for
    :math:`0 < p \le 1`: :math:`\lfloor t/c \rfloor c^p + (t - \lfloor t/c \rfloor c)^p`; ``inf`` when
    :math:`t > m c`, 0 when :math:`t \le 0`.  Elementwise over arrays ``cap`` and ``total``.
    """
    cap, total = np.asarray(cap, dtype=float), np.maximum(np.asarray(total, dtype=float), 0.0)
    full = np.minimum(m, np.floor(total / cap))
    rest = np.maximum(total - full * cap, 0.0)
    value = full * cap**p + rest**p
    return np.where(total > m * cap * (1 + 1e-12), np.inf, value)


def outside_nuclear(K: int, p: float) -> float:
    """N_0 = K - 1 + u_0/K: the nuclear norm of every centred feasible Zbar outside NC's certified radius."""
    return K - 1 + nc_local_radius(K, p) / K


def sigma1_range(K: int, p: float) -> tuple[float, float]:
    """[N_0/(K - 1), (K - 1)^(1/p)]: where sigma_1 of a feasible Zbar with S_p < K - 1 can lie (bound 4)."""
    return outside_nuclear(K, p) / (K - 1), (K - 1) ** (1 / p)


def sigma1_split_bound(K: int, p: float, width: float = SPLIT_WIDTH, p_high: float | None = None) -> float:
    """Bound 4: min(K - 1, min over a partition of the sigma_1 range of relative width ``width``).

    With ``p_high`` the bound holds at every exponent in [p, p_high] at once: the range and N_0 are
    taken at p (the widest range, the smallest N_0: u_0 grows with p), every value >= 1 raised to
    p and the one remainder to whichever of p, p_high gives less (the minimising vertex does not
    depend on the exponent).
    """
    K = params.integer("K", K, minimum=3, maximum=100_000)
    p = params.real("p", p, minimum=0, maximum=1, open_minimum=True)
    lo, hi = sigma1_range(K, p)
    edges = np.geomspace(lo, hi, max(2, int(np.log(hi / lo) / np.log1p(width)) + 2))
    a, b = edges[:-1], edges[1:]
    total = np.maximum(outside_nuclear(K, p) - b, 1 / b)
    tail = vertex_floor(K - 2, b, total, p)
    if p_high is not None:
        full = np.minimum(K - 2, np.floor(total / b))
        rest = np.maximum(total - full * b, 0.0)
        tail = np.where(np.isinf(tail), np.inf, full * b**p + np.minimum(rest**p, rest**p_high))
    return float(min(K - 1, np.min(a**p + tail)))


def nc_certified_depth(K: int, step: float = 0.02, resolution: float = 1e-4) -> float:
    """The largest real depth L_c such that bound 4 proves NC optimal at every L in [1, L_c].

    Walks the exponent p = 2/(L + 1) down from 1 in intervals [p - step, p], each certified at once
    (``sigma1_split_bound`` with ``p_high``), halving the step where an interval fails, down to
    ``resolution`` in p.  L counts weight matrices.
    """
    K = params.integer("K", K, minimum=3, maximum=100_000)
    p = 1.0
    while step >= resolution:
        low = max(p - step, resolution)
        if sigma1_split_bound(K, low, p_high=p) >= K - 1 - 1e-12:
            p = low
        else:
            step /= 2
    return 2 / p - 1


def spectral_bound(K: int, p: float) -> tuple[float, str]:
    """The largest of the bounds at (K, p), and which one it is."""
    K = params.integer("K", K, minimum=2, maximum=100_000)
    p = params.real("p", p, minimum=0, maximum=1, open_minimum=True)
    bounds = {"nuclear norm": nuclear_bound(K, p), "three classes": three_class_bound(K, p),
              "all triples": triples_bound(K, p), "nuclear norm outside NC's certified radius": local_bound(K, p)}
    if K >= 3:
        bounds["sigma_1 split"] = sigma1_split_bound(K, p)
    name = max(bounds, key=bounds.get)
    return bounds[name], name


def monotone_bound(value: float, p_from: float, p_to: float) -> float:
    """A bound at a shallower depth carried to a deeper one: v^(p_to / p_from) for p_to <= p_from.

    For a fixed Zbar, ||sigma||_p = S_p^(1/p) does not increase with p, so
    S_{p_to} >= S_{p_from}^(p_to / p_from) >= value^(p_to / p_from).  A bound at K' <= K also holds
    at K: deleting classes leaves a feasible principal submatrix with interlaced singular values.
    """
    if p_to > p_from:
        raise params.ParameterError(f"p_to must be <= p_from = {p_from}, got {p_to}")
    return float(value ** (p_to / p_from))


def certified_lower_bound(K: int, L) -> dict:
    """``{"value", "kind"}``: the best generic certified bound of a cell (depth L >= 1)."""
    p = schatten_exponent(L)
    if L == 1:
        return {"value": float(K - 1), "kind": "convex"}
    value, name = spectral_bound(K, p)
    return {"value": value, "kind": name}


def nc_local_radius(K: int, p: float) -> float:
    """The largest u_0 (on a grid of 1e-4) with S_p > K - 1 on {0 < sum t_ck <= u_0} (docstring).

    The condition p/K > c(delta(u)) (K - 1)/K u is monotone in u (both c and u grow), so the
    radius is found by bisection.  At p = 1 (L = 1, the convex nuclear norm) the second-order term
    vanishes and the radius is the whole domain of the bound, delta < 1: u_0 -> sqrt(K / (K - 1)).
    """
    K = params.integer("K", K, minimum=2, maximum=100_000)
    p = params.real("p", p, minimum=0, maximum=1, open_minimum=True)
    scale = np.sqrt((K - 1) / K)

    def holds(u: float) -> bool:
        delta = scale * u
        if delta >= 1:
            return False
        c = p * (1 - p) / 2 * (1 - delta) ** (p - 2)
        return p / K - c * (K - 1) / K * u > 0

    lo, hi = 0.0, 1 / scale
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if holds(mid) else (lo, mid)
    return float(np.floor(lo * 1e4) / 1e4)


def check_on(Z: np.ndarray) -> dict:
    """The quantities the bounds rest on, computed for one matrix (for tests and plots)."""
    s = np.linalg.svd(np.asarray(Z, dtype=float), compute_uv=False)
    e2 = (np.sum(s**2) ** 2 - np.sum(s**4)) / 2
    return {"nuclear": float(s.sum()), "sigma1_sigma2": float(s[0] * s[1]), "e2": float(e2)}
