"""Run the Fashion-MNIST tier of Spec B on a CPU (resumable) and write its claims table C1-C7.

Every run of the packaged spec ``fashion_mnist_cpu`` is a cell of the store (kind
``validation.run``): a killed run of this script loses at most the runs in flight, and a rerun
trains only what is missing (``implicitbias report --tier full`` and ``implicitbias analyse
fashion_mnist_cpu`` read the same records).  The claims are the report's claim objects, judged on
this tier's runs; ``OUT/fashion_mnist.md`` (with figures) is what ``benchmarks/RESULTS.md`` records.

    nice -n 10 python benchmarks/run_fashion_mnist_tier.py --store fm.sqlite --out fm [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from implicitbias.claims import Context
from implicitbias.claims.forgetting import FASHION_MNIST, experiment, measure_groups
from implicitbias.claims.forgetting.analyse import judge_groups
from implicitbias.executors import open_executor
from implicitbias.store import Store


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True)
    p.add_argument("--out", default="fashion_mnist_tier")
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    t0, load = time.perf_counter(), os.getloadavg()[0]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with Store(a.store) as store, open_executor("process", a.workers) as executor:
        ctx = Context(store=store, out=out, tier="full", executor=executor)
        fm = experiment(FASHION_MNIST)
        groups = measure_groups(ctx, fm, tuple(fm.blocks))
        text = judge_groups(ctx, groups, f"tier {fm.name} ({fm.description})", fm.name)
    note = (f"wall {time.perf_counter() - t0:.0f} s with {a.workers} workers; load average {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end")
    (out / "fashion_mnist.md").write_text(text + "\n\n" + note + "\n")
    print(text)
    print(note)


if __name__ == "__main__":
    main()
