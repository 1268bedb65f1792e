"""Benchmark: Theorem 3.2 without the answer, every K: the rank-2 route from random planar starts.

For every K = kmin..kmax, ``numerics.maxmargin.rank2.rank2_search`` (``--starts`` random rank-2
Gram starts, seed ``--seed``) at L = 30 and L = inf (L weight matrices, p = 2/(L + 1); inf: the
p -> 0 objective ordered by (rank, sum log sigma)).  Printed per K and L: the value found, the
exact regular K-gon value (``theory.codes``, sympy), their relative difference, the name of the
best matrix from its invariants (``naming.identify``), the starts named the same way (how many
are the K-gon: 0 means the route was not handed the answer) and the CPU seconds of the search
(both depths together, the naming not counted).

Then the global strategy measured: for every K, the fraction of starts whose end (before the
exact polish) is within 1e-4 of the K-gon at L = inf, along the continuation ``Q_SCHEDULE`` and
with the exact minimum alone (q = 1024 only); ``--ablation-starts 0`` skips it.  Usage: python benchmarks/bench_kgon_unaided.py
[--kmin 4] [--kmax 32] [--starts 4] [--seed 0] [--ablation-starts 8] [--refine 200].
"""

from __future__ import annotations

import argparse
import math
import os
import time

from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin.naming import identify
from implicitbias.numerics.maxmargin.rank2 import rank2_search, rank2_starts
from implicitbias.theory import codes as exact

DEPTHS = (30, math.inf)
REACHED = 1e-4  # relative: a start's end (before the exact polish) reached the K-gon


def kgon_value(K: int, L: float) -> float:
    """The exact K-gon value: S_p at L, sum log sigma at L = inf."""
    return float(exact.limit_objective_at("kgon", K)[1]) if L == math.inf else float(exact.objective_at("kgon", K, L))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kmin", type=int, default=4)
    ap.add_argument("--kmax", type=int, default=32)
    ap.add_argument("--starts", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ablation-starts", type=int, default=8)
    ap.add_argument("--refine", type=int, default=200, help="SLSQP iterations of the exact polish")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    rows, ablation = [], []
    for K in range(args.kmin, args.kmax + 1):
        given = rank2_starts(K, args.starts, args.seed)
        handed = sum(identify(Z).key == "kgon" for _, Z in given)
        t0 = time.process_time()
        res = rank2_search(K, DEPTHS, args.starts, args.seed, refine_iterations=args.refine)
        cpu = time.process_time() - t0
        for L in DEPTHS:
            best, kgon = res.best[L], kgon_value(K, L)
            rows.append([K, "inf" if L == math.inf else L, f"{best.objective:.10f}", f"{kgon:.10f}",
                         f"{(best.objective - kgon) / abs(kgon):.1e}", identify(best.Z).name,
                         f"{len(given)} ({handed} K-gons)", f"{cpu:.2f}"])
        print(*rows[-2], sep=" | ", flush=True)
        print(*rows[-1], sep=" | ", flush=True)
        if not args.ablation_starts:
            continue
        reached = []
        for schedule in (None, (1024.0,)):
            t0 = time.process_time()
            kw = {} if schedule is None else {"schedule": schedule}
            ends = rank2_search(K, [math.inf], args.ablation_starts, args.seed + 1, **kw).ends
            ok = sum((e.objective - kgon_value(K, math.inf)) / abs(kgon_value(K, math.inf)) < REACHED for e in ends)
            reached += [f"{ok}/{len(ends)}", f"{time.process_time() - t0:.2f}"]
        ablation.append([K, *reached])
        print(*ablation[-1], sep=" | ", flush=True)
    print(markdown_table(["K", "L", "value found", "K-gon (exact)", "rel. diff", "named", "starts named",
                          "CPU s (both L)"], rows))
    if ablation:
        print(markdown_table(["K", "ends at the K-gon, continuation 0.5 ... 1024", "CPU s",
                              "ends at the K-gon, q = 1024 alone", "CPU s"], ablation))


if __name__ == "__main__":
    main()
