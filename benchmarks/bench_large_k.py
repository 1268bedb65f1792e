"""Benchmark: the large-K route of P(K, L) against the exact search, and the columns K = 50, 100.

P(K, L): minimise S_p(Zbar) = sum_i sigma_i^p, p = 2/(L + 1) (L weight matrices, N = L + 1
factors), s.t. margins Zbar_kk - Zbar_ck >= 1.

1. Agreement: for K in ``--agree`` and L = 2..``--lmax``, the rank-r route
   (``numerics.maxmargin.low_rank.large_search``, run here directly at K <= 32, where the phase
   diagram uses the exact search) against the default column of the phase diagram (exact
   search with the low-rank ladder), both at depths 1..lmax: relative difference and ranks.
2. The columns ``--large`` (default 50 and 100) of ``ib.phase_diagram(K=..., L=range(1, lmax + 1))``,
   which go to the rank-r route above ``low_rank.LOW_RANK_K``: per cell the verdict, value, rank,
   name, certified lower bound; CPU s of each column (search + cells) and wall s.

Every record goes through the store (``--store``; use a temporary one), so a killed run resumes.
Printed: markdown tables for benchmarks/RESULTS.md.
Usage: python benchmarks/bench_large_k.py [--agree 8 12 16 24 32] [--large 50 100] [--lmax 6] --store PATH
"""

from __future__ import annotations

import argparse
import functools
import os
import time

import implicitbias as ib
from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin.low_rank import large_search
from implicitbias.numerics.maxmargin.phase import cells_of, column_config, phase_diagram
from implicitbias.store import Store

TOL = 1e-6  # relative: "equal"
KIND = "bench.large-k-agreement"


def agreement_cell(config: dict) -> dict:
    """Store cell: ``large_search`` of {K, depths} (values, ranks, starts, CPU s)."""
    t0 = time.process_time()
    res = large_search(config["K"], config["depths"])
    return {
        "values": {str(L): res.best[L].objective for L in config["depths"]},
        "ranks": {str(L): res.best[L].rank for L in config["depths"]},
        "cpu_seconds": time.process_time() - t0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agree", type=int, nargs="*", default=[8, 12, 16, 24, 32])
    ap.add_argument("--large", type=int, nargs="*", default=[50, 100])
    ap.add_argument("--lmax", type=int, default=6)
    ap.add_argument("--store", required=True)
    args = ap.parse_args()
    depths = list(range(2, args.lmax + 1))
    load = os.getloadavg()[0]
    with Store(args.store) as store:
        mapper = functools.partial(store.map, progress=False)
        for K in args.large:
            c0, w0 = time.process_time(), time.perf_counter()
            diagram = ib.phase_diagram(K=[K], L=range(1, args.lmax + 1), store=store)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            col = diagram.columns[0]
            print(markdown_table(
                ["K", "L", "verdict", "value", "NC", "rank", "structure", "lower bound", "start"],
                [[c.K, c.L, c.verdict, f"{c.value:.6f}", f"{c.nc_value:g}", c.rank, c.structure,
                  f"{c.lower_bound:.4f}", c.start] for c in diagram]))
            print(f"\nK = {K}: column CPU s (search + cells, as recorded) "
                  f"{col['search_cpu_seconds']:.1f} + {col['cpu_seconds']:.1f}; this call CPU s {cpu:.1f}, "
                  f"wall s {wall:.1f} (0 when cached)\n")
        rows, equal, better, ranks = [], 0, 0, 0
        if args.agree:
            exact_columns = phase_diagram(mapper, [column_config(K, range(1, args.lmax + 1)) for K in args.agree])
            exact = {(c.K, c.L): c for c in cells_of(exact_columns)}
            fast = mapper(KIND, agreement_cell, [{"K": K, "depths": depths} for K in args.agree])
            for K, col, rec in zip(args.agree, exact_columns, fast):
                for L in depths:
                    ref, got = exact[(K, L)], rec["values"][str(L)]
                    rel = (got - ref.value) / ref.value
                    same_rank = rec["ranks"][str(L)] == ref.rank
                    equal += abs(rel) <= TOL
                    better += rel < -TOL
                    ranks += same_rank
                    rows.append([K, L, f"{ref.value:.9f}", ref.rank, f"{got:.9f}", rec["ranks"][str(L)],
                                 "=" if abs(rel) <= TOL else f"{rel:+.1e}"])
                rows.append([K, "CPU s", f"{col['search_cpu_seconds'] + col['cpu_seconds']:.1f}", "",
                             f"{rec['cpu_seconds']:.1f}", "", ""])
            print(markdown_table(["K", "L", "exact default", "rank", "large route", "rank", "relative"], rows))
            cells = len(args.agree) * len(depths)
            print(f"\nequal (1e-6): {equal} / {cells}; large route lower by more than 1e-6: {better}; "
                  f"higher: {cells - equal - better}; same rank: {ranks} / {cells}\n")
    print(f"load average (1 min) at start / end: {load:.1f} / {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
