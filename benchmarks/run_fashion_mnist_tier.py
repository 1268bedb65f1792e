"""Run the Fashion-MNIST tier of Spec B on a CPU (resumable) and print its claims table C1-C7.

Every run of ``implicitbias.claims.forgetting.FASHION_MNIST`` is a cell of the store (kind
``validation.run``): a killed run of this script loses at most the runs in flight, and a rerun
trains only what is missing (the report's ``--tier full`` reads the same records).  The claims
are the report's claim objects, judged on this tier only; the table is what
``benchmarks/RESULTS.md`` records.

    nice -n 10 python benchmarks/run_fashion_mnist_tier.py --store fm.sqlite --out fm [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from implicitbias.claims import Context, registry
from implicitbias.claims.forgetting import FASHION_MNIST, GroupClaim, measure_groups, tier
from implicitbias.executors import open_executor
from implicitbias.figures import markdown_table
from implicitbias.store import Store


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True)
    p.add_argument("--out", default="fashion_mnist_tier")
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    t0, load = time.perf_counter(), os.getloadavg()[0]
    with Store(a.store) as store, open_executor("process", a.workers) as executor:
        ctx = Context(store=store, out=Path(a.out), tier="full", executor=executor)
        fm = tier(FASHION_MNIST)
        measure_groups(ctx, fm, tuple(fm.blocks))  # every run first, so the pool stays busy
        rows = []
        for claim in (c for c in registry().values() if isinstance(c, GroupClaim)):
            for t, blocks in claim.config("full").resolved():
                if t is fm:
                    evidence = claim.evidence(measure_groups(ctx, t, blocks), t.name)
                    verdict = claim.judge(evidence)
                    claim.render(ctx, evidence, verdict)
                    rows.append([claim.id, evidence.check, verdict.measured, verdict.verdict, verdict.reason])
    print(f"Fashion-MNIST tier ({fm.description}): wall {time.perf_counter() - t0:.0f} s, "
          f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(markdown_table(["claim", "check", "measured", "verdict", "why"], rows))


if __name__ == "__main__":
    main()
