"""BatchNorm networks for the forgetting sweeps, each a body followed by a separate classifier head.

- ResNet-9, the DAWNBench layout (Page 2018, "How to train your ResNet"): prep conv 64;
  layer 1 conv 128 + max-pool + residual block (2 convs 128); layer 2 conv 256 + max-pool;
  layer 3 conv 512 + max-pool + residual block (2 convs 512); global max-pool; classifier with
  output multiplier 0.125.  Every conv is 3 x 3, bias-free, followed by BatchNorm and ReLU.
- CIFAR ResNet-(6n+2) (He, Zhang, Ren, Sun 2016, Sec. 4.2): conv 16, three stages of n basic
  blocks with 16, 32, 64 channels (stride 2 at the start of stages 2 and 3, parameter-free
  zero-padded identity shortcuts, the paper's option A), global average pool, classifier.
  ResNet-20/56/110 are n = 3/9/18.
- The toy BatchNorm MLP (``mlp``): flatten, then two hidden layers Linear (bias-free) -> BN ->
  ReLU of 256 units.  Both hidden kernels sit in front of a BatchNorm, so the loss is invariant
  to their scale: for SGD the effective learning rate of such a kernel is eta / ||W||_F^2, which
  is how sigma_w can matter at all (Spec B's scale-invariant toy; on MNIST-1D its 40 inputs).

``width`` multiplies every channel count (at least 1 channel).  The input shape comes from the
dataset; a max-pool is skipped where the feature map is already a single pixel high or wide.

The head (:class:`Head`) is a separate module: ``depth`` = L weight matrices (so the head and its
input features make N = L + 1 factors), hidden ``width``, ``activation`` linear or relu, bias-free,
with :meth:`Head.features` returning every layer's input for the deep-head experiments.
Initialisation is left to ``implicitbias.validation.init.scale_init_`` (sigma_w times He normal).
"""

from __future__ import annotations

import torch
from torch import nn

from implicitbias.theory import params

__all__ = ["ARCHITECTURES", "BatchNormMLP", "Head", "Network", "ResNet9", "CifarResNet", "build_model"]

ARCHITECTURES = {"resnet9": None, "resnet20": 3, "resnet56": 9, "resnet110": 18, "mlp": None}
MLP_UNITS = 256  # hidden units of the toy MLP at width 1
HEAD_ACTIVATIONS = ("linear", "relu")


def _channels(c: int, width: float) -> int:
    return max(1, round(c * width))


def _conv_bn(c_in: int, c_out: int, stride: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(c_out)]


class _Residual(nn.Module):
    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return x + self.inner(x)


class ResNet9(nn.Sequential):
    """DAWNBench ResNet-9 body; output: a ``8 * 64 * width``-dim feature vector per image."""

    def __init__(self, in_shape: tuple[int, int, int], width: float = 1.0):
        c0, h, w = in_shape
        c = [_channels(k, width) for k in (64, 128, 256, 512)]

        def block(c_in, c_out, pool):
            nonlocal h, w
            layers = [*_conv_bn(c_in, c_out), nn.ReLU()]
            if pool and min(h, w) >= 2:
                layers.append(nn.MaxPool2d(2))
                h, w = h // 2, w // 2
            return layers

        def res(ch):
            return _Residual(nn.Sequential(*block(ch, ch, False), *block(ch, ch, False)))

        super().__init__(
            *block(c0, c[0], False),
            *block(c[0], c[1], True),
            res(c[1]),
            *block(c[1], c[2], True),
            *block(c[2], c[3], True),
            res(c[3]),
            nn.AdaptiveMaxPool2d(1),
            nn.Flatten(),
        )
        self.out_features = c[3]


