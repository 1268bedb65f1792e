"""Cost of the report's default Spec B tier (the toy: ``validation/specs/default.toml``), cold.

Trains every block of the tier as one ensemble, as the report does, over ``--workers`` processes
(one torch thread each), longest blocks first, and prints per block the CPU seconds it took, the
interpolation epochs and the spreads it measured; then the wall time and the summed CPU time
(the load-independent number on a shared machine; CPU / workers is the wall time of an idle
machine when the pool stays busy).  The report's own wall time: ``benchmarks/bench_report.py``.

    python benchmarks/bench_toy_forgetting.py [--workers 2] [--spec collapse]   # another packaged tier
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

from implicitbias.claims.forgetting import TOY, experiment, fmt_ci
from implicitbias.figures import markdown_table


def _block(spec: str, name: str) -> tuple[str, float, list]:
    from implicitbias.validation.batched import execute_group

    configs = experiment(spec).configs(name)
    t0 = time.process_time()
    records = execute_group({"runs": configs}, options=dict(experiment(spec).options))["records"]
    return name, time.process_time() - t0, list(zip(configs, records))


def main() -> None:
    from implicitbias.validation.analysis import group_runs, summarise

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--spec", default=TOY, help=f"packaged spec of the tier (default {TOY})")
    a = p.parse_args()
    t = experiment(a.spec)
    order = sorted(t.blocks, key=t.cost, reverse=True)
    load = [os.getloadavg()[0]]
    t0 = time.perf_counter()
    done = {}
    with ProcessPoolExecutor(a.workers) as pool:
        for fut in as_completed([pool.submit(_block, a.spec, b) for b in order]):
            name, cpu, runs = fut.result()
            done[name] = (cpu, runs)
            load.append(os.getloadavg()[0])
    wall = time.perf_counter() - t0
    rows = []
    for name in t.blocks:
        cpu, runs = done[name]
        s = summarise(group_runs(runs)[0])
        taus = [r.tau_interp for r in s.runs if r.tau_interp is not None]
        rows.append([name, len(runs), f"{cpu:.1f}", f"{s.n_interpolated}/{s.n_runs}",
                     f"{min(taus)}-{max(taus)}" if taus else "-", fmt_ci(s.spread_selected, seeds=False),
                     fmt_ci(s.spread_final, seeds=False), fmt_ci(s.norm_slope, seeds=False)])
    cpu = sum(c for c, _ in done.values())
    print(f"tier {t.name} ({t.description}); sigma_w {t.sigma_w}, seeds {t.seeds}")
    print(markdown_table(["block", "runs", "CPU s", "interpolate", "interp. epochs", "spread selected [CI]",
                          "spread end [CI]", "norm slope [CI]"], rows))
    print(f"{a.workers} workers x 1 thread: wall {wall:.1f} s, CPU {cpu:.1f} s (CPU / workers {cpu / a.workers:.1f} s; "
          f"longest block {max(c for c, _ in done.values()):.1f} s); load average {min(load):.1f}-{max(load):.1f}")


if __name__ == "__main__":
    main()
