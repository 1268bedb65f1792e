"""Numerical linearisation of the balanced spectral flow at the NC ray (Theorem 4.3 cross-check).

Independent of the closed form in ``implicitbias.theory.nc_stability``: the Jacobian of the derived
system is assembled numerically (``SpectralODE.jac``: Hadamard matrices and the softmax of the
actual K) at S_j = sqrt(n) gamma for all j = 1..K-1, restricted to sum-zero perturbations (an
orthonormal basis from scipy.linalg.null_space), and its eigenvalues are the transverse rates.
The threshold is the root in gamma of the largest transverse rate (scipy.optimize.brentq).
L counts weight matrices (N = L + 1 factors).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import null_space
from scipy.optimize import brentq

from implicitbias.theory.spectral_ode import SpectralODE

__all__ = ["numeric_threshold", "numeric_transverse_eigenvalues"]


def numeric_transverse_eigenvalues(system: SpectralODE, margin: float) -> np.ndarray:
    """Eigenvalues of the numerical log-coordinate Jacobian on the NC ray at ``margin``, sum-zero subspace."""
    S = margin * np.sqrt(system.n)
    J = system.jac(0.0, np.full(system.K - 1, np.log(S)))
    B = null_space(np.ones((1, system.K - 1)))
    return np.linalg.eigvals(B.T @ J @ B).real


def numeric_threshold(K: int, L: int, n: int = 1) -> float:
    """Margin where the largest numerical transverse eigenvalue changes sign (0 if never positive).

    Bracket [1e-3, K]: the closed form puts it at K (L-1)/(L+1) < K.
    """
    system = SpectralODE(K, L, n)

    def rate(m):
        return numeric_transverse_eigenvalues(system, m).max()

    if rate(1e-3) <= 0:
        return 0.0
    return float(brentq(rate, 1e-3, float(K), xtol=1e-12))
