"""Basin of attraction of neural collapse for the balanced Hadamard flow (Spec A, section 4).

Start from a perturbed NC spectrum S_j(0) = scale * exp(eps * xi_j), j = 1..K-1, xi_j i.i.d.
N(0, 1) (seeded), integrate the derived balanced singular-value ODE (``spectral_flow``; depth L =
number of weight matrices, N = L + 1 factors) until the smallest margin reaches ``margin`` (or
``t_end``), and call the start "at NC" when the Roy-Vetterli effective rank of the final mean-logit
spectrum is at least K - 1 - ``tolerance`` (NC has rank K - 1).  Spec A: depth shrinks the basin.
"""

from __future__ import annotations

from implicitbias.numerics.ufm.spectral_flow import integrate, perturbed_nc
from implicitbias.theory.spectral_ode import SpectralODE

__all__ = ["basin_cell"]


def basin_cell(config: dict) -> dict:
    """Cell: {"K", "L", "n", "scale", "eps", "seed", "margin", "t_end", "tolerance"} -> final rank, KL, at_nc."""
    system = SpectralODE(config["K"], config["L"], config["n"], balanced=True)
    run = integrate(
        system,
        perturbed_nc(config["K"], config["scale"], config["eps"], config["seed"]),
        config["t_end"],
        margin=config["margin"],
        rtol=1e-8,
        atol=1e-10,
    )
    rank = float(run.effective_rank[-1])
    return {
        "effective_rank": rank,
        "kl_to_nc": float(run.kl[-1]),
        "margin": float(run.margin[-1]),
        "time": float(run.times[-1]),
        "at_nc": bool(rank >= config["K"] - 1 - config["tolerance"]),
    }
