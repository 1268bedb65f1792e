"""Cost of ``implicitbias flows`` per optimiser, parameter count (--dim) and order: the source of
the limits in ``implicitbias.commands.flows.MAX_ORDER``.

Each case runs the command as a user does (a fresh process: import, derivation, simplified
printing) under a wall-clock budget; once an order exceeds the budget the higher orders of that
optimiser and dimension are not tried (the cost grows with the order).  Prints one table: seconds
per case, "> budget" where the budget ran out, and the highest order that fits per row.

Run:  python benchmarks/bench_flows_cost.py [budget_seconds, default 20]
"""

from __future__ import annotations

import subprocess
import sys
import time

from implicitbias.figures import markdown_table
from implicitbias.theory.updates import UPDATES

ORDERS = range(4)
DIMS = range(1, 5)


def cases() -> list[tuple[str, list[str]]]:
    """(row name, extra flows arguments) for every built-in update and SGD with m = 2, 3 minibatches."""
    rows = [(name, ["--optimizer", name]) for name in UPDATES if name != "sgd_rr"]
    return rows + [(f"sgd, m = {m}", ["--optimizer", "sgd", "--minibatches", str(m)]) for m in (2, 3)]


def main() -> None:
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    rows = []
    for name, extra in cases():
        for dim in DIMS:
            cells, fits = [], -1
            for order in ORDERS:
                if fits < order - 1:  # a lower order already ran out of budget
                    cells.append("-")
                    continue
                t0 = time.perf_counter()
                cmd = [sys.executable, "-m", "implicitbias", "flows", *extra, "--dim", str(dim), "--order", str(order)]
                try:
                    subprocess.run(cmd, capture_output=True, timeout=budget, check=True)
                    cells.append(f"{time.perf_counter() - t0:.1f}")
                    fits = order
                except subprocess.TimeoutExpired:
                    cells.append(f"> {budget:g}")
            rows.append([name, dim, *cells, fits])
            print(markdown_table(["update", "dim", *(f"order {o} [s]" for o in ORDERS), "max order"], rows[-1:]),
                  file=sys.stderr, flush=True)
    print(markdown_table(["update", "dim", *(f"order {o} [s]" for o in ORDERS), "max order"], rows))


if __name__ == "__main__":
    main()
