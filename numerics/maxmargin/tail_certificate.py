r"""Certified lower bounds on P(K, L) from the tail of the singular values.

P(K, L): minimise :math:`S_p(\bar Z) = \sum_i \sigma_i^p`, :math:`p = 2/(L + 1)` (L counts weight
matrices), over :math:`\bar Z \in \mathbb{R}^{K \times K}` with margins
:math:`\bar Z_{kk} - \bar Z_{ck} \ge 1` (Spec A, section 1).  Neural collapse (NC) has
:math:`S_p = K - 1`.  This module proves :math:`S_p \ge B` for every feasible :math:`\bar Z`, with
a bound :math:`B` that reaches :math:`K - 1` (NC optimal) where it can.

Reductions (each exact):

1. *Centring.*  With :math:`P = I - 11^\top/K`, :math:`P\bar Z` has the same margins and
   :math:`\sigma_i(P\bar Z) \le \sigma_i(\bar Z)`, so it suffices to bound centred
   :math:`\bar Z` (rank :math:`\le K - 1`, columns in :math:`1^\perp`): :math:`m = K - 2` singular
   values besides :math:`\sigma_1` can be nonzero.
2. *NC's neighbourhood* (``lower_bounds.nc_local_radius``): on it NC is the unique minimum;
   outside it the nuclear norm is at least :math:`N_0 = K - 1 + u_0/K`.  Three classes
   (``theory.three_classes``, interlacing): :math:`\sigma_1 \sigma_2 \ge 1`.
3. *Two convex programs per direction.*  For a unit :math:`u \in 1^\perp`,
   :math:`\sum_{i \ge 2} \sigma_i = \min_{|u| = 1,\, v} \|\bar Z - u v^\top\|_*` (Eckart-Young-Mirsky
   for the nuclear norm, minimiser :math:`\sigma_1 u_1 v_1^\top`, so :math:`|v| = \sigma_1`) and
   :math:`\sigma_{K-1} = \min_{|n| = 1} |\bar Z^\top n|` (Courant-Fischer on :math:`1^\perp`).  With
   the largest singular value at most :math:`b`,

   .. math::

      \tau(b) = \min_u g(u, b),\quad g(u, b) = \min_{\bar Z,\, |v| \le b} \|\bar Z - u v^\top\|_*, \qquad
      \mu(b) = \min_n h(n, b),\quad h(n, b) = \min_{\bar Z} |\bar Z^\top n|,

   over feasible centred :math:`\bar Z` with :math:`\|\bar Z\|_2 \le b`, bound
   :math:`\sum_{i \ge 2} \sigma_i` and :math:`\sigma_{K-1}` from below.  Each of :math:`g, h` is an SDP
   for fixed direction.  Both are invariant under a sign change and a permutation of the classes
   of the direction (relabel :math:`\bar Z` by the same permutation), so only directions whose
   coordinates are sorted need covering.  Over a cell of directions within chord distance
   :math:`\delta` of its centre :math:`u_0`, :math:`\|\bar Z - u v^\top\|_* \ge \|\bar Z - u_0 v^\top\|_* -
   \delta |v|` and :math:`|\bar Z^\top n| \ge |\bar Z^\top n_0| - \delta \|\bar Z\|_2`, so
   :math:`g(u, b) \ge g(u_0, b) - \delta b` (the same for :math:`h`): a best-first branch-and-bound
   over gnomonic boxes on the facets of the cube (one facet of each antipodal pair) certifies
   :math:`\tau(b)` and :math:`\mu(b)` from below.
4. *Splitting the largest singular value.*  For :math:`\sigma_1 \in [a, b]` the others
   :math:`x_2 \ge \dots \ge x_{K-1}` satisfy :math:`x_2 \le b`, :math:`x_2 \ge 1/b`,
   :math:`x_{K-1} \ge \mu(b)` and :math:`\sum x_i \ge t = \max(\tau(b), N_0 - b)` (outside NC's
   neighbourhood).  :math:`x \mapsto \sum x_i^p` is concave, so its minimum over that polytope is at
   a vertex (``concave_tail_min`` enumerates them), and
   :math:`S_p \ge a^p + \min_{\text{vertices}} \sum x_i^p`.  :math:`\sigma_1` ranges over
   :math:`[N_0/(K - 1), (K - 1)^{1/p}]`: below, the nuclear norm cannot reach :math:`N_0`; above,
   :math:`\sigma_1^p \ge K - 1` alone.  The bound is the minimum over a partition of that range,
   refined where it is below :math:`K - 1`, capped at :math:`K - 1`.

Without step 3 (:math:`\tau = \mu = 0`) this is the generic per-cell bound
``lower_bounds.sigma1_split_bound`` (bound 4 there), which needs no SDP.  The SDPs are solved by Clarabel (interior point) to
its default tolerances; each value enters the certificate less ``SOLVER_SLACK`` (relative), so the
certificate holds up to that solver accuracy, not in exact arithmetic.

Source of the problem and of NC's value: Garrod, Keating, Thrampoulidis (ICML 2026), Spec A
sections 1-3; the method is this package's (issue 30).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import linprog

from implicitbias.numerics.maxmargin.lower_bounds import outside_nuclear, sigma1_range, sigma1_split_bound, vertex_floor
from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.numerics.metrics.rank import svd
from implicitbias.theory import params

__all__ = ["concave_tail_min", "interval_bound", "DirectionProblem", "certified_minimum", "TailCertificate",
           "tail_certificate"]

SOLVER_SLACK = 1e-6  # relative allowance for the SDP solver's accuracy on each g(u, b), h(n, b)
TAIL_TOL = 5e-3  # the branch-and-bound stops when the certified minimum is this close to the best centre
WIDTH = 2e-3  # smallest relative width of a sigma_1 interval (the same as lower_bounds.SPLIT_WIDTH)
MIN_HALF = 1e-5  # boxes are not split below this half-width (a solver failing at every centre ends there)
MAX_CERT_K = 6  # the sphere of directions has dimension K - 2; beyond 6 the branch-and-bound is out of reach


def concave_tail_min(m: int, cap: float, total: float, p: float, floor: float = 0.0, top: float = 0.0,
                     p_high: float | None = None) -> float:
    r""":math:`\min \sum_{i=1}^m x_i^p` over :math:`c \ge x_1 \ge \dots \ge x_m \ge f`, :math:`x_1 \ge t_1`,
    :math:`\sum x_i \ge t` (``cap`` c, ``floor`` f, ``top`` t_1, ``total`` t; :math:`0 < p \le 1`).

    The objective is concave, so the minimum is at a vertex of the polytope: every choice of m
    active constraints is solved and the feasible solutions compared (m <= 3 here for the SDP
    route; the closed form ``lower_bounds.vertex_floor`` serves larger m when ``floor`` is 0).  ``inf`` when
    the polytope is empty.
    """
    if m == 0:
        return 0.0 if total <= 0 and top <= 0 else math.inf
    if floor <= 0 and m > 3 and p_high is None:
        return float(vertex_floor(m, cap, max(total, top), p))
    rows, rhs = [], []  # A x >= r
    for i in range(m):
        e = np.zeros(m)
        e[i] = -1
        rows.append(e), rhs.append(-cap)
        if i + 1 < m:
            d = np.zeros(m)
            d[i], d[i + 1] = 1, -1
            rows.append(d), rhs.append(0.0)
    last = np.zeros(m)
    last[-1] = 1
    first = np.zeros(m)
    first[0] = 1
    rows += [last, first, np.ones(m)]
    rhs += [max(floor, 0.0), top, total]
    A, r = np.array(rows), np.array(rhs)
    best = math.inf
    for active in itertools.combinations(range(len(r)), m):
        sub = A[list(active)]
        if abs(np.linalg.det(sub)) < 1e-12:
            continue
        x = np.linalg.solve(sub, r[list(active)])
        if np.all(A @ x >= r - 1e-12 * (1 + np.abs(r))):
            x = np.clip(x, 0, None)
            best = min(best, float(np.sum(x**p if p_high is None else np.minimum(x**p, x**p_high))))
    return best


def interval_bound(K: int, p: float, a: float, b: float, tau: float, mu: float, n0: float,
                   p_high: float | None = None) -> float:
    """Step 4 of the module docstring on sigma_1 in [a, b] (a >= 1), with tail bounds tau and mu; with
    ``p_high``, a bound at every exponent in [p, p_high] (each value to whichever power is smaller)."""
    return a**p + concave_tail_min(K - 2, b, max(tau, n0 - b), p, floor=mu, top=1 / b, p_high=p_high)


class DirectionProblem:
    r"""The SDPs :math:`g(u, b)` (``kind="tail"``) or :math:`h(n, b)` (``kind="last"``) of step 3.

    Built once per (K, kind) with cvxpy parameters for the direction and ``b`` (DPP: re-solved
    without recompiling).  ``value`` returns the optimum less ``SOLVER_SLACK``, or ``-inf`` when
    the solver fails or the problem is infeasible (``b`` below every feasible :math:`\sigma_1`):
    a lower bound either way.
    """

    def __init__(self, K: int, kind: str):
        import cvxpy as cp  # the only SDP in numerics; imported where used

        self.K, self.kind = K, kind
        self.basis = svd(np.eye(K) - np.ones((K, K)) / K)[0][:, : K - 1]  # orthonormal basis of 1^perp
        Z = cp.Variable((K, K))
        self.direction, self.b = cp.Parameter(K), cp.Parameter(nonneg=True)
        margins = [Z[k, k] - Z[c, k] >= 1 for k in range(K) for c in range(K) if c != k]
        constraints = [cp.sum(Z, axis=0) == 0, cp.sigma_max(Z) <= self.b, *margins]
        if kind == "tail":
            v = cp.Variable(K)
            rank_one = cp.reshape(self.direction, (K, 1), order="C") @ cp.reshape(v, (1, K), order="C")
            objective = cp.normNuc(Z - rank_one)
            constraints.append(cp.norm(v) <= self.b)
        else:
            objective = cp.norm(Z.T @ self.direction)
        self.problem = cp.Problem(cp.Minimize(objective), constraints)
        self.error = cp.error.SolverError
        self.solves = 0

    def value(self, direction: np.ndarray, b: float) -> float:
        """The SDP's optimum at the unit direction basis @ direction / |direction|, less the slack."""
        self.direction.value = self.basis @ (direction / np.linalg.norm(direction))
        self.b.value = b
        self.solves += 1
        try:
            with warnings.catch_warnings():  # an inaccurate solve is refused below (-inf), not warned about
                warnings.simplefilter("ignore", UserWarning)
                self.problem.solve(solver="CLARABEL")
        except self.error:
            return -math.inf  # a failed solve certifies nothing; the branch-and-bound splits the box
        if self.problem.status != "optimal" or self.problem.value is None:
            return -math.inf
        return float(self.problem.value) * (1 - SOLVER_SLACK)

    def touches_sorted_cone(self, facet: int, centre: np.ndarray, half: float) -> bool:
        """Whether the box (x_facet = 1, |x_j - centre_j| <= half) meets the cone of sorted
        directions or its negative (LP feasibility, scipy ``linprog``): boxes that do not are
        images of kept ones under a permutation and a sign, where g and h take the same values."""
        d = self.K - 1
        bounds = [(1.0, 1.0) if j == facet else None for j in range(d)]
        others = [j for j in range(d) if j != facet]
        for j, c in zip(others, centre):
            bounds[j] = (c - half, c + half)
        order = np.diff(self.basis, axis=0)  # (B x)_{i+1} - (B x)_i
        for sign in (1, -1):
            if linprog(np.zeros(d), A_ub=sign * order, b_ub=np.zeros(self.K - 1), bounds=bounds,
                       method="highs").status == 0:
                return True
        return False


