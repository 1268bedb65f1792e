"""ResNet-9 (DAWNBench), CIFAR ResNet-20/56/110 (He et al. 2016) and the toy BatchNorm MLP: layouts,
shapes, the deep head."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.theory.params import ParameterError
from implicitbias.validation.models import Head, build_model


def _count(model):
    return sum(p.numel() for p in model.parameters())


def test_resnet9_parameter_count_matches_the_dawnbench_layout():
    # written out from the layout: 3x3 convs 3-64, 64-128, 2x 128-128, 128-256, 256-512, 2x 512-512,
    # BatchNorm (gamma, beta) after each, bias-free linear 512-10
    convs = [(3, 64), (64, 128), (128, 128), (128, 128), (128, 256), (256, 512), (512, 512), (512, 512)]
    expected = sum(9 * a * b + 2 * b for a, b in convs) + 512 * 10
    assert _count(build_model("resnet9", (3, 32, 32), 10)) == expected


@pytest.mark.parametrize("arch, millions", [("resnet20", 0.27), ("resnet56", 0.85), ("resnet110", 1.7)])
def test_cifar_resnet_sizes_match_he_et_al_table_6(arch, millions):
    n = _count(build_model(arch, (3, 32, 32), 10))
    assert abs(n / 1e6 - millions) / millions < 0.03


def test_cifar_resnet_depth_counts_weighted_layers():
    for arch, depth in [("resnet20", 20), ("resnet56", 56)]:
        model = build_model(arch, (3, 32, 32), 10)
        weighted = [m for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
        assert len(weighted) == depth


@settings(max_examples=8, deadline=None)
@given(
    arch=st.sampled_from(["resnet9", "resnet20"]),
    c=st.integers(1, 3), h=st.integers(1, 12), w=st.integers(1, 12),
    k=st.integers(2, 12), width=st.sampled_from([0.0625, 0.125]),
)
def test_any_input_shape_gives_logits(arch, c, h, w, k, width):
    model = build_model(arch, (c, h, w), k, width=width)
    assert model(torch.randn(3, c, h, w)).shape == (3, k)


@settings(max_examples=10, deadline=None)
@given(depth=st.integers(1, 4), width=st.integers(1, 9), seed=st.integers(0, 100))
def test_linear_head_is_the_matrix_product(depth, width, seed):
    """L weight matrices (N = L + 1 factors with the features): logits = scale W_L ... W_1 h."""
    torch.manual_seed(seed)
    head = Head(6, 4, depth=depth, width=width, scale=0.5).double()
    h = torch.randn(5, 6, dtype=torch.float64)
    product = torch.eye(6, dtype=torch.float64)
    for layer in head.layers:
        product = layer.weight @ product
    feats = head.features(h)
    assert len(feats) == depth + 1 and torch.equal(feats[0], h)
    torch.testing.assert_close(feats[-1], 0.5 * h @ product.T)


def test_relu_head_features_are_rectified():
    head = Head(8, 3, depth=3, width=5, activation="relu")
    feats = head.features(torch.randn(10, 8))
    assert all((f >= 0).all() for f in feats[1:-1]) and feats[-1].shape == (10, 3)


def test_toy_mlp_layout_and_scale_invariance():
    """Flatten, 2 x [Linear(bias-free) 256*width -> BN -> ReLU], bias-free head; the loss is invariant
    to the scale of both hidden kernels (each is followed by BatchNorm)."""
    model = build_model("mlp", (1, 5, 8), 10, width=0.25).double()
    assert [type(m).__name__ for m in model.body] == ["Flatten", "Linear", "BatchNorm1d", "ReLU", "Linear",
                                                     "BatchNorm1d", "ReLU"]
    assert model.body[1].weight.shape == (64, 40) and model.body[4].weight.shape == (64, 64)
    assert _count(model) == 40 * 64 + 64 * 64 + 64 * 10 + 4 * 64
    model.body[2].eps = model.body[5].eps = 1e-300  # BatchNorm's eps is the only scale it does not divide out
    x = torch.randn(32, 1, 5, 8, dtype=torch.float64)
    before = model(x)
    with torch.no_grad():
        model.body[1].weight.mul_(7.0)
        model.body[4].weight.mul_(3.0)
    torch.testing.assert_close(model(x), before, rtol=1e-9, atol=1e-12)
    with torch.no_grad():
        model.head.layers[0].weight.mul_(2.0)  # the head is not scale-invariant
    assert not torch.allclose(model(x), before)


def test_width_multiplier_scales_channels():
    small = build_model("resnet9", (3, 16, 16), 10, width=0.25)
    assert small.body.out_features == 128 and small.head.layers[0].in_features == 128


@pytest.mark.parametrize(
    "kwargs, match",
    [({"arch": "resnet18"}, "arch"), ({"width": 0}, "width"), ({"head_depth": 0}, "head_depth"),
     ({"head_activation": "tanh"}, "head_activation")],
)
def test_bad_model_arguments(kwargs, match):
    args = {"arch": "resnet9", **kwargs}
    with pytest.raises(ParameterError, match=match):
        build_model(args.pop("arch"), (1, 8, 8), 10, **args)
