r"""
Your own model and data set
===========================

A Spec B sweep of a model and a data set that are not the package's: a module ``lab_pipeline.py``
defines a model factory (a small BatchNorm CNN) and a data loader (noisy 8 x 8 bars), and the spec
``lab.toml`` beside it names them as ``"module:function"``.  The package initialises every kernel as
:math:`\sigma_w` times He normal, trains each :math:`\sigma_w` x seed with low-rate SGD and with
Adam, records kernel norms, accuracies and the clocks per epoch, and judges the Spec B claims on the
runs.  The contract (what the factory and the loader return, how :math:`\sigma_w` scales the
kernels) is on the page *Your own model and data set*.

This example writes both files into a temporary folder first, so that it runs as it is, downloaded
as a script or as a notebook; in a project of your own they are two files you keep.
"""

import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
from implicitbias.validation.analysis import summarise

import implicitbias as ib

# lab_pipeline.py: the module of your own, a model factory and a data loader
LAB_PIPELINE = '''
import numpy as np
import torch
from torch import nn


class SmallCNN(nn.Module):
    """conv 3x3 (bias-free) -> BatchNorm -> ReLU -> 2x2 max-pool -> linear classifier."""

    def __init__(self, channels: int, hidden: int, size: int, num_classes: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, hidden, 3, padding=1, bias=False)
        self.norm = nn.BatchNorm2d(hidden)
        self.classifier = nn.Linear(hidden * (size // 2) ** 2, num_classes, bias=False)

    def forward(self, x):
        h = torch.max_pool2d(torch.relu(self.norm(self.conv(x))), 2)
        return self.classifier(h.flatten(1))


def small_cnn(in_shape, num_classes, *, width):
    """The factory: (C, H, W) and K in, an untrained module out; ``width`` scales the channels."""
    channels, size, _ = in_shape
    return SmallCNN(channels, max(1, round(8 * width)), size, num_classes)


def bars(*, seed, size, path):
    """The loader: 8 x 8 images of one of 4 bars (horizontal, vertical, two diagonals) at a random
    offset, plus noise; ``size`` training images (default 400) and 400 test images, drawn from
    ``seed`` only (same seed, same data)."""
    rng = np.random.default_rng(seed)
    row = np.zeros((8, 8), np.float32)
    row[0] = 1.0
    shapes = [row, row.T, np.eye(8, dtype=np.float32), np.eye(8, dtype=np.float32)[::-1]]

    def draw(n):
        y = rng.integers(0, 4, size=n)
        shifts = rng.integers(0, 8, size=n)
        x = np.stack([np.roll(shapes[k], s, axis=0 if k == 0 else 1) for k, s in zip(y, shifts, strict=True)])
        return (x + 0.5 * rng.normal(size=x.shape)).astype(np.float32)[:, None], y

    return (*draw(size or 400), *draw(400))
'''

# lab.toml: the spec (``implicitbias sweep lab.toml`` on the command line runs the same)
SPEC = """
name = "lab"
[base]
arch = "lab_pipeline:small_cnn"
dataset = "lab_pipeline:bars"
batch_size = 30
epochs = 8
sigma_w = [0.25, 1.0, 4.0]
seed = [0, 1, 2]
[[grid]]
optimizer = "sgd"
lr = 0.05
[[grid]]
optimizer = "adam"
lr = 0.003
[options]
threads = 1
"""

folder = Path(tempfile.mkdtemp(prefix="lab-"))
for name, text in {"lab_pipeline.py": LAB_PIPELINE, "lab.toml": SPEC}.items():
    (folder / name).write_text(text)

# %%
# The sweep and its analysis: the spec's folder is importable while it runs, so ``lab_pipeline``
# is found.

run = ib.sweep(folder / "lab.toml")
analysis = ib.analyse(run)
print(analysis.verdicts())  # 8 epochs, 3 seeds: most rules are honestly inconclusive here

# %%
# The memory of initialisation in the weights: the final norm of every kernel against sigma_w, with
# each setting's governing clock.  A norm that stays proportional to sigma_w (slope 1 on these axes)
# remembers the initial scale; 8 epochs are a short clock for either optimiser, so both remember
# most of it here (longer training or a larger rate moves the clock, see the clocks tutorial).
fig, ax = plt.subplots(figsize=(6, 3.5))
for group in analysis.groups:
    sigmas = [config["sigma_w"] for config, _ in group.runs]
    norms = [record["history"][-1]["kernel_norm"] for _, record in group.runs]
    summary = summarise(group)
    clock = summary.governing
    ax.scatter(sigmas, norms, label=f"{group.label}: {clock} = {summary.clocks[clock]:.3g}")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("sigma_w (initial weight scale)")
ax.set_ylabel("final kernel norm ||W||")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