def _cell_centre_radius(facet: int, centre: np.ndarray, half: float) -> tuple[np.ndarray, float]:
    """The direction of a gnomonic box (facet x_facet = 1) and the chord radius of its image on the sphere."""
    d = centre.size + 1

    def lift(y: np.ndarray) -> np.ndarray:
        x = np.insert(y, facet, 1.0)
        return x / np.linalg.norm(x)

    c = lift(centre)
    # the image of a box is geodesically convex, so its farthest point from c is a vertex
    far = min(float(c @ lift(centre + half * np.array(s))) for s in itertools.product((-1, 1), repeat=d - 1))
    return c, math.sqrt(max(0.0, 2 - 2 * far))


def certified_minimum(problem: DirectionProblem, b: float, required: float = math.inf, tol: float = TAIL_TOL,
                      start: int = 2) -> tuple[float, bool]:
    r"""A certified lower bound on :math:`\min_u` of ``problem`` at ``b`` (step 3), and whether it is
    within ``tol`` of the smallest value seen at a box centre (so no more effort can raise it much).

    Best-first branch-and-bound over the gnomonic boxes that meet the sorted cone; stops when the
    certified bound reaches ``required``, is within ``tol`` of the best centre value, the best
    centre value is below ``tol`` (a minimum of about 0 certifies nothing), or the boxes reach
    ``MIN_HALF``.  Every return is a lower bound: the smallest box bound when it stopped.
    """
    d = problem.K - 1
    heap = []
    for facet in range(d):
        for idx in itertools.product(range(start), repeat=d - 1):
            centre = -1 + (2 * np.array(idx) + 1) / start
            if problem.touches_sorted_cone(facet, centre, 1 / start):
                heap.append(_box(problem, b, facet, centre, 1 / start))
    heapq.heapify(heap)
    best = min((item[3] for item in heap if item[3] > -math.inf), default=math.inf)
    lower = 0.0
    while heap:
        lower, facet, centre, _, half = heap[0]
        if lower >= required or best - lower <= tol or best <= tol or half < MIN_HALF:
            return max(lower, 0.0), lower < required
        heapq.heappop(heap)
        for offset in itertools.product((-0.5, 0.5), repeat=d - 1):
            child_centre = np.array(centre) + half * np.array(offset)
            if problem.touches_sorted_cone(facet, child_centre, half / 2):
                child = _box(problem, b, facet, child_centre, half / 2)
                if child[3] > -math.inf:
                    best = min(best, child[3])
                heapq.heappush(heap, child)
    return max(lower, 0.0), True  # no child met the cone (it touched the box's boundary only): the last bound stands


