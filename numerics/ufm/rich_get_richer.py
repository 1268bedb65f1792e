"""Near-origin checks of Theorem 4.4 on the integrated (nonlinear) balanced spectral ODE.

``leave_origin_cell``: from S_j = S_0 for all j (K classes, depth L = number of weight matrices,
N = L + 1 factors, n per class) integrate until the margin reaches level / sqrt(n) (S = level),
and compare the measured time with the closed-form hitting time T*(S_0) - T*(level) of the growth
law and with the blow-up time T*(S_0) (``implicitbias.theory.linear_regime``).
``ratio_cell``: from S_j = S_0 (1 + spread j/(K-2)), the ratio S_max/S_min at times
frac * T*(max S_0) from the integrated ODE and from the closed-form solution.
"""

from __future__ import annotations

import numpy as np

from implicitbias.numerics.ufm.spectral_flow import integrate
from implicitbias.theory.linear_regime import blowup_time, linear_solution
from implicitbias.theory.spectral_ode import SpectralODE

__all__ = ["leave_origin_cell", "ratio_cell"]


def leave_origin_cell(config: dict) -> dict:
    """Cell {"K", "L", "n", "S0", "level"} -> measured and closed-form times to reach S = level."""
    K, L, n, S0, level = config["K"], config["L"], config["n"], config["S0"], config["level"]
    run = integrate(SpectralODE(K, L, n), np.full(K - 1, S0), 1e15, margin=level / np.sqrt(n))
    return {
        "reached": run.event == "margin",
        "measured": float(run.times[-1]),
        "hitting_closed_form": float(blowup_time(S0, K, L, n) - blowup_time(level, K, L, n)),
        "blowup_closed_form": float(blowup_time(S0, K, L, n)),
    }


def ratio_cell(config: dict) -> dict:
    """Cell {"K", "L", "n", "S0", "spread", "points"} -> times, S_max/S_min integrated and closed form."""
    K, L, n = config["K"], config["L"], config["n"]
    S0 = config["S0"] * np.linspace(1.0, 1.0 + config["spread"], K - 1)
    horizon = blowup_time(S0.max(), K, L, n) if L > 1 else K * np.sqrt(n) * np.log(1e4) / 2
    times = np.linspace(0.0, 0.95 * float(horizon), config["points"])
    run = integrate(SpectralODE(K, L, n), S0, times[-1], t_eval=times)
    closed = linear_solution(S0[None, :], times[:, None], K, L, n)
    return {
        "times": times,
        "ratio": run.singular_values[:, -1] / run.singular_values[:, 0],
        "ratio_closed_form": closed[:, -1] / closed[:, 0],
    }
