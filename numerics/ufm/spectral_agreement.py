"""The derived spectral ODE against the full-matrix gradient flow on the same trajectory.

From one Hadamard initialisation with random per-layer singular values s (shape (L+1, K); L counts weight
matrices, N = L + 1 factors) the spectral ODE (``spectral_flow``) is integrated to the time T at
which the margin reaches ``margin``; the full-matrix flow (``deep_ufm.gradient_flow``, every entry
of every factor, torch autograd) is integrated over [0, T] at the same times.  The record holds
the largest relative error of the logit singular values, the largest relative off-diagonal mass of
Q^T Z (Q kron 1_n/sqrt n) and of every rotated factor, and the wall time of each route.
"""

from __future__ import annotations

import time

import numpy as np

from implicitbias.numerics.ufm import deep_ufm
from implicitbias.numerics.ufm.spectral_flow import integrate
from implicitbias.theory.spectral_ode import SpectralODE

__all__ = ["off_diagonal_mass", "spectral_vs_full"]


def off_diagonal_mass(B: np.ndarray) -> float:
    """||B - diag(B)||_F / ||B||_F for a rectangular B."""
    off = np.array(B, dtype=float)
    k = min(off.shape)
    off[np.arange(k), np.arange(k)] = 0
    return float(np.linalg.norm(off) / np.linalg.norm(B))


def spectral_vs_full(config: dict) -> dict:
    """Cell {"K", "L", "d", "n", "seed", "log_scale", "margin", "points", "rtol"} -> errors and timings.

    Per-layer singular values s_{l,j} = exp(N(log_scale, 0.2^2)) from ``seed``; both routes use
    relative tolerance ``rtol`` (absolute rtol/100); timings cover the integration over [0, T].
    """
    K, L, d, n = config["K"], config["L"], config["d"], config["n"]
    rng = np.random.default_rng(config["seed"])
    s = np.exp(rng.normal(config["log_scale"], 0.2, (L + 1, K)))
    system = SpectralODE(K, L, n, balanced=False)
    reach = integrate(system, s[:, 1:], 1e9, margin=config["margin"])
    T = float(reach.times[-1])
    times = np.linspace(0.0, T, config["points"])
    start = time.perf_counter()
    spectral = integrate(system, s[:, 1:], T, t_eval=times, rtol=config["rtol"], atol=config["rtol"] * 1e-2)
    spectral_seconds = time.perf_counter() - start
    factors = deep_ufm.hadamard_init(s, d=d, n=n, seed=config["seed"])
    start = time.perf_counter()
    full = deep_ufm.gradient_flow(factors, T, t_eval=times, rtol=config["rtol"], atol=config["rtol"] * 1e-2)
    full_seconds = time.perf_counter() - start
    Q, R = deep_ufm.hadamard_bases(K, L, d, seed=config["seed"])
    E = np.kron(Q, np.ones((n, 1)) / np.sqrt(n))
    rel_error, off_logits = 0.0, 0.0
    for Z, S in zip(full.logits, spectral.singular_values):
        D = Q.T @ Z @ E
        off_logits = max(off_logits, off_diagonal_mass(D))
        rel_error = max(rel_error, float(np.max(np.abs(np.diag(D)[1:] - S) / S)))
    th = [f.numpy() for f in full.factors]
    blocks = [R[0].T @ th[0] @ E] + [R[l].T @ th[l] @ R[l - 1] for l in range(1, L)] + [Q.T @ th[L] @ R[L - 1]]
    final = np.exp(spectral.state[-1].reshape(L + 1, K - 1))
    layer_error = max(float(np.max(np.abs(np.diag(B)[1:K] - final[l]) / final[l])) for l, B in enumerate(blocks))
    return {
        "T": T,
        "reached_margin": bool(reach.event == "margin"),
        "final_margin": float(spectral.margin[-1]),
        "full_success": full.success,
        "max_rel_error": rel_error,
        "max_layer_rel_error": layer_error,
        "max_off_diagonal_logits": off_logits,
        "max_off_diagonal_factors": max(off_diagonal_mass(B) for B in blocks),
        "spectral_seconds": spectral_seconds,
        "full_seconds": full_seconds,
    }