def _box(problem: DirectionProblem, b: float, facet: int, centre: np.ndarray, half: float) -> tuple:
    direction, radius = _cell_centre_radius(facet, centre, half)
    g = problem.value(direction, b)
    return (g - radius * b, facet, tuple(centre), g, half)


@dataclass(frozen=True)
class TailCertificate:
    """A certified lower bound on P(K, L) (module docstring), with what it rests on.

    Attributes
    ----------
    K, L, L_high, p : the cell or depth range [L, L_high] (L weight matrices), p = 2/(L_high + 1).
    bound : certified lower bound on S_p over every feasible Zbar, at every depth of the range (<= K - 1).
    nc : K - 1, NC's value.
    gap : (nc - bound) / nc; 0 means NC is optimal (up to the SDP's accuracy).
    generic : the same split without SDPs (``sigma1_split_bound``).
    intervals : sigma_1 intervals; sdp_solves : SDPs solved; seconds : CPU seconds.
    worst : the sigma_1 interval (a, b) where the bound is attained.
    """

    K: int
    L: float
    L_high: float
    p: float
    bound: float
    nc: float
    gap: float
    generic: float
    intervals: int
    sdp_solves: int
    seconds: float
    worst: tuple[float, float]


def tail_certificate(K: int, L, width: float = WIDTH, tol: float = TAIL_TOL, L_high=None) -> TailCertificate:
    """Certify S_p >= bound on P(K, L) by steps 1-4 of the module docstring (3 <= K <= 6, real L >= 1);
    with ``L_high``, at every real depth in [L, L_high] at once (tau and mu do not depend on the depth;
    the sigma_1 range and N_0 are taken at L_high, each value raised to whichever exponent gives less).

    The sigma_1 range is split geometrically, halving an interval while its bound is below
    K - 1 and its relative width exceeds ``width``; tau(b) and mu(b) are certified once per
    right end b.  Cost grows with the sphere's dimension K - 2: 508 CPU s and 60,696 SDPs at
    K = 4, L = 2 (NC proved optimal); more than an hour at K = 5 (benchmarks/RESULTS.md,
    ``benchmarks/bench_tail_certificate.py``).
    """
    K = params.integer("K", K, minimum=3, maximum=MAX_CERT_K)
    L = params.real("L", L, minimum=1)
    L_high = L if L_high is None else params.real("L_high", L_high, minimum=L)
    p, p_high = schatten_exponent(L_high), (None if L_high == L else schatten_exponent(L))
    clock = time.process_time()
    n0, (lo, hi) = outside_nuclear(K, p), sigma1_range(K, p)
    nc = float(K - 1)
    problems = (_problem(K, "tail"), _problem(K, "last"))
    solves0 = sum(q.solves for q in problems)

    cache: dict[tuple[int, float], tuple[float, bool]] = {}

    def certified(which: int, b: float, required: float) -> float:
        """tau(b) (which = 0) or mu(b) (1), certified at least to ``required`` where possible.  Both
        do not increase with b (a larger b admits more Zbar), so a bound certified at any b' >= b
        holds at b: the largest of those is tried before any SDP is solved."""
        inherited = max((v for (w, c), (v, _) in cache.items() if w == which and c >= b), default=-math.inf)
        value, settled = cache.get((which, b), (-math.inf, False))
        if max(value, inherited) < required and not settled:
            value, settled = certified_minimum(problems[which], b, required, tol)
            cache[which, b] = (value, settled)
        return max(value, inherited)

    stack = [(lo, hi)]
    done: list[tuple[float, float, float]] = []
    while stack:
        a, b = stack.pop()
        bound = interval_bound(K, p, a, b, 0.0, 0.0, n0, p_high)
        if bound < nc:
            tau = certified(0, b, _required(lambda t: interval_bound(K, p, a, b, t, 0.0, n0, p_high), nc, (K - 2) * b))
            bound = interval_bound(K, p, a, b, tau, 0.0, n0, p_high)
            if bound < nc:
                mu = certified(1, b, _required(lambda m: interval_bound(K, p, a, b, tau, m, n0, p_high), nc, b))
                bound = interval_bound(K, p, a, b, tau, mu, n0, p_high)
        if bound < nc and b / a - 1 > width:
            mid = math.sqrt(a * b)
            stack += [(a, mid), (mid, b)]
        else:
            done.append((min(bound, nc), a, b))
    worst = min(done)
    return TailCertificate(K=K, L=float(L), L_high=float(L_high), p=p, bound=worst[0], nc=nc, gap=(nc - worst[0]) / nc,
                           generic=sigma1_split_bound(K, p, p_high=p_high), intervals=len(done),
                           sdp_solves=sum(q.solves for q in problems) - solves0,
                           seconds=time.process_time() - clock, worst=(worst[1], worst[2]))


def _required(bound, target: float, hi: float) -> float:
    """The smallest x in [0, hi] with bound(x) >= target (bisection; bound increases with x), or
    just above hi when none is (only an empty region can then certify the interval)."""
    if bound(hi) < target:
        return hi * (1 + 1e-9)
    lo = 0.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if bound(mid) < target else (lo, mid)
    return hi


@lru_cache(maxsize=8)
def _problem(K: int, kind: str) -> DirectionProblem:
    return DirectionProblem(K, kind)
