"""Cost of ``implicitbias flows`` per optimiser, parameter count (--dim) and order: the source of
the limits in ``implicitbias.commands.flows.MAX_ORDER``.

Each case runs what the command runs (a fresh process: import, derivation, simplified printing,
``implicitbias.commands.flows.show``, without the command's limits) under a wall-clock budget; once an order exceeds the budget the higher orders of that
optimiser and dimension are not tried (the cost grows with the order).  Prints one table: seconds
per case, "> budget" where the budget ran out, and the highest order that fits per row.

Run:  python benchmarks/bench_flows_cost.py [--budget 20] [--l2] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from implicitbias.figures import markdown_table
from implicitbias.theory.updates import UPDATES

ORDERS = range(4)
DIMS = range(1, 5)


def cases() -> list[tuple[str, str, int]]:
    """(row name, optimizer, minibatches) for every built-in update and SGD with m = 2, 3 minibatches."""
    rows = [(name, name, 1) for name in UPDATES if name != "sgd_rr"]
    return rows + [(f"sgd, m = {m}", "sgd", m) for m in (2, 3)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--l2", action="store_true", help="with coupled L2 decay")
    parser.add_argument("--only", nargs="*", default=None, help="row names (default: all)")
    args = parser.parse_args()
    budget, rows = args.budget, []
    for name, optimizer, m in cases():
        if args.only and name not in args.only:
            continue
        name += " + l2" if args.l2 else ""
        for dim in DIMS:
            cells, fits = [], -1
            for order in ORDERS:
                if fits < order - 1:  # a lower order already ran out of budget
                    cells.append("-")
                    continue
                t0 = time.perf_counter()
                call = f"show({optimizer!r}, {order}, {dim}, minibatches={m}, l2={args.l2})"
                cmd = [sys.executable, "-c", f"from implicitbias.commands.flows import show; {call}"]
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
