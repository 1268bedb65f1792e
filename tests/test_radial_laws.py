"""Simulated scale-invariant weights follow the derived radial laws (theory/radial.py).

The weight w in R^D enters only through w / |w| (a BatchNorm-like scale invariance): the loss is
a minibatch logistic loss of X w / |w|, so its gradient is orthogonal to w and scales as 1/|w|.
"""

import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from implicitbias.theory.radial import LAWS, D, T, X, derive, eta, gamma, in_units, memory_fraction, rho_0, u
from implicitbias.theory.updates import beta, lam


def simulate(rho0, optimizer, steps, lr, seed=0, batch=8, factors=None, **kw):
    """Norms rho_k and unit-scale gradient norms gamma_k of a scale-invariant weight (``factors``:
    the learning rate of step k is lr x factors[k])."""
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(256, 20, generator=gen, dtype=torch.float64)
    y = torch.sign(X[:, 0] + 0.3 * torch.randn(256, generator=gen, dtype=torch.float64))
    w0 = torch.randn(20, generator=gen, dtype=torch.float64)
    w = torch.nn.Parameter(w0 / w0.norm() * rho0)
    opt = optimizer([w], lr=lr, **kw)
    rhos, gammas, dots = [rho0], [], []
    for k in range(steps):
        if factors is not None:
            opt.param_groups[0]["lr"] = lr * factors[k]
        idx = torch.randint(0, 256, (batch,), generator=gen)
        opt.zero_grad()
        loss = torch.nn.functional.softplus(-y[idx] * (X[idx] @ (w / w.norm())) * 3).mean()
        loss.backward()
        gammas.append(float(w.grad.norm() * w.detach().norm()))
        dots.append(float(w.grad @ w.detach()) / float(w.grad.norm() * w.detach().norm()))
        opt.step()
        rhos.append(float(w.detach().norm()))
    return np.array(rhos), np.array(gammas), np.array(dots)


@settings(max_examples=6, deadline=None)
@given(rho0=st.floats(0.5, 4.0), seed=st.integers(0, 1000))
def test_sgd_without_decay_grows_rho_to_the_fourth(rho0, seed):
    lr, K = 0.05, 300
    rhos, gammas, dots = simulate(rho0, torch.optim.SGD, K, lr, seed)
    assert np.max(np.abs(dots)) < 1e-10  # the gradient is orthogonal to w
    inc = sp.lambdify((eta, gamma), derive("sgd").increment)
    predicted = rho0**4 + np.sum(inc(lr, gammas))  # rho_K^4 = rho_0^4 + 2 sum eta^2 gamma^2
    assert rhos[-1] ** 4 == pytest.approx(predicted, rel=0.02)
    # the exact recursion u' = u + eta^2 gamma^2 / u holds step by step
    rec = sp.lambdify((u, eta, gamma), derive("sgd").recursion)
    assert np.allclose(rhos[1:] ** 2, rec(rhos[:-1] ** 2, lr, gammas), rtol=1e-10)


def test_sgd_coupled_decay_forgets_the_initial_norm_like_exp_minus_2_T_L2():
    lr, wd, K = 0.05, 0.5, 80
    T_L2 = wd * lr * K
    law = sp.lambdify(T, derive("sgd_l2").memory)
    product = (1 - lr * wd) ** (2 * K)  # the exact weight of u_0 in u_K
    assert product == pytest.approx(law(T_L2), rel=2 * lr * wd * T_L2)
    # large initial norm: the gradient term is negligible and u_K / u_0 follows the law
    rhos, _, _ = simulate(50.0, torch.optim.SGD, K, lr, weight_decay=wd)
    assert rhos[-1] ** 2 / rhos[0] ** 2 == pytest.approx(product, rel=1e-3)
    # two initial norms end at (nearly) the same equilibrium after a long T_L2, not without decay
    far = [simulate(r, torch.optim.SGD, 2000, 0.1, weight_decay=0.5)[0][-1] for r in (2.0, 20.0)]
    keep = [simulate(r, torch.optim.SGD, 2000, 0.1)[0][-1] for r in (2.0, 20.0)]
    assert far[1] / far[0] < 1.05 and keep[1] / keep[0] > 5


def test_heavy_ball_decay_runs_at_the_effective_rate():
    lr, wd, b, K = 0.002, 0.5, 0.8, 500
    law = derive("heavy_ball_l2")
    rate = float(law.increment.subs({lam: wd, beta: b}))
    assert rate == pytest.approx(2 * wd / (1 - b))
    rhos, _, _ = simulate(50.0, torch.optim.SGD, K, lr, momentum=b, weight_decay=wd)
    # u_K / u_0 ~ exp(-2 T_L2 / (1 - beta)) after the momentum transient (first ~1/(1-beta) steps)
    measured = math.log(rhos[-1] ** 2 / rhos[30] ** 2) / (lr * (K - 30))
    assert measured == pytest.approx(-rate, rel=0.05)


