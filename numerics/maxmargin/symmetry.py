"""The symmetry group of a code: relabellings of the classes that leave its logit matrix fixed.

For Zbar in R^{K x K} (column k = logits of class k, unit margin), a permutation pi of the
classes is a symmetry when Zbar[pi(c), pi(k)] = Zbar[c, k] for every c, k (within a relative
tolerance): the relabelled classifier applied to the relabelled features gives the same logits.
This is the symmetry group of the configuration of class vectors and classifier rows together,
computed from the matrix alone (no coordinates, so rotations do not matter).

Algorithm: the entries are grouped into classes of equal value (``colour_classes``), which makes
Zbar an edge-coloured complete digraph; its automorphism group is computed by the
orbit-stabiliser chain |Aut| = prod_i |orbit of b_i under the stabiliser of b_1, ..., b_{i-1}|,
where each orbit is found by asking, for every candidate image v of b_i, whether some
automorphism fixes b_1..b_{i-1} and maps b_i to v.  That question is answered by
individualisation-refinement (the method of McKay's nauty): individualise the prescribed points,
refine colours (1-dimensional Weisfeiler-Leman on the coloured digraph) in both copies with one
shared dictionary, give up when the colour counts differ, otherwise individualise a point of the
smallest non-trivial cell against each candidate of its colour and recurse; a discrete colouring
is checked directly.  Once refinement separates every class the stabiliser is trivial and the
chain stops.  Written by hand: no installed library computes automorphism groups of
edge-coloured digraphs (networkx's VF2 search was tried first and takes minutes for the 24-cell,
which has 1152 symmetries).  Depth does not enter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Symmetry", "colour_classes", "symmetry_group", "isomorphic"]


@dataclass(frozen=True)
class Symmetry:
    """Order of the symmetry group and its orbits on the classes (sorted, largest first)."""

    order: int
    orbits: tuple[tuple[int, ...], ...]

    @property
    def vertex_transitive(self) -> bool:
        return len(self.orbits) == 1

    @property
    def orbit_sizes(self) -> tuple[int, ...]:
        return tuple(len(o) for o in self.orbits)


def colour_classes(values: np.ndarray, tol: float = 1e-6) -> np.ndarray:
    """Integer labels of ``values`` such that values within ``tol`` (relative to the largest
    magnitude) share a label; labels increase with the value."""
    values = np.asarray(values, dtype=float)
    flat = values.ravel()
    order = np.argsort(flat)
    scale = tol * max(1.0, float(np.abs(flat).max()))
    labels = np.empty(flat.size, dtype=int)
    label, previous = 0, None
    for idx in order:
        if previous is not None and flat[idx] - previous > scale:
            label += 1
        labels[idx] = label
        previous = flat[idx]
    return labels.reshape(values.shape)


def _refine(C1: np.ndarray, col1: np.ndarray, C2: np.ndarray, col2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Colour refinement of two coloured digraphs together (shared colour names), to stability.

    A class's new colour is its old colour with the multisets of (edge colour, neighbour colour)
    of its out- and in-edges; both graphs use one dictionary, so equal colours mean equal
    signatures across the graphs.
    """
    K = C1.shape[0]
    off = ~np.eye(K, dtype=bool)
    while True:
        sigs = []
        for C, col in ((C1, col1), (C2, col2)):
            width = int(col.max()) + 1
            out = np.sort(np.where(off, C * width + col[None, :], -1), axis=1)
            into = np.sort(np.where(off, C.T * width + col[None, :], -1), axis=1)
            sigs.append([(int(col[k]), out[k].tobytes(), into[k].tobytes()) for k in range(K)])
        ids = {sig: i for i, sig in enumerate(sorted(set(sigs[0]) | set(sigs[1])))}
        new1 = np.array([ids[x] for x in sigs[0]])
        new2 = np.array([ids[x] for x in sigs[1]])
        if len(set(new1.tolist())) == len(set(col1.tolist())):
            return new1, new2
        col1, col2 = new1, new2


