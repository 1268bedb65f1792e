"""Benchmark: the P(K, L) solver against deep-UFM gradient descent on the same cells, side by side.

For each cell, ``implicitbias.numerics.maxmargin.gd_crosscheck.gd_crosscheck`` trains the full deep UFM
(L weight matrices, N = L + 1 factors; width 2K, n = 1, normalised GD with steps of length lr
until the loss is below 1e-250) and times it, then times the multi-start solver (effort 1) in the
same process.  Printed: GD's unit-margin objective and structure, the solver's objective of the
same structure, the relative gap, both times and the ratio GD seconds / solver seconds (the
target is >= 100x).  GD seconds are to the loss target, not to the first step within 1%.
Usage: python benchmarks/bench_gd_vs_solver.py
"""

from __future__ import annotations

import os

from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin.gd_crosscheck import gd_crosscheck

CELLS = ({"K": 4, "L": 3}, {"K": 6, "L": 2}, {"K": 6, "L": 3}, {"K": 8, "L": 4, "scale": 0.3})


def main() -> None:
    load_before = os.getloadavg()[0]
    rows = []
    for cell in CELLS:
        r = gd_crosscheck(cell)
        rows.append(
            [
                r["K"],
                r["L"],
                r["scale"],
                f"{r['gd_objective']:.5f} ({r['gd_structure']})",
                f"{r['solver_objective']:.5f} ({r['solver_structure']})",
                f"{r['gap']:.2%}",
                "yes" if abs(r["gap"]) <= 0.01 else "no",
                r["gd_steps"],
                f"{r['gd_seconds']:.2f}",
                f"{r['solver_seconds']:.3f}",
                f"{r['ratio']:.0f}x",
            ]
        )
    header = ["K", "L", "init scale", "GD objective", "solver, same structure", "gap", "within 1%", "GD steps"]
    print(markdown_table([*header, "GD s", "solver s", "GD / solver"], rows))
    print(f"\nload average (1 min) before / after: {load_before:.1f} / {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