def test_adamw_decoupled_decay_reaches_a_common_norm():
    lr, wd, K = 0.01, 1.0, 1500
    finals = [simulate(r, torch.optim.AdamW, K, lr, weight_decay=wd)[0][-1] for r in (0.5, 5.0)]
    eq = math.sqrt(float(derive("adamw").equilibrium.subs({eta: lr, lam: wd, D: 20})))
    assert finals[1] / finals[0] < 1.5  # initial ratio 10: forgotten (T_L2 = 15)
    assert finals[0] == pytest.approx(eq, rel=0.5)  # the derived equilibrium sqrt(eta D / 2 lambda) scale


def test_every_law_names_its_clock():
    assert {derive(n).clock for n in LAWS} == {"T_SGD", "T_L2", "sum eta^2"}
    assert "memory" in derive("sgd").latex()


def test_adaptive_law_at_a_generic_point():
    """Steps a orthogonal to w with |a|^2 = D (sign-like, a . w = 0): u' = u + eta^2 D exactly, the
    squared length of a sign step; the memory rho_0^2 / (rho_0^2 + D T), T = sum eta^2, is 1 at
    T = 0 and 1/2 where D T reaches rho_0^2."""
    law = derive("adam")
    rng = np.random.default_rng(5)
    Dn, lr = 20, 0.03
    w = rng.normal(size=Dn) * 1.7
    a = rng.normal(size=Dn)
    a -= (a @ w) / (w @ w) * w
    a *= math.sqrt(Dn) / np.linalg.norm(a)
    rec = sp.lambdify((u, eta, D), law.recursion)
    assert rec(w @ w, lr, Dn) == pytest.approx(np.sum((w - lr * a) ** 2), rel=1e-12)
    step = lr * np.sign(rng.normal(size=Dn))
    assert float(law.increment.subs({eta: lr, D: Dn})) == pytest.approx(step @ step, rel=1e-12)
    memory = sp.lambdify((rho_0, T, D), law.memory)
    assert memory(2.5, 0.0, Dn) == 1.0
    assert memory(2.5, 2.5**2 / Dn, Dn) == pytest.approx(0.5)
    assert memory(2.5, 1.0, Dn) < memory(2.5, 0.5, Dn) < 1.0


class NormalisedSteps(torch.optim.Optimizer):
    """w <- w - lr sqrt(D) g / |g|: Adam-like (every step as long as a sign step, whatever the gradient
    scale) and, on a scale-invariant weight, orthogonal to w.  Written here: torch has no such step."""

    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(p.grad / p.grad.norm(), alpha=-group["lr"] * math.sqrt(p.numel()))


