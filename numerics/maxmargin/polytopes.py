"""Named polytopes as feasible logit matrices of P(K, L) (float), from the exact catalogue.

``implicitbias.theory.polytopes`` holds the exact points (or Gram matrix) of each named
configuration; here they become the symmetric code Zbar = G / m (G = V V^T, centred; m its
smallest margin), the matrix the search starts from and the naming compares with.  L counts
weight matrices (N = L + 1); depth does not enter.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from implicitbias.numerics.maxmargin.margin import unit_margin
from implicitbias.theory import params
from implicitbias.theory.polytopes import CATALOGUE, float_gram, names_with_vertices

__all__ = ["logits", "with_vertices"]


@lru_cache(maxsize=None)
def _logits(name: str) -> np.ndarray:
    G = float_gram(name)
    return unit_margin(G - G.mean(axis=0, keepdims=True))


def logits(name: str) -> np.ndarray:
    """Zbar of the named configuration: centred Gram matrix scaled to minimum margin 1."""
    params.choice("name", name, CATALOGUE)
    return _logits(name).copy()


def with_vertices(K: int) -> list[tuple[str, np.ndarray]]:
    """``(name, Zbar)`` for every catalogue configuration with K points."""
    return [(name, logits(name)) for name in names_with_vertices(K)]
