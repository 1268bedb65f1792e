"""Wall time of `implicitbias report` (default tier) on a cold store and again on the warm store.

Usage: python benchmarks/bench_report.py [--executor process|inline]
Prints a table; record it in benchmarks/RESULTS.md with the date and the machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed_report(store: Path, out: Path, executor: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "implicitbias", "--store", str(store), "report", "--out", str(out),
         "--executor", executor, "--no-progress"],
        check=True, stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--executor", default="process", choices=("process", "inline"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store, out = Path(tmp) / "store.sqlite", Path(tmp) / "report"
        cold = timed_report(store, out, args.executor)
        warm = timed_report(store, out, args.executor)
    print("| executor | cold store [s] | warm store [s] | cold / warm | load average |")
    print("|---|---|---|---|---|")
    print(f"| {args.executor} | {cold:.1f} | {warm:.1f} | {cold / warm:.0f}x | {os.getloadavg()[0]:.1f} |")


if __name__ == "__main__":
    main()
