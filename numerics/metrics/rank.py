"""Effective rank of a matrix, several definitions (Spec A, section 5).

With singular values sigma_i and q_i = sigma_i / sum_j sigma_j:

- ``roy_vetterli`` (primary; Roy & Vetterli 2007): exp(H(q)), H the Shannon entropy.
- ``roy_vetterli_squared``: the same with q_i = sigma_i^2 / sum_j sigma_j^2.
- ``stable``: ||A||_F^2 / ||A||_2^2 = sum sigma_i^2 / sigma_1^2.
- ``threshold``: number of sigma_i > tol * sigma_1 (default tol 1e-3).

All equal r on a matrix with r equal non-zero singular values.

``numerical_rank`` is the package's one rank cut-off policy: a singular value counts when it
exceeds ``rtol`` times the largest.  Callers choose ``rtol`` by purpose: ``RANK_RTOL`` (1e-6) for
the rank of a solver's output (its discarded directions are at the solver's tolerance), 1e-3
for the ``threshold`` effective rank of trained networks, and numpy's ``matrix_rank`` tolerance
max(shape) * eps where rounding noise must not count (Schatten objectives at small p).

``svd`` is the package's one SVD with singular vectors for the max-margin solvers: LAPACK's gesdd
(divide and conquer), and gesvd on the rare matrix where gesdd does not converge, both through scipy.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from implicitbias.theory import params

__all__ = ["effective_rank", "effective_ranks", "numerical_rank", "svd", "DEFINITIONS", "RANK_RTOL"]

DEFINITIONS = ("roy_vetterli", "roy_vetterli_squared", "stable", "threshold")
RANK_RTOL = 1e-6  # relative cut-off for the rank of a solver's output
_GESDD = scipy.linalg.lapack.dgesdd


def numerical_rank(s, rtol: float = RANK_RTOL) -> int:
    """Number of singular values ``s`` (sorted descending) above ``rtol * s[0]``; 0 for a zero matrix."""
    s = np.asarray(s, dtype=float)
    return int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0


def svd(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A = U diag(s) V^T, full matrices: (U, s, Vt), s descending.

    LAPACK's divide-and-conquer gesdd, the driver ``numpy.linalg.svd`` calls, through scipy's raw
    wrapper: the solvers call this hundreds of thousands of times per atlas, on matrices from 3 x 3
    to 32 x 32, where numpy's Python around the call cost 5 of the 9 us of a 4 x 4 SVD.  gesdd can
    fail to converge on a finite, well-scaled matrix (met in the K = 28, effort 6, seed 3 search: a
    28 x 28 gap matrix with entries below 7, OpenBLAS 0.3.31); then the slower QR-iteration driver
    gesvd decides.  A non-finite matrix raises ``numpy.linalg.LinAlgError``.
    """
    A = np.asarray(A, dtype=float)
    U, s, Vt, info = _GESDD(A)
    if info == 0:
        return U, s, Vt
    if not np.isfinite(A).all():
        raise np.linalg.LinAlgError(f"SVD of a matrix with non-finite entries (LAPACK gesdd info {info})")
    return scipy.linalg.svd(A, lapack_driver="gesvd", check_finite=False)


def _entropy_rank(weights: np.ndarray) -> float:
    total = weights.sum()
    if total <= 0:
        return 0.0
    q = weights[weights > 0] / total
    return float(np.exp(-np.sum(q * np.log(q))))


def effective_rank(A: np.ndarray, definition: str = "roy_vetterli", tol: float = 1e-3) -> float:
    """Effective rank of ``A`` under ``definition`` (one of ``DEFINITIONS``)."""
    params.choice("definition", definition, DEFINITIONS)
    s = np.linalg.svd(np.asarray(A, dtype=float), compute_uv=False)
    if definition == "roy_vetterli":
        return _entropy_rank(s)
    if definition == "roy_vetterli_squared":
        return _entropy_rank(s**2)
    if s[0] == 0:
        return 0.0
    if definition == "stable":
        return float(np.sum(s**2) / s[0] ** 2)
    return float(numerical_rank(s, tol))


def effective_ranks(A: np.ndarray, tol: float = 1e-3) -> dict[str, float]:
    """All definitions at once, keyed by name."""
    return {d: effective_rank(A, d, tol) for d in DEFINITIONS}
