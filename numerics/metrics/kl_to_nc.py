"""KL divergence of a logit spectrum to neural collapse (Spec A, section 4; our definition).

Neural collapse has a mean-logit matrix proportional to I - 11^T/K: its top K - 1 singular values
are equal (the K-th is 0).  With sigma_1 >= ... >= sigma_{K-1} the top K - 1 singular values of
the mean-logit matrix (or the K - 1 active Hadamard modes S_j, j != 0), q_i = sigma_i / sum sigma,
and u the uniform distribution on K - 1 points, we use

    KL_NC = KL(u || q) = sum_i (1/(K-1)) log( (1/(K-1)) / q_i ) = -log(K-1) - mean_i log q_i  >= 0,

zero exactly at NC and +infinity when a singular value vanishes, so it grows without bound when the
spectrum goes low rank (the direction KL(q || u) = log(K-1) - log(Roy-Vetterli rank) is bounded
by log(K-1) and cannot show divergence).  The source names no divergence; this is the choice.
"""

from __future__ import annotations

import numpy as np

from implicitbias.theory import params

__all__ = ["kl_to_nc", "kl_to_nc_of_matrix"]


def kl_to_nc(spectrum) -> float:
    """KL(uniform || sigma / sum sigma) of a non-negative spectrum of length K - 1 >= 1."""
    s = np.asarray(spectrum, dtype=float).ravel()
    if s.size < 1 or not np.isfinite(s).all() or (s < 0).any() or s.sum() <= 0:
        raise params.ParameterError("spectrum must be finite, non-negative and not all zero")
    q = s / s.sum()
    with np.errstate(divide="ignore"):
        return float(-np.log(s.size) - np.mean(np.log(q)))


def kl_to_nc_of_matrix(Zbar) -> float:
    """``kl_to_nc`` of the top K - 1 singular values of a K x K mean-logit matrix."""
    Zbar = np.asarray(Zbar, dtype=float)
    if Zbar.ndim != 2 or Zbar.shape[0] != Zbar.shape[1] or Zbar.shape[0] < 2:
        raise params.ParameterError(f"Zbar must be a square K x K matrix with K >= 2, got shape {Zbar.shape}")
    return kl_to_nc(np.linalg.svd(Zbar, compute_uv=False)[:-1])
