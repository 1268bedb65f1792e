"""Alignment of the initial logit velocity with the simplex ETF (Theorem 4.5).

Deep UFM with Gaussian init (``deep_ufm.gaussian_init``: entries N(0, scale^2/d)), K classes, n per
class, width d, depth L = number of weight matrices (N = L + 1 factors).  Under gradient flow the
logits move with dZ/dt = J_Z(theta)(-grad l) (computed by torch.func.jvp).  Near the origin
-grad_Z l = (Y - P)/(Kn) ~ (I - 11^T/K) kron 1_n^T / (Kn), and

    dZ/dt = sum_l A_l A_l^T (-grad_Z l) B_l^T B_l,  A_l = W_L .. W_{l+1},  B_l = W_{l-1} .. H,

with A_l A_l^T and B_l^T B_l concentrating around multiples of the identity as d grows (fluctuations
O(d^{-1/2})).  So cos(dZ/dt, S kron 1_n^T) -> 1 with the chordal gap
||v/|v| - E/|E|||_F = sqrt(2 - 2 cos) = O(d^{-1/2}) (1 - cos = O(1/d)); every extra factor adds
fluctuations, so the cosine falls with depth.  ``etf_direction`` is the target; ``fit_exponent``
fits gap ~ C d^beta by least squares in log-log (the measurement itself is the Theorem 4.5 claim's
cell, ``implicitbias.claims.depth.theorem_4_5``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["alignment", "etf_direction", "fit_exponent"]


def etf_direction(K: int, n: int) -> np.ndarray:
    """S kron 1_n^T with S = I - 11^T/K: the NC (simplex ETF) direction of the K x Kn logits."""
    return np.kron(np.eye(K) - 1.0 / K, np.ones((1, n)))


def alignment(velocity: np.ndarray, n: int) -> tuple[float, float]:
    """(cos, gap) of a K x Kn logit velocity with ``etf_direction(K, n)``; gap = sqrt(2 - 2 cos)."""
    v = np.asarray(velocity, dtype=float)
    e = etf_direction(v.shape[0], n)
    cos = float(np.sum(v * e) / (np.linalg.norm(v) * np.linalg.norm(e)))
    return cos, float(np.sqrt(max(2.0 - 2.0 * cos, 0.0)))


def fit_exponent(d, gap) -> tuple[float, float]:
    """(beta, C) of the least-squares fit log gap = log C + beta log d."""
    beta, logc = np.polyfit(np.log(np.asarray(d, dtype=float)), np.log(np.asarray(gap, dtype=float)), 1)
    return float(beta), float(np.exp(logc))
