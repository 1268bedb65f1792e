"""Time to derive every built-in modified flow to first order (and GD to second): target < 30 s.

All derivations run in one process, in this order (the engine memoises nothing), with one
parameter theta and generic losses; SGD with random reshuffling over m = 2 minibatches.

Run:  python benchmarks/bench_modified_flows.py
"""

from __future__ import annotations

import time

from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import UPDATES, builtin

from implicitbias.figures import markdown_table

CASES = [(n, 1, 1) for n in UPDATES if n != "sgd_rr"] + [("sgd", 1, 2), ("gd", 2, 1)]


def main() -> None:
    rows, total = [], 0.0
    for name, order, m in CASES:
        t0 = time.perf_counter()
        flow = modified_flow(builtin(name, minibatches=m), order)
        dt = time.perf_counter() - t0
        total += dt
        rows.append([flow.update.name, order, f"{dt:.2f}"])
    rows.append(["total", "", f"{total:.2f}"])
    print(markdown_table(["update", "order", "seconds"], rows))
    print(f"target < 30 s: {'met' if total < 30 else 'NOT met'}")


if __name__ == "__main__":
    main()
