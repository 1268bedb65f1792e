"""A researcher's own model factory and data loader, as ``implicitbias.validation.external`` asks.

The gallery example ``plot_own_model.py`` sweeps them: ``arch = "lab_pipeline:small_cnn"`` and
``dataset = "lab_pipeline:bars"`` (this folder is importable while the example runs, as a spec's
folder is for ``implicitbias sweep``).
"""

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
