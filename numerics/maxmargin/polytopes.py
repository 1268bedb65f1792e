"""Named polytopes as feasible logit matrices of P(K, L) (float), from the exact catalogue.

``implicitbias.theory.polytopes`` holds the exact points (or Gram matrix) of each named
configuration; here they become the symmetric code Zbar = G / m (G = V V^T, centred; m its
smallest margin), the matrix the search starts from and the naming compares with.  L counts
weight matrices (N = L + 1); depth does not enter.  A catalogue entry with K + 1 points less one vertex
(``less_a_vertex``) is a feasible code of K classes, and a start of the searches; one with K - 1 or K - 2 points
and a singleton or an antipodal pair on a new axis (``augmented``) is a named code of K classes.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.linalg import block_diag

from implicitbias.numerics.maxmargin.codes import centre_columns, less_a_class
from implicitbias.numerics.maxmargin.margin import unit_margin
from implicitbias.theory import params
from implicitbias.theory.codes import AUGMENTED, augmented_with_vertices
from implicitbias.theory.polytopes import CATALOGUE, float_gram, names_with_vertices

__all__ = ["logits", "with_vertices", "less_a_vertex", "augmented"]
EXTRA_BLOCKS = {"singleton": np.ones((1, 1)), "antipodal pair": np.array([[1.0, -1.0], [-1.0, 1.0]])}


def _code(G: np.ndarray) -> np.ndarray:
    """The symmetric code of a Gram matrix: columns centred, scaled to minimum margin 1."""
    return unit_margin(centre_columns(G))


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
    deleted (every entry is vertex-transitive, so which one does not matter; ``codes.less_a_class``).  Deleting a
    class keeps every margin among the others.  At K = 31, L = 2 the 8-orthoplex Hadamard antiprism less a vertex is
    the best code of the exact searches at efforts 1-8 and seeds 0-4 (its symmetry group, of order 1344, is the
    stabiliser of a vertex in the antiprism's, of order 43008), which the default's rank-7 codes missed by 2.8e-4."""
    K = params.integer("K", K, minimum=2, maximum=100_000)
    return [(f"{name} less a vertex", less_a_class(_logits(name), 0)) for name in names_with_vertices(K + 1)]


def augmented(K: int) -> list[tuple[str, np.ndarray]]:
    """``(<name> + singleton | + antipodal pair, Zbar)`` for every catalogue entry with K - 1 | K - 2 points: the
    entry's unit-margin code G / m beside one class, or two antipodal ones, of unit norm on a new axis (the Gram
    matrix block-diagonal), as a code (``_code``).  Its closed form is ``theory.codes``'s (the spectrum of the
    entry plus sqrt((K - 1)/K), or plus 2).  At L = 2 the 5-demicube and the Schlafli polytope 2_21 with a singleton
    or a pair are the optima found at K = 17, 18, 28 and 29."""
    K = params.integer("K", K, minimum=2, maximum=100_000)
    return [(key, _augmented(key).copy()) for key in augmented_with_vertices(K)]


@lru_cache(maxsize=None)
def _augmented(key: str) -> np.ndarray:
    """The code of one entry with added classes, built once per process: every cell of an atlas asks for the named
    codes of its K (``naming.known_structures``)."""
    name, extra = AUGMENTED[key]
    return _code(block_diag(logits(name), EXTRA_BLOCKS[extra]))
