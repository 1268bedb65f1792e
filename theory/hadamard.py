"""Sylvester Hadamard matrices, Walsh characters and dyadic matrices (Spec A, section 4).

For K = 2^k the Sylvester Hadamard matrix is H_1 = [1], H_2m = [[H_m, H_m], [H_m, -H_m]], so

    (H_K)_{a b} = chi_b(a) = (-1)^{popcount(a AND b)},   Q = H_K / sqrt(K) orthogonal and symmetric.

chi_j is the Walsh character of j; chi_j(a) chi_j(b) = chi_j(a XOR b).  A K x K matrix is *dyadic*
when M_{ab} = f(a XOR b).  Every dyadic matrix is diagonalised by Q:

    M = Q diag(lambda) Q,  lambda_j = sum_m f(m) chi_j(m)            (Walsh-Hadamard transform),

and conversely Q diag(sigma) Q has entries (1/K) sum_j sigma_j chi_j(a XOR b).  Column-wise
softmax of a dyadic matrix is dyadic: P_{ab} = exp f(a XOR b) / sum_c exp f(c XOR b) and
c -> c XOR b permutes the classes, so the denominator is the same sum_m exp f(m) for every column.
Hence the cross-entropy gradient (P - I)/K of a dyadic logit matrix is dyadic, i.e. diagonal in
the basis Q.  ``softmax_dyadic_proof(K)`` checks this in exact symbolic arithmetic (sympy).

Source: Garrod, Keating, Thrampoulidis, arXiv 2512.04006 and 2605.23087 (the statement);
Sylvester (1867) for the construction.  scipy.linalg.hadamard builds the same matrix numerically.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy.linalg import hadamard

from implicitbias.theory import params

__all__ = [
    "DyadicProof",
    "column_softmax",
    "dyadic_defect",
    "dyadic_matrix",
    "softmax_dyadic_proof",
    "sylvester",
    "walsh_character",
]


def sylvester(K: int, symbolic: bool = False):
    """The Sylvester Hadamard matrix H_K (K a power of two >= 2), numpy int or sympy Matrix.

    Built by the recursion H_2m = [[H_m, H_m], [H_m, -H_m]] (scipy.linalg.hadamard).
    """
    K = params.power_of_two("K", K, minimum=2, maximum=2**14)
    H = hadamard(K)
    return sp.Matrix(H) if symbolic else H


def walsh_character(j: int, m) -> np.ndarray:
    """chi_j(m) = (-1)^{popcount(j AND m)} (vectorised over integer arrays m)."""
    return 1 - 2 * (np.bitwise_count(np.bitwise_and(np.asarray(m, dtype=np.int64), int(j))).astype(np.int64) & 1)


def dyadic_matrix(f):
    """M_{ab} = f[a XOR b] for a length-K sequence f (sympy Matrix if f holds sympy objects)."""
    K = params.power_of_two("K", len(f), minimum=2, maximum=2**14)
    idx = np.bitwise_xor.outer(np.arange(K), np.arange(K))
    if any(isinstance(v, sp.Basic) for v in f):
        return sp.Matrix(K, K, lambda a, b: f[int(idx[a, b])])
    return np.asarray(f)[idx]


def column_softmax(M: sp.Matrix) -> sp.Matrix:
    """Exact column-wise softmax P_{ab} = exp M_{ab} / sum_c exp M_{cb} of a sympy matrix."""
    E = M.applyfunc(sp.exp)
    totals = [sum(E[:, b]) for b in range(M.cols)]
    return sp.Matrix(M.rows, M.cols, lambda a, b: E[a, b] / totals[b])


def dyadic_defect(M: np.ndarray) -> float:
    """max_{a,b} |M_{ab} - M_{a XOR b, 0}| / max |M|: zero exactly for dyadic matrices (numeric)."""
    M = np.asarray(M, dtype=float)
    K = params.power_of_two("K", M.shape[0], minimum=2, maximum=2**14)
    idx = np.bitwise_xor.outer(np.arange(K), np.arange(K))
    return float(np.max(np.abs(M - M[idx, 0])) / max(np.max(np.abs(M)), np.finfo(float).tiny))


@dataclass
class DyadicProof:
    """Outcome of ``softmax_dyadic_proof``: each field is an exact sympy check."""

    K: int
    softmax_is_dyadic: bool  # P_{ab} - P_{a XOR b, 0} simplifies to 0 for every a, b
    gradient_is_diagonal: bool  # off-diagonal entries of H_K (P - I) H_K simplify to 0
    eigenvalues: list  # diagonal of H_K (P - I) H_K / K: Walsh transform of the gradient

    @property
    def holds(self) -> bool:
        return self.softmax_is_dyadic and self.gradient_is_diagonal


def softmax_dyadic_proof(K: int) -> DyadicProof:
    """Symbolic proof, for one K, that column-softmax of a dyadic logit matrix is dyadic.

    With symbols f_0 .. f_{K-1} (arbitrary real logits) and M_{ab} = f_{a XOR b}: compute
    P = column_softmax(M) exactly and check (i) P_{ab} = P_{a XOR b, 0} and (ii) the cross-entropy
    gradient (P - I) is diagonal in the Hadamard basis.  Exact for any K; practical up to K = 16.
    """
    K = params.power_of_two("K", K, minimum=2, maximum=16)
    f = sp.symbols(f"f0:{K}", real=True)
    P = column_softmax(dyadic_matrix(list(f)))
    idx = np.bitwise_xor.outer(np.arange(K), np.arange(K))
    softmax_dyadic = all(sp.simplify(P[a, b] - P[int(idx[a, b]), 0]) == 0 for a in range(K) for b in range(K))
    H = sylvester(K, symbolic=True)
    D = (H * (P - sp.eye(K)) * H).applyfunc(sp.cancel)
    off = all(D[a, b] == 0 for a in range(K) for b in range(K) if a != b)
    return DyadicProof(K, softmax_dyadic, off, [sp.simplify(D[j, j] / K) for j in range(K)])