def _extends(C1: np.ndarray, col1: np.ndarray, C2: np.ndarray, col2: np.ndarray) -> bool:
    """Is there a colour-preserving isomorphism C1 -> C2 (individualisation-refinement search)?"""
    col1, col2 = _refine(C1, col1, C2, col2)
    if sorted(col1.tolist()) != sorted(col2.tolist()):
        return False
    values, counts = np.unique(col1, return_counts=True)
    if counts.max() == 1:
        image = {int(c): v for v, c in enumerate(col2)}
        perm = np.array([image[int(c)] for c in col1])
        return bool(np.array_equal(C2[np.ix_(perm, perm)], C1))
    cell = values[np.argmin(np.where(counts > 1, counts, C1.shape[0] + 1))]
    k = int(np.flatnonzero(col1 == cell)[0])
    fresh = int(max(col1.max(), col2.max())) + 1
    for v in np.flatnonzero(col2 == cell):
        a, b = col1.copy(), col2.copy()
        a[k] = b[v] = fresh
        if _extends(C1, a, C2, b):
            return True
    return False


def _maps(C: np.ndarray, fixed: list[int], source: int, target: int) -> bool:
    """Is there a symmetry fixing ``fixed`` pointwise and sending ``source`` to ``target``?"""
    base = np.diagonal(C).astype(int).copy()
    top = int(C.max()) + 1
    first, second = base.copy(), base.copy()
    for i, b in enumerate(fixed):
        first[b] = second[b] = top + i
    first[source] = second[target] = top + len(fixed)
    return _extends(C, first, C, second)


def _stable(C: np.ndarray, marks: dict[int, int]) -> np.ndarray:
    col = np.diagonal(C).astype(int).copy()
    top = int(C.max()) + 1
    for b, i in marks.items():
        col[b] = top + i
    return _refine(C, col, C, col)[0]


def symmetry_group(Z: np.ndarray, tol: float = 1e-6) -> Symmetry:
    """Order and orbits of the group of class relabellings fixing Zbar (module docstring)."""
    C = colour_classes(Z, tol)
    K = C.shape[0]
    if np.unique(np.diagonal(C)).size == 1 and np.unique(C[~np.eye(K, dtype=bool)]).size == 1:
        # one diagonal and one off-diagonal colour (NC, the simplex): every relabelling fixes Zbar.  The
        # chain below takes O(K^3) refinements to find the K! of them: 1.2 of the atlas's 10.6 s at K = 32
        return Symmetry(math.factorial(K), (tuple(range(K)),))
    # orbits of the whole group
    orbits: list[list[int]] = []
    seen: set[int] = set()
    colours = _stable(C, {})
    for k in range(K):
        if k in seen:
            continue
        orbit = [k] + [v for v in range(k + 1, K) if v not in seen and colours[v] == colours[k] and _maps(C, [], k, v)]
        seen.update(orbit)
        orbits.append(orbit)
    # order by the orbit-stabiliser chain
    order, fixed = 1, []
    while len(fixed) < K:
        marks = {b: i for i, b in enumerate(fixed)}
        colours = _stable(C, marks).tolist()
        if len(set(colours)) == K:
            break
        counts = {c: colours.count(c) for c in colours}
        base = min((k for k in range(K) if k not in marks), key=lambda k: (counts[colours[k]] == 1, k))
        if not fixed:
            size = len(next(o for o in orbits if base in o))
        else:
            size = 1 + sum(_maps(C, fixed, base, v) for v in range(K)
                           if v != base and v not in marks and colours[v] == colours[base])
        order *= size
        fixed.append(base)
    ordered = tuple(tuple(o) for o in sorted(orbits, key=lambda o: (-len(o), o)))
    return Symmetry(order, ordered)


def isomorphic(Z1: np.ndarray, Z2: np.ndarray, tol: float = 1e-6) -> bool:
    """Is Z2 = Z1 relabelled (Z2[pi(c), pi(k)] = Z1[c, k] for some permutation pi)?"""
    Z1, Z2 = np.asarray(Z1, dtype=float), np.asarray(Z2, dtype=float)
    if Z1.shape != Z2.shape:
        return False
    C = colour_classes(np.stack([Z1, Z2]), tol)
    if sorted(C[0].ravel().tolist()) != sorted(C[1].ravel().tolist()):
        return False
    return _extends(C[0], np.diagonal(C[0]).copy(), C[1], np.diagonal(C[1]).copy())
