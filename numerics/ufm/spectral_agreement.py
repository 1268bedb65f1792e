"""How far a full-matrix deep UFM is from the Hadamard (spectral) structure of Spec A, section 4.

With Q = H_K / sqrt(K), E = Q kron 1_n / sqrt(n) and the orthogonal R_0, ..., R_{L-1} of a
Hadamard initialisation (``deep_ufm.hadamard_bases``; L counts weight matrices, N = L + 1
factors), the gradient flow keeps every factor of the form

    R_0^T H E,   R_l^T W_l R_{l-1} (0 < l < L),   Q^T W_L R_{L-1}          (all diagonal)

and the logits Q^T Z E diagonal with the logit singular values S_j on the diagonal.
``rotated_blocks`` returns those matrices for given factors; ``off_diagonal_mass`` measures how
far one is from diagonal.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["off_diagonal_mass", "rotated_blocks", "sample_basis"]


def off_diagonal_mass(B: np.ndarray) -> float:
    """||B - diag(B)||_F / ||B||_F for a rectangular B."""
    off = np.array(B, dtype=float)
    k = min(off.shape)
    off[np.arange(k), np.arange(k)] = 0
    return float(np.linalg.norm(off) / np.linalg.norm(B))


def sample_basis(Q: np.ndarray, n: int) -> np.ndarray:
    """E = Q kron 1_n / sqrt(n) (Kn x K): the right singular vectors of class-collapsed logits."""
    return np.kron(Q, np.ones((n, 1)) / np.sqrt(n))


def rotated_blocks(factors: Sequence[np.ndarray], Q: np.ndarray, R: Sequence[np.ndarray], n: int) -> list[np.ndarray]:
    """[R_0^T H E, R_1^T W_1 R_0, ..., Q^T W_L R_{L-1}] for factors [H, W_1, ..., W_L] (numpy)."""
    L = len(factors) - 1
    E = sample_basis(Q, n)
    return (
        [R[0].T @ factors[0] @ E]
        + [R[l].T @ factors[l] @ R[l - 1] for l in range(1, L)]
        + [Q.T @ factors[L] @ R[L - 1]]
    )
