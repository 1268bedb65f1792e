"""A user's own training recipe with the ForgettingMeter: a plain PyTorch loop over a grid of
optimisers x sigma_w x seeds, written to a runs file in the documented format (``implicitbias
import`` then judges it; ``benchmarks/gpu_h200.sh`` runs this on the GPU).

The loop is what a researcher writes for the paper's setting: a BatchNorm ResNet-9 (the package's
builder, sigma_w x He normal kernels), CIFAR-10 with 4-pixel crops and flips (or any data set of
``validation.data``), data held on the device, bf16 autocast on CUDA, a cosine schedule stepped per
step by torch's own scheduler.  Only the three meter lines are the package's business.

    python benchmarks/own_loop.py --dataset cifar10 --device cuda --epochs 30 --out own
    python benchmarks/own_loop.py --dataset digits --epochs 3 --width 0.125 --out /tmp/own    # CPU, seconds
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd
import torch
from torch import nn

import implicitbias as ib
from implicitbias.validation.data import batches, load_dataset
from implicitbias.validation.init import scale_init_
from implicitbias.validation.models import build_model

OPTIMISERS = {
    "sgd": lambda p, lr: torch.optim.SGD(p, lr=lr),
    "sgd_l2": lambda p, lr: torch.optim.SGD(p, lr=lr, weight_decay=1e-2),
    "adam": lambda p, lr: torch.optim.Adam(p, lr=lr),
    "adamw": lambda p, lr: torch.optim.AdamW(p, lr=lr, weight_decay=5e-2),
}


def evaluate(model, x, y, autocast, batch=2048):
    """Mean cross-entropy and accuracy on (x, y) in eval mode."""
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad(), autocast():
        for i in range(0, len(y), batch):
            z = model(x[i:i + batch]).float()
            loss += nn.functional.cross_entropy(z, y[i:i + batch], reduction="sum").item()
            correct += (z.argmax(1) == y[i:i + batch]).sum().item()
    model.train()
    return loss / len(y), correct / len(y)


def train_one(data, name, lr, sigma_w, seed, args, device):
    """One run of the recipe; its rows in the run format."""
    autocast = lambda: torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")  # noqa: E731
    model = scale_init_(build_model("resnet9", data.shape, data.num_classes, width=args.width), sigma_w,
                        seed=seed).to(device)
    optimizer = OPTIMISERS[name](model.parameters(), lr)
    steps = -(-len(data.y_train) // args.batch_size) * args.epochs
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    meter = ib.ForgettingMeter(model, optimizer, batch_size=args.batch_size, n_train=len(data.y_train),  # meter
                               sigma_w=sigma_w, seed=seed, run_id=f"{name}-{lr:g}-{sigma_w:g}-{seed}",
                               dataset=args.dataset, arch="resnet9")

    def epoch_end(train_loss, train_acc):
        (val_loss, val_acc) = evaluate(model, data.x_val, data.y_val, autocast)
        (test_loss, test_acc) = evaluate(model, data.x_test, data.y_test, autocast)
        meter.epoch_end(train_loss=train_loss, train_acc=train_acc, val_loss=val_loss, val_acc=val_acc,  # meter
                        test_loss=test_loss, test_acc=test_acc)

    m = len(data.y_val)
    epoch_end(*evaluate(model, data.x_train[:m], data.y_train[:m], autocast))  # epoch 0: the initialisation
    gen = torch.Generator(device=device).manual_seed(seed)
    for _ in range(args.epochs):
        loss_sum = torch.zeros((), device=device)
        correct = torch.zeros((), device=device)
        for xb, yb in batches(data.x_train, data.y_train, args.batch_size, gen, crop_padding=args.crop, flip=args.flip):
            with autocast():
                z = model(xb).float()
                loss = nn.functional.cross_entropy(z, yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            loss_sum += loss.detach() * len(yb)
            correct += (z.argmax(1) == yb).sum()
        n = len(data.y_train)
        epoch_end(loss_sum.item() / n, correct.item() / n)
    return meter.rows()  # meter


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="cifar10")
    p.add_argument("--data-path", default=None)
    p.add_argument("--train-size", type=int, default=None)
    p.add_argument("--val-size", type=int, default=5000)
    p.add_argument("--test-size", type=int, default=None)
    p.add_argument("--width", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--recipes", default="sgd:0.01,adam:0.001", help="optimiser:lr,... (sgd, sgd_l2, adam, adamw)")
    p.add_argument("--sigma-w", default="0.25,0.5,1,2")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--no-augment", action="store_true", help="no crops and flips (default: on for cifar10)")
    p.add_argument("--seconds", type=float, default=None, help="stop starting runs after this long (rows kept)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--out", default="own")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    args.crop, args.flip = (4, True) if args.dataset == "cifar10" and not args.no_augment else (0, False)
    device = torch.device(args.device)
    data = load_dataset(args.dataset, path=args.data_path, val_size=args.val_size, train_size=args.train_size,
                        test_size=args.test_size).to(device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    recipes = [(r.split(":")[0], float(r.split(":")[1])) for r in args.recipes.split(",")]
    grid = [(name, lr, float(s), int(seed)) for name, lr in recipes for s in args.sigma_w.split(",")
            for seed in args.seeds.split(",")]
    rows, t0 = [], time.perf_counter()
    for i, (name, lr, sigma_w, seed) in enumerate(grid):
        if args.seconds is not None and time.perf_counter() - t0 > args.seconds:
            print(f"time limit: {i} of {len(grid)} runs trained")
            break
        rows += train_one(data, name, lr, sigma_w, seed, args, device)
        pd.DataFrame(rows).to_csv(out / "runs.csv", index=False)  # after every run: a cut keeps what finished
        print(f"run {i + 1}/{len(grid)} {name} lr {lr:g} sigma_w {sigma_w:g} seed {seed}: test acc "
              f"{rows[-1]['test_acc']:.3f}, {time.perf_counter() - t0:.0f} s", flush=True)
    print(out / "runs.csv")


if __name__ == "__main__":
    main()