@settings(max_examples=5, deadline=None)
@given(rho0=st.floats(0.3, 3.0), seed=st.integers(0, 1000))
def test_normalised_steps_forget_the_initial_norm_by_the_sum_of_squared_rates(rho0, seed):
    """Simulated: a scale-invariant weight under normalised steps on a cosine schedule keeps the
    fraction rho_0^2 / rho_K^2 of its norm that the sympy law gives at T = sum eta_k^2 (to rounding),
    in units X = D T / rho_0^2 with memory 1 / (1 + X); the old displacement law rho_0 / (rho_0 +
    sqrt(D) sum eta) and the clock sum eta (T_adapt) miss it."""
    K, lr, Dn = 200, 0.02, 20
    factors = 0.5 * (1 + np.cos(np.pi * np.arange(K) / K))
    rhos, _, dots = simulate(rho0, NormalisedSteps, K, lr, seed, factors=factors)
    assert np.max(np.abs(dots)) < 1e-10
    S = float(np.sum((lr * factors) ** 2))
    measured = rhos[0] ** 2 / rhos[-1] ** 2
    law = float(derive("adam").memory.subs({rho_0: rho0, D: Dn, T: S}))
    assert measured == pytest.approx(law, rel=1e-9)
    x = in_units("adam", S, rho_0=rho0, D=Dn)
    assert float(memory_fraction("adam", x)) == pytest.approx(measured, rel=1e-9)
    assert rhos[-1] ** 2 / rhos[0] ** 2 - 1 == pytest.approx(float(x), rel=1e-9)  # the realised X (power 2)
    displacement = rho0 / (rho0 + math.sqrt(Dn) * lr * factors.sum())
    assert abs(displacement - measured) > 0.01 * measured
    same_sum_eta = simulate(rho0, NormalisedSteps, K // 2, 2 * lr, seed, factors=factors[::2])[0]
    assert abs(same_sum_eta[0] ** 2 / same_sum_eta[-1] ** 2 - measured) > 0.01 * measured


def test_units_of_a_he_normal_kernel():
    """A kernel sigma_w x He normal (entries N(0, 2 sigma_w^2 / fan_in)), drawn: adam's X = D T / rho_0^2
    at its measured norm is fan_in T / (2 sigma_w^2) within the draw's noise sqrt(2 / D)."""
    rng = np.random.default_rng(3)
    fan_in, fan_out, sigma_w, S = 300, 200, 1.7, 0.013
    W = sigma_w * rng.normal(scale=math.sqrt(2 / fan_in), size=(fan_out, fan_in))
    x = in_units("adam", S, rho_0=np.linalg.norm(W), D=W.size)
    assert float(x) == pytest.approx(fan_in * S / (2 * sigma_w**2), rel=5 * math.sqrt(2 / W.size))


def test_units_and_forgetting_give_the_memory_law():
    """memory(T) = forgetting(units(T)) for every law, and the units at a generic point: sgd 2 tr Sigma T /
    rho_0^4, decay 2 T, heavy ball 2 T / (1 - beta), adam D T / rho_0^2 (not the displacement's sqrt)."""
    for name in LAWS:
        law = derive(name)
        assert sp.simplify(law.forgetting.subs(X, law.units) - law.memory) == 0, name
    assert float(in_units("sgd", 0.9, rho_0=1.3, trace=0.7)) == pytest.approx(2 * 0.7 * 0.9 / 1.3**4)
    assert float(in_units("sgd_l2", 0.37)) == float(in_units("adamw", 0.37)) == pytest.approx(0.74)
    assert float(in_units("heavy_ball_l2", 0.37, beta=0.8)) == pytest.approx(0.74 / 0.2)
    assert float(in_units("adam", 0.05, rho_0=1.3, D=64)) == pytest.approx(64 * 0.05 / 1.3**2)
    assert memory_fraction("sgd", [0.0, 3.0]).tolist() == [1.0, 0.25]
    assert float(memory_fraction("sgd_l2", 3.0)) == pytest.approx(math.exp(-3))
    assert (derive("sgd").power, derive("adam").power, derive("sgd_l2").power) == (4, 2, None)


def test_units_reject_missing_or_unknown_symbols():
    with pytest.raises(ValueError, match="needs D"):
        in_units("adam", 0.1, rho_0=1.0)
    with pytest.raises(ValueError, match="values must name"):
        in_units("sgd_l2", 0.1, lam=1.0)
    with pytest.raises(ValueError, match="law"):
        memory_fraction("adagrad", 1.0)


def _orthogonal_step(w, size, rng):
    """A vector orthogonal to w with norm ``size``."""
    a = rng.normal(size=w.size)
    a -= (a @ w) / (w @ w) * w
    return a * size / np.linalg.norm(a)


def test_recursions_are_one_step_of_the_norm_at_a_generic_point():
    """u' from one explicit step on a scale-invariant weight (gradient orthogonal to w, |g| = gamma / rho)."""
    rng = np.random.default_rng(11)
    Dn, lr, wd, gam = 12, 0.07, 0.4, 1.9
    w = rng.normal(size=Dn) * 1.3
    g = _orthogonal_step(w, gam / np.linalg.norm(w), rng)
    sgd_l2 = sp.lambdify((u, eta, gamma, lam), derive("sgd_l2").recursion)
    assert sgd_l2(w @ w, lr, gam, wd) == pytest.approx(np.sum((w - lr * (g + wd * w)) ** 2), rel=1e-12)
    a = _orthogonal_step(w, math.sqrt(Dn), rng)
    adamw = sp.lambdify((u, eta, D, lam), derive("adamw").recursion)
    assert adamw(w @ w, lr, Dn, wd) == pytest.approx(np.sum(((1 - lr * wd) * w - lr * a) ** 2), rel=1e-12)


def test_memory_laws_at_generic_clocks():
    """The docstring's laws: sgd rho_0^4 / (rho_0^4 + 2 tr Sigma T), exp(-2 T) with coupled or decoupled
    decay, exp(-2 T / (1 - beta)) with heavy ball; the rho^4 increment is exactly 2 eta^2 gamma^2."""
    rho0, trace = sp.Symbol("rho_0", positive=True), sp.Symbol(r"\operatorname{tr}\Sigma", positive=True)
    sgd = derive("sgd")
    assert sp.simplify(sgd.increment - 2 * eta**2 * gamma**2) == 0
    assert float(sgd.memory.subs({rho0: 1.3, trace: 0.7, T: 0.9})) == pytest.approx(1.3**4 / (1.3**4 + 2 * 0.7 * 0.9))
    for name in ("sgd_l2", "adamw"):
        assert float(derive(name).memory.subs({T: 0.37, lam: 0.2})) == pytest.approx(math.exp(-2 * 0.37)), name
    hb = derive("heavy_ball_l2")  # rate 2 lambda / (1 - beta) = 0.8 here (not 1, which hides * vs /)
    assert float(hb.memory.subs({T: 0.37, lam: 0.2, beta: 0.5})) == pytest.approx(math.exp(-2 * 0.37 / 0.5))
    assert float(hb.recursion.subs({u: 2.0, eta: 0.01, lam: 0.2, beta: 0.5})) == pytest.approx(2.0 * (1 - 0.01 * 0.8))
    assert "u_*" in derive("adamw").latex() and "u_*" not in derive("adam").latex()
