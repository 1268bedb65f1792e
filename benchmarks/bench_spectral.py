"""Spectral ODE vs full-matrix gradient flow, and the largest K the spectral integrator handles in 10 s.

Part 1: the same trajectory (Hadamard init, per-layer singular values exp(N(-0.1, 0.2^2)), run until
the margin reaches 5) integrated (a) by the derived per-layer spectral ODE (LSODA, log
coordinates) and (b) by the full-matrix gradient flow (DOP853 on every entry of every factor,
torch autograd), both at the same relative tolerance.  Prints wall times, the speed-up and the
largest relative disagreement of the logit singular values (the accuracy both routes share).

Part 2: balanced spectral flow for growing K (L = 4, n = 1, perturbed-NC start at scale 1e-2,
until margin 5); the largest K finishing within 10 s.

Run:  python benchmarks/bench_spectral.py [--quick]
L counts weight matrices (N = L + 1 factors).
"""

from __future__ import annotations

import argparse
import platform
import time

from implicitbias.figures import markdown_table
from implicitbias.claims.depth.singular_value_ode import flow_cell
from implicitbias.numerics.ufm.spectral_flow import integrate, perturbed_nc
from implicitbias.theory.spectral_ode import SpectralODE


def compare(K: int, L: int, d: int, rtol: float) -> list:
    rec = flow_cell(
        {"K": K, "L": L, "d": d, "n": 1, "seed": 0, "log_scale": -0.1, "margin": 5.0, "points": 20, "rtol": rtol}
    )
    return [
        K,
        L,
        d,
        f"{rtol:.0e}",
        f"{rec['T']:.3g}",
        f"{rec['spectral_seconds']:.3f}",
        f"{rec['full_seconds']:.2f}",
        f"{rec['full_seconds'] / rec['spectral_seconds']:.0f}x",
        f"{rec['max_rel_error']:.1e}",
        f"{rec['max_off_diagonal_factors']:.1e}",
    ]


def largest_k(budget: float = 10.0, L: int = 4) -> list[list]:
    rows, K = [], 64
    while K <= 8192:
        start = time.perf_counter()
        system = SpectralODE(K, L)
        run = integrate(system, perturbed_nc(K, 1e-2, 0.3, 0), 1e12, margin=5.0, rtol=1e-8, atol=1e-10)
        seconds = time.perf_counter() - start
        rows.append([K, L, run.event, f"{run.times[-1]:.3g}", f"{seconds:.2f}"])
        if seconds > budget:
            break
        K *= 2
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (K = 16, d = 32, L = 4)")
    args = parser.parse_args()
    print(
        f"# bench_spectral  {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  {platform.machine()}  Python {platform.python_version()}"
    )
    cases = [(16, 4, 32)] if args.quick else [(16, 4, 32), (64, 8, 256)]
    rows = [compare(K, L, d, 1e-8) for K, L, d in cases]
    print(
        markdown_table(
            [
                "K",
                "L",
                "d",
                "rtol",
                "T (margin 5)",
                "spectral s",
                "full-matrix s",
                "speed-up",
                "max rel. diff S_j",
                "off-diag mass",
            ],
            rows,
        )
    )
    print()
    print(markdown_table(["K", "L", "stopped by", "T", "seconds"], largest_k(2.0 if args.quick else 10.0)))


if __name__ == "__main__":
    main()
