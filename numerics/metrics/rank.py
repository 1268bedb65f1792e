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
"""

from __future__ import annotations

import numpy as np

from implicitbias.theory import params

__all__ = ["effective_rank", "effective_ranks", "numerical_rank", "DEFINITIONS", "RANK_RTOL"]

DEFINITIONS = ("roy_vetterli", "roy_vetterli_squared", "stable", "threshold")
RANK_RTOL = 1e-6  # relative cut-off for the rank of a solver's output


def numerical_rank(s, rtol: float = RANK_RTOL) -> int:
    """Number of singular values ``s`` (sorted descending) above ``rtol * s[0]``; 0 for a zero matrix."""
    s = np.asarray(s, dtype=float)
    return int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0


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
