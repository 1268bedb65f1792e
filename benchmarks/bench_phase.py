"""Benchmark: the full atlas K = 2..32 x L = 1..12 at default effort (target < 60 s, idle 2 cores).

Runs ``implicitbias.numerics.maxmargin.phase`` on a fresh temporary store through a process pool
(the ``implicitbias phase`` default; one column per K, largest K first), writes the atlas
(``implicitbias.atlas.write_outputs``, its figures drawn on the same pool as the command does), then prints a table: wall time, the cached rerun, summed
per-column CPU times (search, then cells), the CPU of the slowest K, the time
to write the atlas, cells per verdict, the structures optimal somewhere, the median certified
gap, and the 1-minute load average before and after (the dev VM is shared, so wall times move
with the load; CPU times are the load-independent number).  Usage: python benchmarks/bench_phase.py [--kmax 32] [--lmax 12]
[--workers 2].
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from implicitbias.atlas import write_outputs
from implicitbias.executors import open_executor
from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin.phase import cells_of, phase_configs, phase_diagram
from implicitbias.store import Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kmax", type=int, default=32)
    ap.add_argument("--lmax", type=int, default=12)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.sqlite") as store:
        configs = phase_configs(args.kmax, args.lmax)
        t0 = time.perf_counter()
        with open_executor("process", args.workers) as ex:
            columns = phase_diagram(functools.partial(store.map, executor=ex, progress=False), configs)
            wall = time.perf_counter() - t0
            t2 = time.perf_counter()
            write_outputs(columns, Path(tmp) / "atlas", executor=ex)  # as `implicitbias phase`: figures on the pool
            written = time.perf_counter() - t2
        t1 = time.perf_counter()
        phase_diagram(functools.partial(store.map, progress=False), configs)
        cached = time.perf_counter() - t1
    cells = cells_of(columns)
    cpu = {col["K"]: col["search_cpu_seconds"] + col["cpu_seconds"] for col in columns}
    cells_cpu = sum(col["cpu_seconds"] for col in columns)
    slow = max(cpu, key=cpu.get)
    verdicts = collections.Counter(c.verdict for c in cells)
    structures = sorted({c.structure for c in cells})
    rows = [
        ["grid", f"K = 2..{args.kmax} x L = 1..{args.lmax} ({len(cells)} cells, {len(columns)} columns), effort 1, seed 0"],
        ["workers (process pool)", args.workers],
        ["wall time, cold store [s]", f"{wall:.1f}"],
        ["wall time, second run (cached) [s]", f"{cached:.2f}"],
        ["writing the atlas (figures on the pool, CSV, npz) [s]", f"{written:.1f}"],
        ["sum of per-column CPU times (search + cells) [s]", f"{sum(cpu.values()):.1f}"],
        ["... of which cells [s]", f"{cells_cpu:.1f}"],
        ["CPU time / workers (wall time on an idle machine) [s]", f"{sum(cpu.values()) / args.workers:.1f}"],
        [f"slowest K ({slow}): CPU [s]", f"{cpu[slow]:.1f}"],
        ["CPU by K [s]", ", ".join(f"{K}: {cpu[K]:.1f}" for K in sorted(cpu))],
        *[[f"cells '{v}'", n] for v, n in sorted(verdicts.items())],
        ["structures optimal somewhere", f"{len(structures)}: " + "; ".join(structures)],
        ["median gap to the certified lower bound", f"{np.median([c.gap for c in cells]):.3f}"],
        ["solves with scipy success / all cells", f"{sum(c.solver_success for c in cells)} / {len(cells)}"],
        ["load average (1 min) before / after", f"{load_before:.1f} / {os.getloadavg()[0]:.1f}"],
    ]
    print(markdown_table(["quantity", "value"], rows))


if __name__ == "__main__":
    main()
