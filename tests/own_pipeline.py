"""A model factory and data loaders of a researcher's own, as ``implicitbias.validation.external``'s
contract asks, for the tests of sweeps on user code (``tests/test_own_pipeline.py``)."""

import numpy as np
import torch
from torch import nn

from implicitbias.validation.data import ImageData

CLASSES = 3
SHAPE = (1, 4, 4)


class TinyNet(nn.Module):
    """Flatten -> Linear (bias-free) -> BatchNorm1d -> ReLU -> Linear: a custom forward (not an
    ``nn.Sequential``), so an ensemble of it runs through ``torch.func.vmap``."""

    def __init__(self, in_features: int, hidden: int, num_classes: int):
        super().__init__()
        self.hidden = nn.Linear(in_features, hidden, bias=False)
        self.norm = nn.BatchNorm1d(hidden)
        self.out = nn.Linear(hidden, num_classes, bias=False)

    def forward(self, x):
        return self.out(torch.relu(self.norm(self.hidden(x.flatten(1)))))


def tiny_net(in_shape, num_classes, *, width):
    return TinyNet(int(np.prod(in_shape)), max(1, round(16 * width)), num_classes)


class Shifted(TinyNet):
    """TinyNet plus a logit shift of its own: a parameter that is no kernel, drawn by the factory."""

    def __init__(self, in_features: int, hidden: int, num_classes: int):
        super().__init__(in_features, hidden, num_classes)
        self.shift = nn.Parameter(torch.randn(num_classes))

    def forward(self, x):
        return super().forward(x) + self.shift


def shifted_net(in_shape, num_classes, *, width):
    return Shifted(int(np.prod(in_shape)), max(1, round(16 * width)), num_classes)


def torch_blobs(*, seed, size, path):
    """Blobs drawn from torch's global generator (the package seeds it with data_seed)."""
    x, y, x_test, y_test = blobs(seed=0, size=size, path=path)
    return x + 0.1 * torch.randn(x.shape).numpy(), y, x_test, y_test


def tiny_sequential(in_shape, num_classes, *, width):
    """The same network as an ``nn.Sequential`` of the layers the folded ensemble engine covers."""
    hidden = max(1, round(16 * width))
    return nn.Sequential(nn.Flatten(), nn.Linear(int(np.prod(in_shape)), hidden, bias=False), nn.BatchNorm1d(hidden),
                         nn.ReLU(), nn.Linear(hidden, num_classes, bias=False))


def blobs(*, seed, size, path):
    """``size`` (default 120) noisy copies of 3 class templates, 1 x 4 x 4, and 60 test images."""
    rng = np.random.default_rng(seed)
    templates = rng.normal(size=(CLASSES, *SHAPE)).astype(np.float32)
    n = size or 120

    def draw(m):
        y = rng.integers(0, CLASSES, size=m)
        return templates[y] + 0.8 * rng.normal(size=(m, *SHAPE)).astype(np.float32), y

    return (*draw(n), *draw(60))


def blobs_split(*, seed, size, path, classes=CLASSES, tensor=torch.as_tensor):
    """The blobs as an ``ImageData`` the loader splits itself (first 80 train, 20 val, rest test)."""
    x, y, x_test, y_test = blobs(seed=seed, size=size, path=path)
    t = tensor
    return ImageData("blobs", t(x[:80]), t(y[:80]), t(x[80:100]), t(y[80:100]), t(x_test), t(y_test), classes)


def blobs_split_numpy(*, seed, size, path):
    """The same split held in numpy arrays (the package makes tensors of them)."""
    return blobs_split(seed=seed, size=size, path=path, tensor=np.asarray)


# -- wrong on purpose: each breaks one clause of the contract --------------------------------------
NOT_CALLABLE = 3


def returns_a_list(in_shape, num_classes, *, width):
    return [nn.Linear(1, 1)]


def no_kernels(in_shape, num_classes, *, width):
    return nn.Flatten()


def wrong_logits(in_shape, num_classes, *, width):
    return nn.Sequential(nn.Flatten(), nn.Linear(int(np.prod(in_shape)), num_classes + 1))


def positional_only(in_shape):
    return nn.Linear(1, 1)


def loader_without_keywords(seed):
    return blobs(seed=seed, size=None, path=None)


def returns_a_string(*, seed, size, path):
    return "data"


def flat_inputs(*, seed, size, path):
    x, y, x_test, y_test = blobs(seed=seed, size=size, path=path)
    return x.reshape(len(x), -1), y, x_test, y_test


def labels_beyond_classes(*, seed, size, path):
    return blobs_split(seed=seed, size=size, path=path, classes=2)


def float_labels(*, seed, size, path):
    x, y, x_test, y_test = blobs(seed=seed, size=size, path=path)
    return x, y.astype(float), x_test, y_test
