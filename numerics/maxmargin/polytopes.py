"""Named polytopes as feasible logit matrices of P(K, L) (float), from the exact catalogue.

``implicitbias.theory.polytopes`` holds the exact points (or Gram matrix) of each named
configuration; here they become the symmetric code Zbar = G / m (G = V V^T, centred; m its
smallest margin), the matrix the search starts from and the naming compares with.  L counts
weight matrices (N = L + 1); depth does not enter.  A catalogue entry with K + 1 points less one vertex
(``less_a_vertex``) is a feasible code of K classes, and a start of the searches.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from implicitbias.numerics.maxmargin.margin import unit_margin
from implicitbias.theory import params
from implicitbias.theory.polytopes import CATALOGUE, float_gram, names_with_vertices

__all__ = ["logits", "with_vertices", "less_a_vertex"]


def _code(G: np.ndarray) -> np.ndarray:
    """The symmetric code of a Gram matrix: columns centred, scaled to minimum margin 1."""
    return unit_margin(G - G.mean(axis=0, keepdims=True))


@lru_cache(maxsize=None)
def _logits(name: str) -> np.ndarray:
    return _code(float_gram(name))


def logits(name: str) -> np.ndarray:
    """Zbar of the named configuration: centred Gram matrix scaled to minimum margin 1."""
    params.choice("name", name, CATALOGUE)
    return _logits(name).copy()


def with_vertices(K: int) -> list[tuple[str, np.ndarray]]:
    """``(name, Zbar)`` for every catalogue configuration with K points."""
    return [(name, logits(name)) for name in names_with_vertices(K)]


def less_a_vertex(K: int) -> list[tuple[str, np.ndarray]]:
    """``(<name> less a vertex, Zbar)`` for every catalogue configuration with K + 1 points, its first point
    deleted (every entry is vertex-transitive, so which one does not matter): the Gram matrix of the other K
    points as a code (``_code``).  Deleting a class keeps every margin among the others.  At K = 31, L = 2
    the 8-orthoplex Hadamard antiprism less a vertex is the best code of the exact searches at efforts 1-8 and
    seeds 0-4 (its symmetry group, of order 1344, is the stabiliser of a vertex in the antiprism's, of order
    43008), which the default's rank-7 codes missed by 2.8e-4."""
    K = params.integer("K", K, minimum=2, maximum=100_000)
    return [(f"{name} less a vertex", _code(float_gram(name)[1:, 1:])) for name in names_with_vertices(K + 1)]
