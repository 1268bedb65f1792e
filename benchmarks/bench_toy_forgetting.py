"""Wall time of the toy forgetting sweep that the report's "clocks" section runs (target < 5 min).

Runs ``implicitbias.report.sections.clocks.toy_configs(tier)`` into a fresh temporary store
through the process executor (``--workers``, default 2), as ``implicitbias report --executor
process`` would, and prints wall time, runs, and the per-group spreads it measured.

Run:  python benchmarks/bench_toy_forgetting.py [--workers 2] [--tier default]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from implicitbias.validation.toy_analysis import group_rows
from implicitbias.validation.toy import KIND, run_toy

from implicitbias.executors import open_executor
from implicitbias.figures import markdown_table
from implicitbias.report.sections.clocks import toy_configs
from implicitbias.store import Store


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tier", default="default")
    args = ap.parse_args()
    configs = toy_configs(args.tier)
    with tempfile.TemporaryDirectory() as tmp, Store(os.path.join(tmp, "s.sqlite")) as store:
        with open_executor("process", args.workers) as ex:
            t0 = time.perf_counter()
            records = store.map(KIND, run_toy, configs, executor=ex, progress=False)
            wall = time.perf_counter() - t0
    rows = group_rows(list(zip(configs, records)))
    print(markdown_table(["group", "spread", "norm slope"], [[r["label"], f"{r['spread']:.3f}", f"{r['norm_slope']:.2f}"] for r in rows]))
    print(f"{len(configs)} runs, {args.workers} workers: wall {wall:.1f} s ({wall / 60:.2f} min); "
          f"load average {os.getloadavg()[0]:.1f}; target < 5 min: {'met' if wall < 300 else 'NOT met'}")


if __name__ == "__main__":
    main()
