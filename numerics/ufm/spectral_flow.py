"""Integrate the derived singular-value ODEs of the deep UFM (solve_ivp, log coordinates).

The system is ``implicitbias.theory.spectral_ode.SpectralODE`` (derived with sympy): K = 2^k
classes, depth L = number of weight matrices (N = L + 1 factors including the features), n
samples per class, balanced (state log S_j, j = 1..K-1) or per-layer (state log s_{l,j}).

Integration uses scipy.integrate.solve_ivp with LSODA by default (switches between a non-stiff
Adams method and stiff BDF automatically, using the analytic Jacobian when stiff); Radau and BDF
are available.  Log coordinates keep large norms and fast growth well scaled.  Events: the
smallest logit margin reaching a target (``margin``), and a guard that stops the run once
some log-singular value exceeds ``max_log`` (a numerical blow-up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from implicitbias.numerics.metrics.kl_to_nc import kl_to_nc
from implicitbias.numerics.metrics.rank import effective_rank
from implicitbias.theory import params
from implicitbias.theory.spectral_ode import SpectralODE

__all__ = ["SpectralTrajectory", "integrate", "perturbed_nc"]

METHODS = ("LSODA", "Radau", "BDF", "DOP853", "RK45")


@dataclass
class SpectralTrajectory:
    """times (T,), state (T, dim) in log coordinates, logit singular values S (T, K-1), margin (T,).

    ``event`` names why the run stopped early ("margin", "blow-up") or is None.
    """

    system: SpectralODE
    times: np.ndarray
    state: np.ndarray
    singular_values: np.ndarray
    margin: np.ndarray
    success: bool
    message: str
    event: str | None

    @property
    def effective_rank(self) -> np.ndarray:
        """Roy-Vetterli effective rank of the mean-logit matrix along the trajectory."""
        return np.array([effective_rank(np.diag(s)) for s in self.singular_values])

    @property
    def kl(self) -> np.ndarray:
        """KL divergence to NC along the trajectory (``implicitbias.numerics.metrics.kl_to_nc``)."""
        return np.array([kl_to_nc(s) for s in self.singular_values])


def integrate(
    system: SpectralODE,
    initial,
    t_end: float,
    *,
    t_eval: Sequence[float] | None = None,
    margin: float | None = None,
    max_log: float = 600.0,
    method: str = "LSODA",
    rtol: float = 1e-10,
    atol: float = 1e-12,
) -> SpectralTrajectory:
    """Integrate ``system`` from positive singular values ``initial`` (shape ``system.shape``).

    Stops at ``t_end``, when the smallest margin reaches ``margin`` (if given), or when some
    log singular value exceeds ``max_log``.  ``t_eval`` as in solve_ivp (default: the
    integrator's own steps).
    """
    x0 = system.initial_state(initial)
    t_end = params.real("t_end", t_end, minimum=0, open_minimum=True)
    max_log = params.real("max_log", max_log, minimum=0, open_minimum=True)
    method = params.choice("method", method, METHODS)
    events, names = [], []
    if margin is not None:
        target = params.real("margin", margin)

        def reached(_t, x):
            return system.margin(x) - target

        reached.terminal, reached.direction = True, 1
        events.append(reached)
        names.append("margin")

    def blow_up(_t, x):
        return max_log - np.max(x)

    blow_up.terminal, blow_up.direction = True, -1
    events.append(blow_up)
    names.append("blow-up")
    kwargs = {"jac": system.jac} if method in ("LSODA", "Radau", "BDF") else {}
    sol = solve_ivp(
        system.rhs, (0.0, t_end), x0, method=method, t_eval=t_eval, rtol=rtol, atol=atol, events=events, **kwargs
    )
    times, state = sol.t, sol.y.T
    fired = [name for name, te in zip(names, sol.t_events) if len(te)]
    if fired:  # append the state at the event (t_eval may stop short of it)
        i = names.index(fired[0])
        times = np.append(times, sol.t_events[i][0])
        state = np.vstack([state, sol.y_events[i][0]])
    S = np.array([system.logit_singular_values(x) for x in state])
    margins = np.array([system.margin(x) for x in state])
    return SpectralTrajectory(
        system, times, state, S, margins, bool(sol.success), str(sol.message), fired[0] if fired else None
    )


def perturbed_nc(K: int, scale: float, eps: float, seed) -> np.ndarray:
    """A perturbed NC spectrum S_j = scale * exp(eps * xi_j), j = 1..K-1, xi ~ N(0, 1) from ``seed``."""
    scale = params.real("scale", scale, minimum=0, open_minimum=True)
    eps = params.real("eps", eps, minimum=0)
    return scale * np.exp(eps * np.random.default_rng(seed).standard_normal(params.integer("K", K, minimum=2) - 1))
