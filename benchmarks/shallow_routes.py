"""Benchmark: what would bring the default's shallow cells above 16 classes to the best of 40 searches?

Above ``search.SMALL_K`` classes the default ``implicitbias phase`` run serves the depths L = 2, 3 (L weight
matrices, p = 2/(L + 1)) by the exact search from the search depths ``phase.SHALLOW_SEARCH_DEPTHS``
(``search.search``; the ladder starts at L = 4).  Against the best of efforts 1-8 x 5 seeds (the ledger
``benchmarks/phase_consistency.jsonl``, ``bench_phase_consistency.ledger_best``) 14 of these 32 cells are
above.  Per K this script runs, at L = 2 and 3 and timed in CPU s:

- ``default``: that exact search (effort 1, seed 0), the default's value at these cells;
- ``rank-r``: the rank-r route ``low_rank.large_search(K, [2, 3], 0)`` (which the default runs only
  from effort 2 on);
- ``tickets``: at the rank r* of the default's best and one either side, ``RANDOM`` random codes
  (``low_rank.random_code``, the full ``SCHEDULE``) and ``RIESZ`` fresh Riesz-energy codes
  (``low_rank.riesz_code``, from q = 64, ``SHARP``), each descended at p(L)
  (``low_rank.descend``), then ``low_rank.finish`` (the best 3 within 2% polished and refined).

Printed: per cell each route's value against the ledger's best (``=``: within a relative 1e-6, else the
signed relative difference), the cells the better of the default and each route leaves above the
best, CPU s per route, and how often a ticket of each kind and rank offset descends into the winning
basin (unrefined within ``BASIN`` of the smallest value any route or search found).  Seeds and salts
are fixed: a rerun prints the same values up to the last bits of SLSQP.

Usage: python benchmarks/shallow_routes.py [--K 17,18,...] [--workers 2]
"""

from __future__ import annotations

import argparse
import collections
import time
from concurrent.futures import ProcessPoolExecutor

import bench_phase_consistency as consistency  # a sibling script: benchmarks/ is sys.path[0] when this one runs
from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin.low_rank import SCHEDULE, SHARP, descend, finish, large_search, random_code, riesz_code
from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.numerics.maxmargin.phase import SHALLOW_SEARCH_DEPTHS
from implicitbias.numerics.maxmargin.search import search

DEPTHS = (2, 3)
RANDOM = 4  # random codes per rank
RIESZ = 3  # fresh Riesz codes per rank
BASIN = 3e-4  # a descended ticket this close (relative, unrefined) to the smallest value is in its basin


def column(K: int) -> dict:
    """The three routes at L = 2, 3 for one K: values, ranks, ticket values and CPU s."""
    t = time.process_time()
    default = search(K, list(DEPTHS), 1, 0, search_depths=SHALLOW_SEARCH_DEPTHS)
    cpu = {"default": time.process_time() - t}
    t = time.process_time()
    route = large_search(K, list(DEPTHS), 0)
    cpu["rank-r"] = time.process_time() - t
    t = time.process_time()
    out: dict = {"K": K, "default": {}, "rank-r": {}, "tickets": {}, "draws": {}}
    for L in DEPTHS:
        p, rstar = schatten_exponent(L), default.best[L].rank
        draws = []
        for r in (rstar - 1, rstar, rstar + 1):
            if not 3 <= r < K - 1:
                continue
            for i in range(RANDOM):
                label, Z = random_code(K, r, 0, 20 + L, i)
                draws.append(("random", r - rstar, descend(Z, p, r, label, 0, SCHEDULE)))
            for i in range(RIESZ):
                label, Z = riesz_code(K, r, 0, 20 + L, i, 100)
                draws.append(("riesz", r - rstar, descend(Z, p, r, label, 0, SHARP)))
        done = finish([s for _, _, s in draws], p)
        out["default"][L] = (default.best[L].objective, default.best[L].rank)
        out["rank-r"][L] = (route.best[L].objective, route.best[L].rank)
        out["tickets"][L] = (done.objective, done.rank)
        out["draws"][L] = [(kind, offset, s.objective) for kind, offset, s in draws]
    cpu["tickets"] = time.process_time() - t
    out["cpu"] = cpu
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--K", type=consistency.listed(int, "class counts", 17), default=list(range(17, 33)),
                    help="comma-separated class counts >= 17")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if args.workers < 1:
        ap.error(f"--workers must be >= 1, got {args.workers}")
    best, best_rank = consistency.ledger_best()
    with ProcessPoolExecutor(args.workers) as pool:
        columns = list(pool.map(column, sorted(args.K, reverse=True)))
    routes = ("default", "rank-r", "tickets")
    rows, above, cpu = [], collections.Counter(), collections.Counter()
    hits, draws = collections.Counter(), collections.Counter()
    for col in sorted(columns, key=lambda c: c["K"]):
        K = col["K"]
        for route in routes:
            cpu[route] += col["cpu"][route]
        for L in DEPTHS:
            ref = best[(K, L)][0]
            row = [K, L, best_rank[(K, L)]]
            for route in routes:
                value, rank = col[route][L]
                kind, rel = consistency.relation(value, ref)
                row.append(f"{'=' if kind == '=' else f'{rel:+.1e}'} (r{rank})")
            default = col["default"][L][0]
            above["default"] += consistency.relation(default, ref)[0] == "above"
            for route in routes[1:]:
                above[f"default or {route}"] += consistency.relation(min(default, col[route][L][0]), ref)[0] == "above"
            rows.append(row)
            smallest = min(ref, *(col[route][L][0] for route in routes))
            for kind, offset, value in col["draws"][L]:
                draws[(kind, offset)] += 1
                hits[(kind, offset)] += value <= smallest * (1 + BASIN)
    print(markdown_table(["K", "L", "best rank", *routes], rows))
    print()
    cells = len(rows)
    print(markdown_table(["quantity", "value"], [
        *[[f"cells above the best of 40: {name}", f"{n} / {cells}"] for name, n in above.items()],
        *[[f"CPU s, {route} (all K)", f"{cpu[route]:.0f}"] for route in routes],
    ]))
    print()
    print(markdown_table(["ticket", "rank - r*", "in the winning basin"],
                         [[kind, offset, f"{hits[(kind, offset)]} / {draws[(kind, offset)]}"] for kind, offset in sorted(draws)]))


if __name__ == "__main__":
    main()
