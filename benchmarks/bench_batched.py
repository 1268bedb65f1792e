"""Throughput of ensembles (validation.batched) against the same runs one by one, side by side.

Default: the toy tier's low-lr SGD block (``validation/specs/default.toml``: BatchNorm MLP on
MNIST-1D, every sigma_w x seed, 20 members) for ``--epochs`` epochs, split over ``--workers``
processes of ``--threads`` torch threads each: one-by-one = each worker trains its share of the
runs solo (``validation.run.execute``); ensemble = each worker trains its share as the ensembles
the sweeps form (``validation.batched.ensembles``: every run of the blocks that can share a step
in one model; folded engine, bit-for-bit the solo runs).  ``--blocks`` takes several blocks
(``--blocks sgd_low,sgd_high,sgd_l2,adam,adamw,muon``: the tier's 120 runs at b 64 that share a
step).  images/s = members x epochs x n_train / wall time (per-epoch evaluation included, as in
the tier).  The CPU seconds summed over workers are printed too: on a shared machine they are
the load-independent number.  Flags override the blocks' configs (another tier, data set,
network, batch, precision, device); on a GPU the achieved TFLOP/s of a training step (counted by
torch.utils.flop_counter) is compared with ``--peak-tflops``.

    python benchmarks/bench_batched.py --workers 1                      # toy MLP, 20 members
    python benchmarks/bench_batched.py --workers 1 --blocks sgd_low,sgd_high,sgd_l2,adam,adamw,muon
    python benchmarks/bench_batched.py --tier fashion_mnist_cpu --epochs 1 --group 4
    python benchmarks/bench_batched.py --tier fashion_mnist_cpu --device cuda --workers 1 --width 1 \\
        --train-size 10000 --batch 128 --precision bf16 --group 6      # ResNet-9 on an H200
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

from implicitbias.claims.forgetting import FASHION_MNIST, TOY, experiment
from implicitbias.figures import markdown_table

_OVERRIDES = {"dataset": "dataset", "train_size": "train_size", "arch": "arch", "width": "width",
              "batch": "batch_size", "precision": "precision"}


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def _solo(configs, options, max_members=None):
    from implicitbias.validation.run import dataset_for, execute

    dataset_for(configs[0])
    _sync(options["device"])
    t0, c0 = time.perf_counter(), time.process_time()
    for c in configs:
        execute(c, options=options)
    _sync(options["device"])
    return time.perf_counter() - t0, time.process_time() - c0


def _ensemble(configs, options, max_members):
    from implicitbias.validation.batched import ensembles, execute_group
    from implicitbias.validation.run import dataset_for

    dataset_for(configs[0])
    _sync(options["device"])
    t0, c0 = time.perf_counter(), time.process_time()
    for group in ensembles(configs, max_members):
        execute_group({"runs": group}, options=options)
    _sync(options["device"])
    return time.perf_counter() - t0, time.process_time() - c0


def _warm(configs, options, max_members):
    """Load the data and touch every kernel once in this worker (not timed)."""
    warm = [{**c, "epochs": 1, "eval_every": 1} for c in configs]
    _solo(warm[:1], options)
    _ensemble(warm, options, max_members)
    return os.getpid()


def _step_tflop(config, device: str) -> float:
    """TFLOP of one forward + backward of one member at the config's batch size."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from implicitbias.validation.run import build, dataset_for, resolve_device

    data = dataset_for(config)
    dev = resolve_device(device)
    model = build(config, data, dev, torch.float32)
    x, y = data.x_train[: config["batch_size"]].to(dev), data.y_train[: config["batch_size"]].to(dev)
    with FlopCounterMode(display=False) as counter:
        torch.nn.functional.cross_entropy(model(x), y).backward()
    return counter.get_total_flops() / 1e12


