"""Closed-form candidate codes of P(K, L) as explicit K x K matrices, and shared helpers.

Zbar in R^{K x K}: column k = logits of class k; margin of column k = min_{c != k} Zbar_kk -
Zbar_ck.  P(K, L) minimises S_p(Zbar) = sum sigma_i^p, p = 2/(L + 1), L = number of weight
matrices (N = L + 1 factors including the features), subject to margins >= 1 (Spec A, s. 1-2).
Every code here is column-centred and scaled to minimum margin exactly 1; the exact objectives
are in ``implicitbias.theory.codes``.

- ``simplex_etf``: NC, I - 11^T/K.
- ``kgon_code``: rank 2, Zbar_ck = cos(2 pi (c - k)/K) / (1 - cos(2 pi/K)).
- ``cross_polytope_code``: antipodal pairs (2i, 2i+1) on +-e_i, plus one singleton for odd K.
- ``class_vectors``: balanced factors W, H of Zbar = W H^T (classifier rows, class vectors).
- ``less_a_class``: the code of the other K - 1 classes, one class deleted.

Named polytopes are in ``polytopes``, spherical (repulsion) codes of every rank in ``spherical``,
the naming of a matrix from its invariants in ``naming``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg  # noqa: F401  (loads scipy's own BLAS, so that the controller below sees it)
from threadpoolctl import ThreadpoolController

from implicitbias.numerics.maxmargin.margin import unit_margin
from implicitbias.numerics.metrics.rank import RANK_RTOL, numerical_rank, svd
from implicitbias.theory import params

__all__ = [
    "simplex_etf",
    "kgon_code",
    "cross_polytope_code",
    "CODES",
    "centre_columns",
    "class_vectors",
    "less_a_class",
    "single_threaded",
]


# Decorator: run with one BLAS/OpenMP thread.  The optimisers here call BLAS on tiny matrices
# thousands of times; a multi-threaded BLAS on a shared machine spends milliseconds per call
# spinning threads (measured 7x slower on the 2-core dev VM under load).  The controller only
# limits libraries loaded when it is created: scipy ships its own OpenBLAS (used by L-BFGS-B),
# imported above; without it a search burned 14x its useful CPU time in spinning threads.
single_threaded = ThreadpoolController().wrap(limits=1)


def _k(K) -> int:
    return params.integer("K", K, minimum=2, maximum=4096)


def centre_columns(Z: np.ndarray) -> np.ndarray:
    """P Z with P = I - 11^T/K: every column shifted to sum zero (margins unchanged)."""
    Z = np.asarray(Z, dtype=float)
    return Z - Z.mean(axis=0, keepdims=True)


def less_a_class(Z: np.ndarray, k: int) -> np.ndarray:
    """The code of the other classes: row and column k of Zbar deleted, columns centred, scaled to margin 1.

    Deleting a class keeps every margin Zbar_jj - Zbar_cj among the others (c, j != k), and centring a column
    shifts its entries alike, so a feasible code of K classes gives a feasible code of K - 1."""
    Z = np.asarray(Z, dtype=float)
    k = params.integer("k", k, minimum=0, maximum=Z.shape[0] - 1)
    keep = np.delete(np.arange(Z.shape[0]), k)
    return unit_margin(centre_columns(Z[np.ix_(keep, keep)]))


def simplex_etf(K: int) -> np.ndarray:
    """Neural collapse: Zbar = I - 11^T/K (margin 1, K - 1 singular values 1)."""
    K = _k(K)
    return np.eye(K) - 1.0 / K


def kgon_code(K: int) -> np.ndarray:
    """Regular K-gon: Zbar_ck = cos(2 pi (c - k)/K) scaled to margin 1 (rank 2; rank 1 at K = 2)."""
    K = _k(K)
    idx = np.arange(K)
    return unit_margin(np.cos(2 * np.pi * (idx[:, None] - idx[None, :]) / K))


def cross_polytope_code(K: int) -> np.ndarray:
    """Cross-polytope: classes 2i, 2i+1 at +-e_i, odd K adds a singleton e_{m+1}; rank ceil(K/2).

    K >= 3 (at K = 2 the pair alone is NC with margin 2 to the antipode).
    """
    K = params.integer("K", K, minimum=3, maximum=4096)
    V = np.zeros((K, (K + 1) // 2))
    for k in range(K):
        V[k, k // 2] = -1.0 if k % 2 else 1.0
    return unit_margin(centre_columns(V @ V.T))


CODES = {"nc": simplex_etf, "kgon": kgon_code, "cross_polytope": cross_polytope_code}


def class_vectors(Z: np.ndarray, tol: float = RANK_RTOL) -> tuple[np.ndarray, np.ndarray]:
    """Balanced factors of Zbar = W H^T: W = U S^(1/2) (classifier rows), H = V S^(1/2).

    Trimmed to the numerical rank.  The Gram matrices W W^T = (Z Z^T)^(1/2) and
    H H^T = (Z^T Z)^(1/2) do not depend on the choice of singular vectors.
    """
    U, s, Vt = svd(np.asarray(Z, dtype=float))
    r = numerical_rank(s, tol)
    root = np.sqrt(s[:r])
    return U[:, :r] * root, Vt[:r].T * root


