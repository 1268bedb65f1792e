"""Benchmark: the P(K, L) solver against deep-UFM gradient descent on the same cells, side by side.

For each cell, ``implicitbias.numerics.maxmargin.gd_crosscheck.gd_crosscheck`` trains the full deep UFM
(L weight matrices, N = L + 1 factors; width 2K, n = 1, normalised GD with steps of length lr
until the loss is below 1e-250) and times it, then times the multi-start solver (effort 1) in the
same process.  Printed: GD's unit-margin objective and structure, the solver's objective of the
same structure, the relative gap, both times and the ratio GD seconds / solver seconds (the
target is >= 100x).  GD seconds are to the loss target, not to the first step within 1%.

``--census``: what gradient descent finds, K = 4..10 x L = 2..6 (``gd_census.census_cell``,
``--seeds`` seeds per cell, batched), next to the optimum of each cell (the phase columns of the
default search, the same store records as ``implicitbias phase``); both go through the store
named by ``--store`` (default: $IMPLICITBIAS_STORE), so a killed run resumes.  Printed: the
frequency table and the GD seconds per cell.
Usage: python benchmarks/bench_gd_vs_solver.py [--census] [--seeds 32] [--store PATH]
"""

from __future__ import annotations

import argparse
import os
import time

from implicitbias.atlas import census_markdown, census_rows
from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin import gd_census
from implicitbias.numerics.maxmargin.cells import CensusCell
from implicitbias.numerics.maxmargin.gd_crosscheck import gd_crosscheck
from implicitbias.numerics.maxmargin.phase import KIND, cells_of, phase_column, phase_configs
from implicitbias.store import Store, default_store_path

CELLS = ({"K": 4, "L": 3}, {"K": 6, "L": 2}, {"K": 6, "L": 3}, {"K": 8, "L": 4, "scale": 0.3})


def census(seeds: int, store_path) -> None:
    """The GD census table (module docstring)."""
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    with Store(store_path or default_store_path()) as store:
        columns = store.map(KIND, phase_column, phase_configs(10, 12, kmin=4), desc="phase columns")
        records = store.map(gd_census.KIND, gd_census.census_cell,
                            [gd_census.census_config(K, L, seeds=seeds) for K in range(4, 11) for L in range(2, 7)],
                            desc="GD census")
    print(census_markdown(census_rows([CensusCell.from_record(r) for r in records], cells_of(columns))))
    print()
    print(markdown_table(["K", "L", "seeds", "GD seconds (batched)", "unseparated"],
                         [[r["K"], r["L"], r["seeds"], f"{r['gd_seconds']:.1f}", r["unseparated"]] for r in records]))
    print(f"\nwall {time.perf_counter() - t0:.0f} s; load average (1 min) before / after: "
          f"{load_before:.1f} / {os.getloadavg()[0]:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--census", action="store_true")
    ap.add_argument("--seeds", type=int, default=32)
    ap.add_argument("--store", default=None)
    args = ap.parse_args()
    if args.census:
        census(args.seeds, args.store)
        return
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
