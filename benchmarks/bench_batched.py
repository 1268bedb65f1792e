"""Throughput of ensembles (validation.batched) against the same runs one by one, side by side.

Default: the toy tier's low-lr SGD block (``validation/specs/default.toml``: BatchNorm MLP on
MNIST-1D, every sigma_w x seed, 20 members) for ``--epochs`` epochs, split over ``--workers``
processes (one torch thread each: the 2 cores of the target machine): one-by-one = each worker
trains its half of the runs solo (``validation.run.execute``); ensemble = each worker trains its
half as one ensemble (``validation.batched.execute_group``, folded engine, bit-for-bit the solo
runs).  images/s = members x epochs x n_train / wall time (per-epoch evaluation included, as in
the tier).  The CPU seconds summed over workers are printed too: on a shared machine they are
the load-independent number.  ``--tier fashion_mnist_cpu`` measures the vmap engine on the
Fashion-MNIST tier's ResNet instead.

    python benchmarks/bench_batched.py                    # toy MLP (target >= 10x)
    python benchmarks/bench_batched.py --tier fashion_mnist_cpu --epochs 1
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

from implicitbias.claims.forgetting import FASHION_MNIST, TOY, tier
from implicitbias.figures import markdown_table


def _solo(configs):
    from implicitbias.validation.run import dataset_for, execute

    dataset_for(configs[0])
    t0, c0 = time.perf_counter(), time.process_time()
    for c in configs:
        execute(c, options={"threads": 1})
    return time.perf_counter() - t0, time.process_time() - c0


def _ensemble(configs):
    from implicitbias.validation.batched import execute_group
    from implicitbias.validation.run import dataset_for

    dataset_for(configs[0])
    t0, c0 = time.perf_counter(), time.process_time()
    execute_group({"runs": configs}, options={"threads": 1})
    return time.perf_counter() - t0, time.process_time() - c0


def _warm(configs):
    """Load the data and touch every kernel once in this worker (not timed)."""
    _solo([{**configs[0], "epochs": 1}])
    _ensemble([{**c, "epochs": 1} for c in configs[:2]])
    return os.getpid()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tier", default=TOY, choices=(TOY, FASHION_MNIST), help="packaged spec of the tier")
    p.add_argument("--block", default="sgd_low")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    configs = [{**c, "epochs": a.epochs, "eval_every": 1, "eval_dense_until": 0} for c in tier(a.tier).configs(a.block)]
    shards = [configs[i :: a.workers] for i in range(a.workers)]
    n_train = configs[0]["train_size"]
    images = len(configs) * a.epochs * n_train
    load = [os.getloadavg()[0]]
    rows = []
    with ProcessPoolExecutor(a.workers) as pool:
        list(pool.map(_warm, shards))
        for name, fn in (("one by one", _solo), ("ensemble", _ensemble)):
            t0 = time.perf_counter()
            parts = list(pool.map(fn, shards))
            wall = time.perf_counter() - t0
            cpu = sum(c for _, c in parts)
            rows.append([name, f"{wall:.1f}", f"{images / wall:,.0f}", f"{cpu:.1f}", f"{images / cpu:,.0f}"])
            load.append(os.getloadavg()[0])
    c = configs[0]
    print(f"{a.tier}/{a.block}: {c['arch']} width {c['width']:g} on {c['dataset']} ({n_train} train, "
          f"{c['val_size']} val, {c['test_size']} test), b {c['batch_size']}, {c['optimizer']} lr {c['lr']:g}, "
          f"{len(configs)} members, {a.epochs} epochs, {a.workers} workers x 1 thread; "
          f"load average {min(load):.1f}-{max(load):.1f}")
    print(markdown_table(["mode", "wall s", "images/s (wall)", "CPU s (all workers)", "images per CPU s"], rows))
    wall_ratio = float(rows[0][1]) / float(rows[1][1])
    cpu_ratio = float(rows[0][3]) / float(rows[1][3])
    print(f"speed-up ensemble / one by one: {wall_ratio:.2f}x wall, {cpu_ratio:.2f}x CPU time")


if __name__ == "__main__":
    main()
