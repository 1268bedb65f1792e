"""Benchmark: the atlas's rank-3 optima and our 3-d codes against the published Tammes optima.

Reads a finished ``implicitbias phase`` run (its ``phase_cells.csv`` and ``phase_atlas.npz``;
L counts weight matrices, p = 2/(L + 1)).  For every K with a rank-3 optimum at some depth,
each cell's matrix Zbar is split into balanced factors W (classifier rows) and H (class
vectors) (``codes.class_vectors``), both rows normalised, and read as codes on S^2: smallest
angle (the Tammes problem) and smallest one-vs-rest distance (Jiang et al. 2023, Definition 2.1,
``spherical.one_vs_rest_distance``).  Beside them: our optimum of each problem
(``spherical.max_margin_code``, symmetric = Tammes, else softmax code) and the published proved
Tammes optimum (K <= 14; values and sources in ``tests/test_published_codes.py``).

Usage: python benchmarks/bench_published_codes.py --phase PHASE_DIR [--seeds 8]
"""

from __future__ import annotations

import argparse
import csv
import math
import pathlib
import sys
import time

import numpy as np

from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin import spherical as sph
from implicitbias.numerics.maxmargin.codes import class_vectors

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from test_published_codes import TAMMES  # noqa: E402  (the published table lives with its sources)


def _unit(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _angle(V):
    G = _unit(V) @ _unit(V).T
    return math.degrees(math.acos(min(1.0, G[~np.eye(len(V), dtype=bool)].max())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phase", required=True, help="output folder of `implicitbias phase`")
    ap.add_argument("--seeds", type=int, default=8)
    args = ap.parse_args()
    folder = pathlib.Path(args.phase)
    matrices = np.load(folder / "phase_atlas.npz", allow_pickle=True)
    cells = [c for c in csv.DictReader(open(folder / "phase_cells.csv")) if c["rank"] == "3"]
    t0 = time.process_time()
    rows = []
    for K in sorted({int(c["K"]) for c in cells}):
        tammes = sph.max_margin_code(K, 3, symmetric=True, seeds=args.seeds)
        softmax = sph.max_margin_code(K, 3, seeds=args.seeds)
        ours = math.degrees(math.acos(1 - tammes.margin))
        published = math.degrees(TAMMES[K]) if K in TAMMES else None
        for c in (c for c in cells if int(c["K"]) == K):
            W, H = class_vectors(matrices[c["matrix"]])
            aw, ah = _angle(W), _angle(H)
            agree = "-" if published is None else ("yes" if abs(max(aw, ah) - published) < 1e-6 else "no")
            rows.append([K, c["L"], c["structure"], f"{aw:.5f}", f"{ah:.5f}", f"{ours:.5f}",
                         "-" if published is None else f"{published:.5f}", agree,
                         f"{sph.one_vs_rest_distance(_unit(W)).min():.6f}",
                         f"{sph.one_vs_rest_distance(_unit(H)).min():.6f}", f"{softmax.margin:.6f}"])
    print(markdown_table(["K", "L", "atlas structure", "angle W (deg)", "angle H (deg)", "our Tammes (deg)",
                          "published Tammes (deg)", "atlas = published", "1-vs-rest W", "1-vs-rest H",
                          "our softmax code"], rows))
    print(f"\nCPU s: {time.process_time() - t0:.1f}")


if __name__ == "__main__":
    main()
