"""Order of accuracy of derived modified flows: global error of iterates as the step shrinks.

For an update u, a toy loss and steps h_1 > h_2 > ..., run n = T / (m h) periods of the discrete
map (the update as written, with exact gradients, lambdified from sympy) from theta_0, the
optimiser state started on its slow manifold sigma(theta_0) = sigma_0 + h sigma_1 (derived by the
engine; a zero start adds an O(h) transient), and compare theta_n with the time-T solution of

    (a) the leading flow        d theta/dt = f_0            (gradient flow, preconditioned)
    (b) the modified flow       d theta/dt = f_0 + h f_1    (first-order backward error analysis)

integrated by scipy's DOP853 at rtol = atol = 1e-12.  Global error (a) is O(h), (b) O(h^2):
fitted slopes of log error against log h are ~1 and ~2.  For SGD with random reshuffling the
discrete map is the epoch map averaged over the m! minibatch orders (the mean iterate; the
expectation over independent epochs equals iterating the averaged map up to O(h^3) globally).

Toy losses in one parameter theta, as m = 2 minibatch losses whose mean is the loss:
    quadratic  L_j = a_j (theta - c_j)^2 / 2
    quartic    L_j = (theta - c_j)^4 / 4 + theta^2 / 2     (c = 1, 1/2)
    logistic   L_j = log(1 + exp(-y_j (x_j theta + 1)))   (a one-feature logistic regression)
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np
import sympy as sp
from implicitbias.theory import params
from implicitbias.theory.modified_flow import ModifiedFlow, h, modified_flow
from implicitbias.theory.updates import builtin
from scipy.integrate import solve_ivp

__all__ = ["LOSSES", "DEFAULT_VALUES", "toy_losses", "order_of_accuracy", "OrderResult", "generic_flow", "discrete_maps"]

LOSSES = ("quadratic", "quartic", "logistic")
# hyper-parameters of the order checks: moderate values keep the asymptotic regime at h ~ 1e-2
DEFAULT_VALUES = {"beta": 0.5, "beta1": 0.5, "beta2": 0.6, "rho": 0.6, "eps": 0.1, "mu": 0.5, "lambda": 0.3}


def toy_losses(name: str, theta: sp.Symbol) -> list[sp.Expr]:
    """The two minibatch losses of toy loss ``name`` (see module docstring)."""
    params.choice("loss", name, LOSSES)
    if name == "quadratic":
        return [sp.Rational(3, 2) * (theta - 1) ** 2 / 2, sp.Rational(1, 2) * (theta + 1) ** 2 / 2]
    if name == "quartic":
        return [(theta - 1) ** 4 / 4 + theta**2 / 2, (theta - sp.Rational(1, 2)) ** 4 / 4 + theta**2 / 2]
    return [sp.log(1 + sp.exp(-(2 * theta + 1))), sp.log(1 + sp.exp((-theta + 1) / 2))]


@functools.cache
def generic_flow(optimizer: str) -> ModifiedFlow:
    """First-order flow of ``optimizer`` in one parameter for generic losses (derived once)."""
    upd = builtin(optimizer, minibatches=2) if optimizer == "sgd_rr" else builtin(optimizer)
    return modified_flow(upd, 1, 1)


@dataclass
class OrderResult:
    optimizer: str
    loss: str
    steps: list[float]
    error_gradient_flow: list[float]
    error_modified_flow: list[float]
    slope_gradient_flow: float
    slope_modified_flow: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def discrete_maps(flow: ModifiedFlow, values: dict):
    """Numeric one-step maps (one per minibatch j): (theta, state, h) -> (theta', state')."""
    upd, X = flow.update, flow.X
    S = sp.symbols(f"s_1:{upd.state_size(len(X)) + 1}")
    grads = [[sp.diff(L, x) for x in X] for L in flow.losses]

    def grad(point, j):
        return [g.subs(dict(zip(X, point)), simultaneous=True) for g in grads[j]]

    subs = {upd.symbols[k]: v for k, v in values.items() if k in upd.symbols}
    maps = []
    for j in range(upd.period):
        theta, state = upd.step(list(X), list(S), grad, j)
        maps.append(sp.lambdify((X, S, h), [e.subs(subs) for e in theta + state], "numpy"))
    return maps


def order_of_accuracy(
    optimizer: str,
    loss: str,
    *,
    steps=(0.025, 0.0125, 0.00625, 0.003125),
    horizon: float = 0.5,
    theta0: float = 1.5,
    values: dict | None = None,
) -> OrderResult:
    """Global errors at time ``horizon`` against (a) f_0 and (b) f_0 + h f_1 and their slopes.

    ``optimizer``: a built-in update name (``gd``, ``sgd_rr``, ``heavy_ball``, ``nesterov``,
    ``adam``, ``rmsprop``, ``sign``, ``muon``, ...); ``sgd_rr`` uses m = 2 minibatches.
    """
    values = {**DEFAULT_VALUES, **(values or {})}
    horizon = params.real("horizon", horizon, minimum=0.0, open_minimum=True)
    steps = [params.real("h", s, minimum=0.0, maximum=horizon, open_minimum=True) for s in steps]
    upd = generic_flow(optimizer).update
    pieces = toy_losses(loss, generic_flow(optimizer).X[0])
    losses = pieces if upd.period == 2 else [(pieces[0] + pieces[1]) / 2]
    flow = generic_flow(optimizer).specialise(losses, **values)
    field0 = sp.lambdify((flow.X, h), flow.field(0), "numpy")
    field1 = sp.lambdify((flow.X, h), flow.field(1), "numpy")
    sigma = sp.lambdify((flow.X, h), flow.slow_state(1), "numpy")
    maps = discrete_maps(flow, values)
    orders = list(itertools.permutations(range(upd.period))) if upd.reshuffle else [tuple(range(upd.period))]
    m = upd.period

    def solve(field, step):
        sol = solve_ivp(lambda t, y: field(y, step), (0, horizon), [theta0], method="DOP853", rtol=1e-12, atol=1e-12)
        return sol.y[:, -1]

    err0, err1 = [], []
    for step in steps:
        n = round(horizon / (m * step))
        if not np.isclose(n * m * step, horizon):
            raise params.ParameterError(f"h must divide the horizon into whole periods, got h = {step}")
        y = np.array([theta0], dtype=float)
        state = np.array(sigma(y, step), dtype=float)
        for _ in range(n):
            outs = []
            for order in orders:
                z, s = y, state
                for j in order:
                    out = np.array(maps[j](z, s, step), dtype=float)
                    z, s = out[: len(y)], out[len(y) :]
                outs.append(np.concatenate([z, s]))
            mean = np.mean(outs, axis=0)
            y, state = mean[: len(y)], mean[len(y) :]
        err0.append(float(np.max(np.abs(y - solve(field0, step)))))
        err1.append(float(np.max(np.abs(y - solve(field1, step)))))
    logh = np.log(steps)
    return OrderResult(
        optimizer,
        loss,
        list(steps),
        err0,
        err1,
        float(np.polyfit(logh, np.log(err0), 1)[0]),
        float(np.polyfit(logh, np.log(err1), 1)[0]),
    )
