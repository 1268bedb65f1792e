"""Margins and Schatten objectives of logit matrices.

Conventions (Spec A, section 1): the logit matrix of a deep UFM with L weight matrices is
Z = W_L ... W_1 H (N = L + 1 factors), with K classes and n samples per class, columns ordered
class by class (column j has label j // n).  At an optimum the n columns of a class coincide, so
most objects here act on the mean-logit matrix Zbar in R^{K x K}, column k = logits of class k.

    margin of column j with label y:  min_{c != y} (z_{y j} - z_{c j})
    Schatten objective:               S_p(Z) = sum_i sigma_i(Z)^p,   p = 2 / (L + 1)
    representation cost:              (N/2) S_{2/N}(Z)  (Spec A, section 1)
"""

from __future__ import annotations

import math

import numpy as np

from implicitbias.numerics.metrics.rank import numerical_rank
from implicitbias.theory import params
from implicitbias.theory.representation_cost import schatten_exponent as exact_exponent

__all__ = [
    "labels",
    "class_means",
    "margins",
    "min_margin",
    "unit_margin",
    "schatten_objective",
    "schatten_exponent",
]


def schatten_exponent(L: float) -> float:
    """p = 2 / (L + 1) for depth L >= 1 (L counts weight matrices; N = L + 1 factors), as a float;
    0 for L = inf (the p -> 0 limit of Theorem 3.2).  The formula's one home is the exact
    ``implicitbias.theory.representation_cost.schatten_exponent``; this is its value, correctly
    rounded."""
    if L == math.inf:
        return 0.0
    return float(exact_exponent(L))


def labels(K: int, n: int = 1) -> np.ndarray:
    """Labels of the K n columns, class by class: [0]*n + [1]*n + ..."""
    return np.repeat(np.arange(K), n)


def class_means(Z: np.ndarray, n: int) -> np.ndarray:
    """Mean logits per class, Zbar in R^{K x K} (column k = mean of the n columns of class k)."""
    Z = np.asarray(Z, dtype=float)
    K = Z.shape[0]
    return Z.reshape(K, K, n).mean(axis=2)


def margins(Z: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """Per-column margins min_{c != y_j} (z_{y_j j} - z_{c j}); ``y`` defaults to 0..K-1."""
    Z = np.asarray(Z, dtype=float)
    y = np.arange(Z.shape[1]) if y is None else np.asarray(y)
    cols = np.arange(Z.shape[1])
    true = Z[y, cols]
    others = Z.copy()
    others[y, cols] = -np.inf
    return true - others.max(axis=0)


def min_margin(Z: np.ndarray, y: np.ndarray | None = None) -> float:
    """The smallest margin over all columns."""
    return float(margins(Z, y).min())


def unit_margin(Z: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """Z rescaled so that its smallest margin is exactly 1 (requires a positive margin)."""
    gamma = min_margin(Z, y)
    if not gamma > 0:
        raise ValueError(f"Z does not separate the classes (min margin {gamma:g})")
    return np.asarray(Z, dtype=float) / gamma


def schatten_objective(Z: np.ndarray, p: float, rtol: float = 0.0) -> float:
    """S_p(Z) = sum_i sigma_i(Z)^p, singular values from an SVD (p > 0).

    Singular values <= rtol * sigma_1 count as zero.  For small p the rounding-level singular
    values of an exactly low-rank matrix (~1e-16 sigma_1) would otherwise add (1e-16)^p each,
    which is not small (0.004 at p = 0.15); ``rtol = max(shape) * machine epsilon`` is numpy's
    ``matrix_rank`` tolerance.
    """
    p = params.real("p", p, minimum=0, open_minimum=True)
    rtol = params.real("rtol", rtol, minimum=0, maximum=1)
    s = np.linalg.svd(np.asarray(Z, dtype=float), compute_uv=False)
    return float(np.sum(s[: numerical_rank(s, rtol)] ** p))
