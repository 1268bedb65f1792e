"""Spherical codes as starting points of P(K, L): K unit vectors in R^r spread apart.

The optima of P(K, L) found so far are logit matrices Zbar = W H^T whose class vectors are close
to well-separated spherical codes (Spec A, section 2: rank-r softmax codes; the icosahedron at
K = 12, the square antiprism at K = 8, ...).  A symmetric code V (rows v_k, unit norm) gives the
feasible logit matrix

    Zbar = P V V^T / (1 - max_{c != k} <v_c, v_k>),   P = I - 11^T/K,

with margins |v_k|^2 - <v_c, v_k> = 1 - cos(v_c, v_k) >= 1 after the scaling (column-centring
changes no margin).  ``repulsion_code`` spreads K points on the sphere S^{r-1} by minimising the
Riesz energy

    E_s(V) = sum_{c < k} |v_c - v_k|^{-s},

for growing s (s -> infinity is the Tammes problem, maximise the smallest distance), by L-BFGS
(scipy) on unnormalised rows v_k / |v_k|.  Depth does not enter: these are starts; the solver
(``implicitbias.numerics.maxmargin.solver.polish``) moves them to the optimum of each depth
(L weight matrices, p = 2/(L + 1)).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from implicitbias.numerics.maxmargin.codes import centre_columns
from implicitbias.numerics.maxmargin.margin import unit_margin
from implicitbias.theory import params

__all__ = ["RIESZ_EXPONENTS", "repulsion_code", "code_logits", "random_unit_vectors"]

RIESZ_EXPONENTS = (8.0, 64.0)  # energy exponents s, warm-started: spread, then Tammes-like


def random_unit_vectors(K: int, r: int, rng: np.random.Generator) -> np.ndarray:
    """K independent uniform points on S^{r-1} (rows)."""
    V = rng.standard_normal((K, r))
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def _log_energy(x: np.ndarray, K: int, r: int, s: float, iu) -> tuple[float, np.ndarray]:
    """log E_s of the normalised rows of x, and its gradient (scale-free, overflow-safe)."""
    V = x.reshape(K, r)
    norms = np.linalg.norm(V, axis=1, keepdims=True)
    U = V / norms
    d2 = np.maximum(2.0 - 2.0 * (U @ U.T)[iu], 1e-300)  # squared distances of unit vectors
    dmin = d2.min()
    w = (d2 / dmin) ** (-s / 2)  # energy terms relative to the closest pair
    total = w.sum()
    value = float(np.log(total) - (s / 2) * np.log(dmin))
    coef = np.zeros((K, K))
    coef[iu] = s * w / (total * d2)  # d value / d <u_c, u_k>
    coef += coef.T
    gU = coef @ U
    gV = (gU - U * np.sum(gU * U, axis=1, keepdims=True)) / norms  # through u = v / |v|
    return value, gV.ravel()


def repulsion_code(K: int, r: int, seed=0, exponents=RIESZ_EXPONENTS, maxiter: int = 100) -> np.ndarray:
    """K unit vectors in R^r (rows) from a random start by Riesz-energy minimisation.

    The exponents are raised along ``exponents``, each stage warm-started; ``seed`` (an int or a
    numpy Generator) draws the start, so different seeds give different local optima of the
    energy.  Hand-written energy and gradient: scipy has no spherical-code routine.
    """
    K = params.integer("K", K, minimum=2, maximum=4096)
    r = params.integer("r", r, minimum=1, maximum=K)
    rng = np.random.default_rng(seed)
    x = random_unit_vectors(K, r, rng).ravel()
    iu = np.triu_indices(K, 1)
    for s in exponents:
        x = minimize(_log_energy, x, args=(K, r, float(s), iu), jac=True, method="L-BFGS-B",
                     options={"maxiter": maxiter}).x
    V = x.reshape(K, r)
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def code_logits(V: np.ndarray) -> np.ndarray:
    """The feasible logit matrix of a symmetric code: P V V^T scaled to minimum margin 1."""
    V = np.asarray(V, dtype=float)
    return unit_margin(centre_columns(V @ V.T))
