"""Naming a solution of P(K, L) from its invariants, never from the code that produced it.

Zbar in R^{K x K} (column k = logits of class k) is first rescaled to minimum margin 1.  Its
invariants: rank and singular values (from an SVD), the class vectors H and classifier rows W
of the balanced factorisation Zbar = W H^T (their Gram matrices (Z^T Z)^(1/2), (Z Z^T)^(1/2) do
not depend on the choice of singular vectors), the distinct cosines between class vectors, and
the symmetry group of Zbar: the relabellings of the classes that fix it, with its order and its
orbits (vertex-transitive: one orbit) (``symmetry.symmetry_group``).

A matrix gets a geometric name when it *is* a known configuration: the candidates with K points (NC = the simplex,
the regular K-gon, the cross-polytope (+ a singleton for odd K), every entry of the catalogue
``implicitbias.theory.polytopes``, and every entry with a singleton or an antipodal pair added on a new axis) whose
unit-margin logit matrix has the same spectrum are tested for equality up to relabelling (``symmetry.isomorphic``).
Otherwise it is named by its invariants: ``rank-r code, |Aut| = g``.  Rotations and orderings of the classes cannot
change a name.  Depth L (weight matrices, p = 2/(L + 1)) does not enter; the same structure is recognised at every
depth where it is optimal.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from implicitbias.numerics.maxmargin import polytopes
from implicitbias.numerics.maxmargin.codes import CODES, class_vectors
from implicitbias.numerics.maxmargin.margin import unit_margin
from implicitbias.numerics.maxmargin.symmetry import _stable, colour_classes, isomorphic, symmetry_group
from implicitbias.numerics.metrics.rank import numerical_rank

__all__ = ["Identification", "identify", "known_structures", "SPECTRUM_RTOL", "ENTRY_RTOL"]

SPECTRUM_RTOL = 1e-5  # singular values of a solver output are accurate to ~1e-7 relative
ENTRY_RTOL = 1e-4  # entries (relative to the largest) within this are equal for the symmetry group


@dataclass(frozen=True)
class Identification:
    """What a matrix is: its name, the key of its closed form ('' if none), and its invariants."""

    name: str
    key: str
    rank: int
    singular_values: tuple[float, ...]
    order: int
    orbit_sizes: tuple[int, ...]
    cosines: tuple[float, ...]
    equal_spectrum: bool
    symmetric: bool

    @property
    def vertex_transitive(self) -> bool:
        return len(self.orbit_sizes) == 1

    def summary(self) -> dict:
        return {
            "name": self.name,
            "key": self.key,
            "rank": self.rank,
            "aut_order": self.order,
            "orbit_sizes": list(self.orbit_sizes),
            "vertex_transitive": self.vertex_transitive,
            "equal_spectrum": self.equal_spectrum,
            "symmetric": self.symmetric,
            "cosines": list(self.cosines),
        }


def known_structures(K: int) -> list[tuple[str, str, np.ndarray]]:
    """``(key, name, Zbar)`` of every named configuration with K points (unit margin)."""
    out = [("nc", "NC (simplex)", CODES["nc"](K))]
    if K >= 3:
        name = "regular 3-gon" if K == 3 else f"regular {K}-gon"
        out.append(("kgon", name, CODES["kgon"](K)))
    if K >= 4:
        out.append(("cross_polytope", "cross-polytope" if K % 2 == 0 else "cross-polytope + singleton",
                    CODES["cross_polytope"](K)))
    out += [(name, name, Z) for name, Z in polytopes.with_vertices(K) + polytopes.augmented(K)]
    return out


def _cosines(Z: np.ndarray) -> tuple[float, ...]:
    _, H = class_vectors(Z)
    norms = np.linalg.norm(H, axis=1)
    cos = (H @ H.T) / np.outer(norms, norms)
    values = np.sort(cos[~np.eye(len(Z), dtype=bool)])
    distinct = [values[0]]
    for v in values[1:]:
        if v - distinct[-1] > 1e-6:
            distinct.append(v)
    return tuple(round(float(v), 6) for v in distinct)


def identify(Z: np.ndarray, group: bool = True) -> Identification:
    """Name and invariants of Zbar (any positive scale; see the module docstring).

    ``group=False`` (large K, ``phase`` above ``low_rank.LOW_RANK_K``): the symmetry group is not
    computed (``order`` is 0) and ``orbit_sizes`` are the sizes of the colour-refinement classes
    (unions of orbits: one class is necessary, not sufficient, for vertex-transitivity); a named
    configuration is still exact (spectrum and isomorphism).  Identical matrices are named once per
    process (``_identify``: a column's NC cells share one matrix, whose symmetry group is the costly part).
    """
    Z = np.ascontiguousarray(Z, dtype=float)
    return _identify(Z.tobytes(), Z.shape, group)


@lru_cache(maxsize=256)
def _identify(data: bytes, shape: tuple[int, ...], group: bool) -> Identification:
    Z = unit_margin(np.frombuffer(data).reshape(shape))
    K = Z.shape[0]
    s = np.linalg.svd(Z, compute_uv=False)
    r = numerical_rank(s)
    if group:
        found = symmetry_group(Z, ENTRY_RTOL)
        order, sizes, name = found.order, found.orbit_sizes, f"rank-{r} code, |Aut| = {found.order}"
    else:
        classes = _stable(colour_classes(Z, ENTRY_RTOL), {})
        order, sizes = 0, tuple(sorted(np.unique(classes, return_counts=True)[1].tolist(), reverse=True))
        name = f"rank-{r} code, WL classes = {len(sizes)}"
    key = ""
    for cand_key, cand_name, cand in known_structures(K):
        sc = np.linalg.svd(cand, compute_uv=False)
        if np.allclose(s, sc, rtol=SPECTRUM_RTOL, atol=SPECTRUM_RTOL * s[0]) and isomorphic(Z, cand, ENTRY_RTOL):
            key, name = cand_key, cand_name
            break
    return Identification(
        name=name,
        key=key,
        rank=r,
        singular_values=tuple(float(x) for x in s[:r]),
        order=order,
        orbit_sizes=sizes,
        cosines=_cosines(Z),
        equal_spectrum=bool(np.ptp(s[:r]) <= SPECTRUM_RTOL * s[0]),
        symmetric=bool(np.allclose(Z, Z.T, atol=ENTRY_RTOL * np.abs(Z).max())),
    )
