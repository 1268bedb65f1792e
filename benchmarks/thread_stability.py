"""Verdict stability across torch threads (issue 20 item 4): C1-C5 and C7 of the default report
tier with every run trained on ``--threads`` torch threads.

A run's thread count is a runtime option, not part of its key (``validation.run``): threads change
how reductions are split and so the last bits of float32 sums, and over 120 epochs the runs of
two thread counts drift apart.  This trains the default report tier's Spec B runs (the packaged
specs ``default``, ``horizon`` and ``collapse``, verdict seeds) with ``--threads`` threads per run
into ``--store`` (a store of its own per thread count), in ``--workers`` processes, and judges C1-C5
and C7 there as the report does (``ib.check``, 2,000 simulated tiers).  Run it for 1 and for 2
threads and compare the lines (benchmarks/RESULTS.md).

    python benchmarks/thread_stability.py --threads 2 --workers 1 --store /tmp/threads2.sqlite
"""

from __future__ import annotations

import argparse
import time
import tomllib

import implicitbias as ib
from implicitbias.executors import open_executor
from implicitbias.validation.sweep import packaged_specs

SPECS = ("default", "horizon", "clock_lines")  # the default report tier's Spec B specs (claims.forgetting.experiments)
CLAIMS = ("c1", "c2", "c3", "c4", "c5", "c7")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, required=True, help="torch threads per run")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default: %(default)s)")
    parser.add_argument("--store", required=True, help="SQLite store of this thread count")
    args = parser.parse_args()
    t0 = time.perf_counter()
    with open_executor("process", args.workers) as executor:
        for name in SPECS:
            spec = tomllib.loads(packaged_specs()[name].read_text())
            spec["options"]["threads"] = args.threads
            ib.sweep(spec, store=args.store, executor=executor, progress=True)
    trained = time.perf_counter() - t0
    print(f"threads {args.threads}, {args.workers} worker(s): trained in {trained:.0f} s")
    for slug in CLAIMS:
        for result in ib.check(slug, store=args.store).results:
            v = result.verdict
            print(f"| {result.name} | {v.verdict} | {v.measured.split(';')[0]} | {v.reason.split(';')[0]} |")


if __name__ == "__main__":
    main()
