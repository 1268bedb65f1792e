"""Benchmark: certified lower bounds on P(K, L) (issue 30 item 3).

Three tables (L counts weight matrices, p = 2/(L + 1); NC's value is K - 1):

1. ``--sdp K:L[:L_high] ...``: the tail certificate (``numerics.maxmargin.tail_certificate``: SDP
   bounds on sum_{i>=2} sigma_i and on sigma_{K-1}, a branch-and-bound over sorted directions, the
   sigma_1 split) against the generic bounds, with CPU seconds and SDP solves.
2. The boundary L*(K) for K = 4..8: below, the largest real depth up to which bound 4 of
   ``lower_bounds`` proves NC optimal at every depth (``nc_certified_depth``); above, the smallest
   threshold depth of a closed-form code (``theory.codes.threshold_depth``: an explicit matrix that
   beats NC at every larger depth).
3. ``--cells phase_cells.csv``: the median per-cell gap (best - bound)/best of an atlas before
   (the bounds 1-3 and the local bound) and after (with bound 4), over the cells the atlas does not
   prove NC-optimal.

Usage: python benchmarks/bench_tail_certificate.py [--sdp 4:2 5:2] [--cells PATH/phase_cells.csv]
"""

from __future__ import annotations

import argparse
import csv

import numpy as np

from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin import lower_bounds as lb
from implicitbias.numerics.maxmargin.margin import schatten_exponent
from implicitbias.numerics.maxmargin.tail_certificate import tail_certificate
from implicitbias.theory import codes as exact


def _older(K: int, p: float) -> float:
    return max(lb.nuclear_bound(K, p), lb.three_class_bound(K, p), lb.triples_bound(K, p), lb.local_bound(K, p))


def sdp_table(specs: list[str]) -> str:
    rows = []
    for spec in specs:
        K, *depths = spec.split(":")
        K, L = int(K), float(depths[0])
        L_high = float(depths[1]) if len(depths) > 1 else None
        c = tail_certificate(K, L, L_high=L_high)
        p = schatten_exponent(L)
        rows.append([K, f"{c.L:g}" if c.L_high == c.L else f"[{c.L:g}, {c.L_high:g}]", f"{c.nc:g}",
                     f"{_older(K, p):.4f} ({(c.nc - _older(K, p)) / c.nc:.1%})",
                     f"{c.generic:.4f} ({(c.nc - c.generic) / c.nc:.1%})", f"{c.bound:.4f} ({c.gap:.1%})",
                     c.intervals, c.sdp_solves, f"{c.seconds:.0f}", f"[{c.worst[0]:.3f}, {c.worst[1]:.3f}]"], )
        print(markdown_table(["K", "L", "NC", "before (gap)", "sigma_1 split (gap)", "tail certificate (gap)",
                              "sigma_1 intervals", "SDP solves", "CPU s", "tightest sigma_1 interval"], rows[-1:]),
              flush=True)
    return markdown_table(["K", "L", "NC", "before (gap)", "sigma_1 split (gap)", "tail certificate (gap)",
                           "sigma_1 intervals", "SDP solves", "CPU s", "tightest sigma_1 interval"], rows)


def boundary_table() -> str:
    rows = []
    for K in range(4, 9):
        below = lb.nc_certified_depth(K)
        thresholds = {s: float(exact.threshold_depth(s, K)) for s in exact.structures_with_vertices(K) if s != "nc"}
        name, above = min(thresholds.items(), key=lambda kv: kv[1])
        rows.append([K, f"{below:.4f}", f"{above:.4f}", name])
    return markdown_table(["K", "NC certified optimal for every real L in [1, .]", "explicit matrix beats NC beyond L =",
                           "that matrix"], rows)


def median_gaps(path: str) -> str:
    before, after = [], []
    with open(path) as handle:
        for row in csv.DictReader(handle):
            K, L, best = int(row["K"]), float(row["L"]), float(row["objective"])
            if row["verdict"] == "NC optimal" or K < 3 or L == 1:
                continue
            p = schatten_exponent(L)
            before.append((best - _older(K, p)) / best)
            after.append((best - lb.spectral_bound(K, p)[0]) / best)
    return markdown_table(["cells (not proved NC-optimal)", "median gap before", "after", "largest before", "after"],
                          [[len(before), f"{np.median(before):.3f}", f"{np.median(after):.3f}",
                            f"{max(before):.3f}", f"{max(after):.3f}"]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdp", nargs="*", default=[], help="K:L or K:L:L_high for the tail certificate")
    parser.add_argument("--cells", help="an atlas's phase_cells.csv")
    args = parser.parse_args()
    print(boundary_table(), flush=True)
    if args.cells:
        print(median_gaps(args.cells), flush=True)
    if args.sdp:
        print(sdp_table(args.sdp))


if __name__ == "__main__":
    main()
