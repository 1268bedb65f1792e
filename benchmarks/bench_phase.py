"""Benchmark: the full phase diagram K = 2..32 x L = 1..12 at default effort (target < 60 s).

Runs ``implicitbias.numerics.maxmargin.phase`` on a fresh temporary store through a process pool (the
``implicitbias phase`` default), then prints a table: wall time, summed per-cell time, cells per
verdict, summed per-cell wall and CPU times, the slowest K, and the 1-minute load average of the machine before and after (the dev VM
is shared, so wall times move with the load).  Usage: python benchmarks/bench_phase.py [--kmax 32]
[--lmax 12] [--workers 2].
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile
import time
from pathlib import Path

from implicitbias.executors import open_executor
from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin.phase import phase_configs, phase_diagram
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
            records = phase_diagram(store, configs, executor=ex, progress=False)
        wall = time.perf_counter() - t0
        t1 = time.perf_counter()
        phase_diagram(store, configs, progress=False)
        cached = time.perf_counter() - t1
    per_k = collections.defaultdict(float)
    for r in records:
        per_k[r["K"]] += r["cpu_seconds"]
    verdicts = collections.Counter(r["verdict"] for r in records)
    slow_k = max(per_k, key=per_k.get)
    rows = [
        ["grid", f"K = 2..{args.kmax} x L = 1..{args.lmax} ({len(records)} cells), effort 1, seed 0"],
        ["workers (process pool)", args.workers],
        ["wall time, cold store [s]", f"{wall:.1f}"],
        ["wall time, second run (cached) [s]", f"{cached:.2f}"],
        ["sum of per-cell wall times [s]", f"{sum(r['seconds'] for r in records):.1f}"],
        ["sum of per-cell CPU times [s]", f"{sum(per_k.values()):.1f}"],
        ["CPU time / workers (wall time on an idle machine) [s]", f"{sum(per_k.values()) / args.workers:.1f}"],
        [f"slowest K ({slow_k}): CPU summed over L [s]", f"{per_k[slow_k]:.1f}"],
        *[[f"cells '{v}'", n] for v, n in sorted(verdicts.items())],
        ["load average (1 min) before / after", f"{load_before:.1f} / {os.getloadavg()[0]:.1f}"],
    ]
    print(markdown_table(["quantity", "value"], rows))


if __name__ == "__main__":
    main()
