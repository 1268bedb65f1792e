"""Measured order of accuracy: iterates vs gradient flow (slope ~1) and vs the derived modified flow (~2)."""

import numpy as np
import pytest
import torch
from implicitbias.numerics.optim.order_of_accuracy import (
    DEFAULT_VALUES,
    discrete_maps,
    generic_flow,
    order_of_accuracy,
)


@pytest.mark.parametrize("optimizer", ["gd", "sgd_rr", "heavy_ball", "adam"])
@pytest.mark.parametrize("loss", ["quadratic", "logistic"])
def test_slopes_one_and_two(optimizer, loss):
    r = order_of_accuracy(optimizer, loss)
    assert abs(r.slope_gradient_flow - 1) < 0.2, r
    assert abs(r.slope_modified_flow - 2) < 0.2, r
    assert r.error_modified_flow[-1] < r.error_gradient_flow[-1] / 10


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ["gd", "sgd_rr", "heavy_ball", "nesterov", "adam", "rmsprop", "sign", "muon"])
def test_slopes_on_quartic_and_every_update(optimizer):
    for loss in ("quadratic", "quartic", "logistic"):
        r = order_of_accuracy(optimizer, loss, steps=(0.0125, 0.00625, 0.003125, 0.0015625))
        assert abs(r.slope_modified_flow - 2) < 0.2, r


def test_discrete_map_is_torch_heavy_ball():
    # the iterated map is PyTorch's SGD(momentum): an independent implementation of the update
    flow = generic_flow("heavy_ball")
    theta = flow.X[0]
    concrete = flow.specialise([(theta - 1) ** 4 / 4])
    step = discrete_maps(concrete, DEFAULT_VALUES)[0]
    w = torch.nn.Parameter(torch.tensor([1.7], dtype=torch.float64))
    opt = torch.optim.SGD([w], lr=0.05, momentum=DEFAULT_VALUES["beta"])
    y, v = np.array([1.7]), np.array([0.0])
    for _ in range(20):
        opt.zero_grad()
        ((w - 1) ** 4 / 4).sum().backward()
        opt.step()
        out = np.array(step(y, v, 0.05), dtype=float)
        y, v = out[:1], out[1:]
    assert y[0] == pytest.approx(w.item(), abs=1e-12)