def main() -> None:
    from implicitbias.theory.clocks import steps_per_epoch
    from implicitbias.validation.batched import MAX_CPU_MEMBERS, ensembles
    from implicitbias.validation.run import canonical_config, dataset_for

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tier", default=TOY, choices=(TOY, FASHION_MNIST), help="packaged spec of the tier")
    p.add_argument("--blocks", default="sgd_low", help="comma-separated blocks of the tier")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=1, help="torch threads per worker")
    p.add_argument("--group", type=int, default=None, help="members (default: every run of the blocks)")
    p.add_argument("--max-members", type=int, default=None,
                   help="members per ensemble (default: the sweeps' rule, MAX_CPU_MEMBERS on a CPU, all on a GPU)")
    p.add_argument("--eval-every", type=int, default=1, help="evaluate every this many epochs (the tier: 1)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--peak-tflops", type=float, default=989.0, help="accelerator bf16 dense peak (H200: 989)")
    for flag in _OVERRIDES:
        p.add_argument(f"--{flag.replace('_', '-')}", default=None,
                       type=str if flag in ("dataset", "arch", "precision") else float if flag == "width" else int)
    a = p.parse_args()
    over = {key: getattr(a, flag) for flag, key in _OVERRIDES.items() if getattr(a, flag) is not None}
    configs = [canonical_config({**c, **over, "epochs": a.epochs, "eval_every": a.eval_every, "eval_dense_until": 0})
               for b in a.blocks.split(",") for c in experiment(a.tier).configs(b)][: a.group]
    options = {"threads": a.threads, "device": a.device}
    shards = [s for s in (configs[i :: a.workers] for i in range(a.workers)) if s]
    cap = a.max_members or (MAX_CPU_MEMBERS if a.device == "cpu" else None)
    sizes = [len(g) for shard in shards for g in ensembles(shard, cap)]
    n_train = len(dataset_for(configs[0]).y_train)
    images = len(configs) * a.epochs * n_train
    load = [os.getloadavg()[0]]
    rows, walls = [], {}
    # spawned, not forked: a fork of this process, whose OpenMP pool already runs, hangs at 2 threads
    with ProcessPoolExecutor(len(shards), mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_warm, shards, [options] * len(shards), [cap] * len(shards)))
        for name, fn in (("one by one", _solo), ("ensemble", _ensemble)):
            t0 = time.perf_counter()
            parts = list(pool.map(fn, shards, [options] * len(shards), [cap] * len(shards)))
            wall = time.perf_counter() - t0
            cpu = sum(c for _, c in parts)
            walls[name] = (wall, cpu)
            rows.append([name, f"{wall:.1f}", f"{images / wall:,.0f}", f"{cpu:.1f}", f"{images / cpu:,.0f}"])
            load.append(os.getloadavg()[0])
    if a.device.startswith("cuda"):
        steps = len(configs) * a.epochs * steps_per_epoch(n_train, configs[0]["batch_size"])
        tflop = _step_tflop(configs[0], a.device) * steps
        for row, (wall, _) in zip(rows, walls.values()):
            row += [f"{tflop / wall:.2f}", f"{100 * tflop / wall / a.peak_tflops:.2f}%"]
    c = configs[0]
    settings = sorted({(x["optimizer"], x["lr"], x["weight_decay"]) for x in configs})
    print(f"{a.tier}/{a.blocks}: {c['arch']} width {c['width']:g} on {c['dataset']} ({n_train} train), b "
          f"{c['batch_size']}, {len(settings)} optimiser settings ({', '.join(f'{o} lr {lr:g} wd {wd:g}' for o, lr, wd in settings)}), "
          f"{c['precision']}, {len(configs)} members (ensembles of {', '.join(map(str, sizes))}), {a.epochs} epochs (evaluated every {a.eval_every}), device "
          f"{a.device}, {len(shards)} workers x {a.threads} threads; load average {min(load):.1f}-{max(load):.1f}")
    header = ["mode", "wall s", "images/s (wall)", "CPU s (all workers)", "images per CPU s"]
    print(markdown_table(header + (["TFLOP/s", "of peak"] if a.device.startswith("cuda") else []), rows))
    (w1, c1), (w2, c2) = walls.values()
    print(f"speed-up ensemble / one by one: {w1 / w2:.2f}x wall, {c1 / c2:.2f}x CPU time")


if __name__ == "__main__":
    main()
