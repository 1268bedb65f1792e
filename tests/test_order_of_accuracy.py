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


def test_gd_errors_on_the_quadratic_against_the_closed_form():
    """Mean of the two quadratic pieces (3/2 (theta - 1)^2 + 1/2 (theta + 1)^2)/4 = (theta - 1/2)^2 / 2 + const:
    curvature a = 1, minimiser c = 1/2.  GD: theta_n - c = (1 - h)^n (theta_0 - c); gradient flow
    e^{-T}; modified flow (f_0 + h f_1 = -(1 + h/2)(theta - c)) e^{-(1 + h/2) T}."""
    T, theta0, c = 0.5, 1.5, 0.5
    r = order_of_accuracy("gd", "quadratic", horizon=T, theta0=theta0)
    for h, e0, e1 in zip(r.steps, r.error_gradient_flow, r.error_modified_flow):
        n = round(T / h)
        discrete = (1 - h) ** n * (theta0 - c)
        assert e0 == pytest.approx(abs(discrete - np.exp(-T) * (theta0 - c)), rel=1e-6)
        assert e1 == pytest.approx(abs(discrete - np.exp(-(1 + h / 2) * T) * (theta0 - c)), rel=1e-4)


def _quartic_gradient(theta):
    """The quartic of the module docstring: mean_j (theta - c_j)^4 / 4 + theta^2 / 2, c = 1, 1/2."""
    return ((theta - 1) ** 3 + (theta - 0.5) ** 3) / 2 + theta


def _logistic_gradient(theta):
    """The logistic toy loss log(1 + exp(-y_j (x_j theta + 1))), (x, y) = (2, 1), (-1, -1/2), mean over j."""
    from scipy.special import expit

    return sum(-y * x * expit(-y * (x * theta + 1)) for x, y in ((2.0, 1.0), (-1.0, -0.5))) / 2


@pytest.mark.parametrize("loss, grad", [("quartic", _quartic_gradient), ("logistic", _logistic_gradient)])
def test_gd_errors_against_iterates_and_flow_written_here(loss, grad):
    """GD iterates and the gradient flow (scipy, tight tolerances) computed here from the formula."""
    from scipy.integrate import solve_ivp

    T, theta0 = 0.5, 1.5
    r = order_of_accuracy("gd", loss, horizon=T, theta0=theta0)
    flow = solve_ivp(lambda t, y: -grad(y), (0, T), [theta0], method="DOP853", rtol=1e-12, atol=1e-12).y[0, -1]
    for h, e0 in zip(r.steps, r.error_gradient_flow):
        theta = theta0
        for _ in range(round(T / h)):
            theta -= h * grad(theta)
        assert e0 == pytest.approx(abs(theta - flow), rel=1e-6)
    assert abs(r.slope_gradient_flow - 1) < 0.2 and abs(r.slope_modified_flow - 2) < 0.2, r
