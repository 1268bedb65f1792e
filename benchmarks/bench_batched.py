"""Throughput of a sigma_w group: one vmap-ed model (validation.batched) vs the runs one by one.

Same configs, same device, same process, measured side by side: images/s = G x epochs x n_train
/ wall time of the whole training (evaluation each epoch included, as in a sweep).  The achieved
TFLOP/s of one training step (forward + backward, counted by torch.utils.flop_counter) is
printed too, and on a GPU compared with its bf16 dense peak (--peak-tflops, H200: 989).

    python benchmarks/bench_batched.py                       # tiny CPU model (target >= 3x)
    python benchmarks/bench_batched.py --device cuda --width 1 --dataset fashion_mnist \
        --batch 128 --precision bf16 --train-size 10000       # ResNet-9 on a GPU (target >= 5x)
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

from implicitbias.figures import markdown_table
from implicitbias.validation.batched import execute_group
from implicitbias.validation.run import build, canonical_config, dataset_for, execute, resolve_device


def step_flops(config, device) -> float:
    """FLOPs of one forward + backward of one model at the config's batch size."""
    data = dataset_for(config)
    model = build(config, data, device, torch.float32)
    x = data.x_train[: config["batch_size"]].to(device)
    y = data.y_train[: config["batch_size"]].to(device)
    with FlopCounterMode(display=False) as counter:
        torch.nn.functional.cross_entropy(model(x), y).backward()
    return float(counter.get_total_flops())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--dataset", default="synthetic")
    p.add_argument("--data-size", type=int, default=2000)
    p.add_argument("--train-size", type=int, default=None)
    p.add_argument("--arch", default="resnet9")
    p.add_argument("--width", type=float, default=0.0625)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--group", type=int, default=6, help="number of sigma_w values (G)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--precision", default="float32")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--peak-tflops", type=float, default=989.0, help="accelerator bf16 dense peak (H200: 989)")
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    device = resolve_device(a.device)
    sigmas = [round(0.1 + i * 2.4 / max(a.group - 1, 1), 3) for i in range(a.group)]
    base = {"dataset": a.dataset, "data_size": a.data_size if a.dataset in ("synthetic", "mnist1d") else None,
            "train_size": a.train_size, "arch": a.arch, "width": a.width, "batch_size": a.batch,
            "epochs": a.epochs, "optimizer": a.optimizer, "lr": 0.01, "precision": a.precision}
    configs = [canonical_config({**base, "sigma_w": s}) for s in sigmas]
    n_train = len(dataset_for(configs[0]).y_train)
    options = {"device": str(device)}
    execute({**configs[0], "epochs": 1}, options=options)  # warm-up: data on device, kernels chosen

    def timed(fn):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    t_seq = timed(lambda: [execute(c, options=options) for c in configs])
    t_bat = timed(lambda: execute_group({"runs": configs}, options=options))
    images = a.group * a.epochs * n_train
    flops = step_flops(configs[0], device)
    steps = a.group * a.epochs * -(-n_train // a.batch)
    rows = []
    for name, t in (("one by one", t_seq), ("batched (vmap)", t_bat)):
        tflops = flops * steps / t / 1e12
        rows.append([name, f"{t:.2f}", f"{images / t:,.0f}", f"{tflops:.3f}",
                     f"{100 * tflops / a.peak_tflops:.2f}%" if device.type == "cuda" else "-"])
    print(f"{a.arch} width {a.width:g}, {a.dataset} ({n_train} train), b = {a.batch}, G = {a.group} sigma_w, "
          f"{a.epochs} epochs, {a.optimizer}, {a.precision}, device {device}, torch threads {torch.get_num_threads()}")
    print(markdown_table(["mode", "seconds", "images/s", "TFLOP/s (train step)", "of peak"], rows))
    print(f"speed-up batched / one by one: {t_seq / t_bat:.2f}x")


if __name__ == "__main__":
    main()