class _BasicBlock(nn.Module):
    """He et al. basic block: conv-BN-ReLU-conv-BN plus shortcut, then ReLU (option A shortcut)."""

    def __init__(self, c_in: int, c_out: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(*_conv_bn(c_in, c_out, stride), nn.ReLU(), *_conv_bn(c_out, c_out))
        self.stride, self.pad = stride, c_out - c_in

    def forward(self, x):
        shortcut = x[:, :, :: self.stride, :: self.stride] if self.stride > 1 else x
        if self.pad:
            shortcut = nn.functional.pad(shortcut, (0, 0, 0, 0, 0, self.pad))
        return torch.relu(self.body(x) + shortcut)


class CifarResNet(nn.Sequential):
    """CIFAR ResNet-(6n+2) body of He et al. 2016; output: a ``64 * width``-dim feature vector."""

    def __init__(self, in_shape: tuple[int, int, int], n: int, width: float = 1.0):
        c = [_channels(k, width) for k in (16, 32, 64)]
        layers: list[nn.Module] = [*_conv_bn(in_shape[0], c[0]), nn.ReLU()]
        c_in = c[0]
        for stage, c_out in enumerate(c):
            for i in range(n):
                layers.append(_BasicBlock(c_in, c_out, 2 if stage > 0 and i == 0 else 1))
                c_in = c_out
        super().__init__(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.out_features = c[2]


class BatchNormMLP(nn.Sequential):
    """Toy body: flatten, then 2 x [Linear(bias-free) -> BatchNorm1d -> ReLU] of ``256 * width`` units."""

    def __init__(self, in_shape: tuple[int, ...], width: float = 1.0):
        units = _channels(MLP_UNITS, width)
        fan_in = 1
        for d in in_shape:
            fan_in *= d
        super().__init__(
            nn.Flatten(),
            nn.Linear(fan_in, units, bias=False), nn.BatchNorm1d(units), nn.ReLU(),
            nn.Linear(units, units, bias=False), nn.BatchNorm1d(units), nn.ReLU(),
        )
        self.out_features = units


class Head(nn.Module):
    """Classifier head with L = ``depth`` bias-free weight matrices (N = L + 1 factors with the features).

    logits = scale * W_L s(W_{L-1} ... s(W_1 h)), s = identity (``linear``) or ReLU; hidden width
    ``width``.  ``depth = 1`` is the usual linear classifier.
    """

    def __init__(self, in_features: int, num_classes: int, depth: int = 1, width: int | None = None,
                 activation: str = "linear", scale: float = 1.0):
        super().__init__()
        depth = params.integer("head_depth", depth, minimum=1, maximum=64)
        params.choice("head_activation", activation, HEAD_ACTIVATIONS)
        width = params.integer("head_width", width or in_features, minimum=1, maximum=1 << 16)
        sizes = [in_features] + [width] * (depth - 1) + [num_classes]
        self.layers = nn.ModuleList(nn.Linear(a, b, bias=False) for a, b in zip(sizes[:-1], sizes[1:]))
        self.activation, self.scale = activation, scale

    def features(self, h: torch.Tensor, linear=None) -> list[torch.Tensor]:
        """Inputs of every head layer, ``[h_0 = body features, h_1, ..., h_{L-1}]``, then the logits.

        ``linear(layer, h)`` replaces ``layer(h)`` (the ensembles of ``validation.batched`` apply
        each member's own weights this way).
        """
        out = [h]
        for i, layer in enumerate(self.layers):
            h = layer(h) if linear is None else linear(layer, h)
            if i < len(self.layers) - 1 and self.activation == "relu":
                h = torch.relu(h)
            out.append(h)
        out[-1] = out[-1] * self.scale
        return out

    def forward(self, h):
        return self.features(h)[-1]


class Network(nn.Module):
    """``body`` (a ResNet) followed by ``head``; ``forward`` returns logits."""

    def __init__(self, body: nn.Module, head: Head):
        super().__init__()
        self.body, self.head = body, head

    def forward(self, x):
        return self.head(self.body(x))


def build_model(arch: str, in_shape: tuple[int, int, int], num_classes: int, *, width: float = 1.0,
                head_depth: int = 1, head_width: int | None = None, head_activation: str = "linear") -> Network:
    """A :class:`Network` by architecture name (``resnet9``, ``resnet20``, ``resnet56``, ``resnet110``, ``mlp``).

    ``head_depth`` is L, the number of weight matrices of the head (N = L + 1 factors with the
    features).  ResNet-9's head carries DAWNBench's output multiplier 0.125.
    """
    params.choice("arch", arch, ARCHITECTURES)
    width = params.real("width", width, minimum=0.0, maximum=64.0, open_minimum=True)
    if arch == "resnet9":
        body, scale = ResNet9(in_shape, width), 0.125
    elif arch == "mlp":
        body, scale = BatchNormMLP(in_shape, width), 1.0
    else:
        body, scale = CifarResNet(in_shape, ARCHITECTURES[arch], width), 1.0
    head = Head(body.out_features, num_classes, head_depth, head_width, head_activation, scale)
    return Network(body, head)
