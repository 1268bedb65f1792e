"""Optimisers by name: Newton-Schulz against the polar factor, coupled vs decoupled decay, Muon."""

import numpy as np
import pytest
import scipy.linalg
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from implicitbias.numerics.optim.optimizers import OPTIMIZERS, make_optimizer, newton_schulz
from implicitbias.theory.params import ParameterError


def polar(G: np.ndarray) -> np.ndarray:
    """The orthogonal polar factor U V^T via scipy (transposed for wide matrices)."""
    if G.shape[0] >= G.shape[1]:
        return scipy.linalg.polar(G)[0]
    return scipy.linalg.polar(G.T)[0].T


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 12), cols=st.integers(1, 12), seed=st.integers(0, 10**6))
def test_newton_schulz_singular_vectors_are_the_polar_factors(rows, cols, seed):
    G = np.random.default_rng(seed).standard_normal((rows, cols))
    O = newton_schulz(torch.tensor(G), steps=5).numpy()
    # Muon's quintic keeps the singular vectors: the polar factor of O is the polar factor of G
    assert np.allclose(polar(O), polar(G), atol=1e-8)
    # ... and maps each singular value s / ||G||_F through p(x) = a x + b x^3 + c x^5 five times
    a, b, c = 3.4445, -4.7750, 2.0315
    x = np.linalg.svd(G, compute_uv=False) / np.linalg.norm(G)
    for _ in range(5):
        x = a * x + b * x**3 + c * x**5
    s = np.linalg.svd(O, compute_uv=False)
    assert np.allclose(np.sort(s), np.sort(x), atol=1e-10)
    assert s.max() < 1.25


@settings(max_examples=10, deadline=None)
@given(rows=st.integers(2, 8), cols=st.integers(2, 8), seed=st.integers(0, 10**6))
def test_cubic_newton_schulz_converges_to_polar(rows, cols, seed):
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((rows, rows)))
    V, _ = np.linalg.qr(rng.standard_normal((cols, cols)))
    S = np.zeros((rows, cols))
    np.fill_diagonal(S, rng.uniform(0.5, 2.0, min(rows, cols)))  # well conditioned
    G = U @ S @ V.T
    O = newton_schulz(torch.tensor(G), steps=60, coefficients=(1.5, -0.5, 0.0)).numpy()
    assert np.allclose(O, polar(G), atol=1e-10)


def one_step(name, w0, grad, **kw):
    w = torch.nn.Parameter(torch.tensor(w0, dtype=torch.float64))
    opt = make_optimizer(name, [w], 0.1, **kw)
    w.grad = torch.tensor(grad, dtype=torch.float64)
    opt.step()
    return w.detach().numpy()


def test_coupled_versus_decoupled_decay():
    w0, zero = [[2.0, -4.0]], [[0.0, 0.0]]
    # decoupled (AdamW): w (1 - lr lambda); coupled (Adam): the decay is a gradient, normalised to ~lr
    assert np.allclose(one_step("adamw", w0, zero, weight_decay=0.5), np.array(w0) * (1 - 0.05))
    assert np.allclose(one_step("adam", w0, zero, weight_decay=0.5), np.array(w0) - 0.1 * np.sign(w0), atol=1e-6)
    assert np.allclose(one_step("sgd", w0, zero, weight_decay=0.5), np.array(w0) * (1 - 0.05))
    assert np.allclose(one_step("sign", w0, [[1e-3, -5.0]]), np.array(w0) - 0.1 * np.array([[1.0, -1.0]]))


def test_muon_flattens_conv_kernels_and_steps_along_the_polar_factor():
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 4, 3).double()
    bn = torch.nn.BatchNorm2d(4).double()
    W0 = conv.weight.detach().clone()
    opt = make_optimizer("muon", list(conv.parameters()) + list(bn.parameters()), 0.05, momentum=0.0)
    bn(conv(torch.randn(2, 3, 6, 6, dtype=torch.float64))).square().mean().backward()
    G = conv.weight.grad.reshape(4, -1).numpy().copy()
    gamma0 = bn.weight.detach().clone()
    opt.step()
    step = (W0 - conv.weight.detach()).reshape(4, -1).numpy()
    assert np.allclose(polar(step), polar(G), atol=1e-8)  # a positive multiple of U' V^T
    assert not torch.equal(bn.weight.detach(), gamma0)  # 1-D parameters moved by the companion
    assert np.linalg.norm(step, 2) == pytest.approx(0.05, rel=0.3)  # spectral size ~ lr


def test_every_optimizer_steps_a_bn_network():
    for name in OPTIMIZERS:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(5, 8, bias=False), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 3))
        before = [p.detach().clone() for p in model.parameters()]
        opt = make_optimizer(name, model.parameters(), 0.01)
        torch.nn.functional.cross_entropy(model(torch.randn(6, 5)), torch.tensor([0, 1, 2, 0, 1, 2])).backward()
        opt.step()
        assert all(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters())), name


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(name="adamx", lr=0.1), "optimizer"),
        (dict(name="sgd", lr=0.0), "lr"),
        (dict(name="sgd_momentum", lr=0.1, momentum=1.5), "momentum"),
        (dict(name="adamw", lr=0.1, weight_decay=-1.0), "weight_decay"),
        (dict(name="adam", lr=0.1, betas=(0.9, 1.5)), "beta2"),
    ],
)
def test_bad_input(kwargs, name):
    with pytest.raises(ParameterError, match=rf"^{name} must"):
        make_optimizer(params=[torch.nn.Parameter(torch.zeros(2, 2))], **kwargs)


def _muon_steps(grads, p0, *, lr, momentum, weight_decay, shape_factor="flattened"):
    p = torch.nn.Parameter(torch.tensor(p0, dtype=torch.float64))
    opt = make_optimizer("muon", [p], lr, momentum=momentum, weight_decay=weight_decay, shape_factor=shape_factor)
    for g in grads:
        p.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
    return p.detach().numpy()


def test_muon_two_steps_at_a_generic_point():
    """Nesterov look-ahead, decoupled decay and the aspect-ratio scale on a tall 5 x 3 weight:
    B_1 = G_1, U_1 = G_1 + mu B_1; B_2 = mu B_1 + G_2, U_2 = G_2 + mu B_2;
    theta_k = theta_{k-1} (1 - lr lambda) - lr sqrt(5/3) NS(U_k)."""
    rng = np.random.default_rng(3)
    p0, G1, G2 = rng.standard_normal((3, 5, 3))
    lr, mu, lam = 0.05, 0.9, 0.3
    s = np.sqrt(5 / 3)

    def ns(U):
        return newton_schulz(torch.tensor(U)).numpy()

    B1 = G1
    p1 = p0 * (1 - lr * lam) - lr * s * ns(G1 + mu * B1)
    B2 = mu * B1 + G2
    p2 = p1 * (1 - lr * lam) - lr * s * ns(G2 + mu * B2)
    assert np.allclose(_muon_steps([G1, G2], p0, lr=lr, momentum=mu, weight_decay=lam), p2, atol=1e-12)


@pytest.mark.parametrize("shape, flattened, reference", [
    ((64, 2, 3, 3), np.sqrt(64 / 18), 1.0),  # square kernel: the reference's k/k = 1
    ((16, 2, 3, 1), np.sqrt(16 / 6), np.sqrt(3.0)),  # non-square kernel: sqrt(k_h / k_w)
    ((4, 3, 3, 3), 1.0, 1.0),  # wide flattened matrix: both 1
])
def test_muon_shape_factor_on_conv_kernels(shape, flattened, reference):
    rng = np.random.default_rng(0)
    p0, G = rng.standard_normal((2, *shape))
    O = newton_schulz(torch.tensor(G.reshape(shape[0], -1))).numpy().reshape(shape)
    for option, factor in (("flattened", flattened), ("reference", reference)):
        step = p0 - _muon_steps([G], p0, lr=0.1, momentum=0.0, weight_decay=0.0, shape_factor=option)
        assert np.allclose(step, 0.1 * factor * O, atol=1e-12), option


def test_muon_shape_factor_is_checked():
    with pytest.raises(ParameterError, match="^shape_factor"):
        make_optimizer("muon", [torch.nn.Parameter(torch.zeros(2, 2))], 0.1, shape_factor="square")


def test_muon_class_defaults_and_its_companion():
    """Muon built directly: no decay, 5 Newton-Schulz steps, Nesterov (1.95 G has G's polar factor);
    the companion AdamW moves 1-D parameters without decay and zero_grad clears both."""
    from implicitbias.numerics.optim.optimizers import Muon

    rng = np.random.default_rng(8)
    W = torch.nn.Parameter(torch.tensor(rng.standard_normal((3, 5))))
    b = torch.nn.Parameter(torch.tensor(rng.standard_normal(3)))
    W0, b0 = W.detach().clone(), b.detach().clone()
    opt = Muon([W, b], 0.1)
    G = torch.tensor(rng.standard_normal((3, 5)))
    W.grad, b.grad = G.clone(), torch.zeros(3, dtype=torch.float64)
    opt.step()
    assert torch.allclose(W.detach(), W0 - 0.1 * newton_schulz(G, steps=5), atol=1e-12)
    assert torch.equal(b.detach(), b0)  # zero gradient and no decay: the companion leaves it
    opt.zero_grad()
    assert W.grad is None and b.grad is None


def test_muon_reference_shape_factor_on_a_tall_matrix_is_the_flattened_one():
    rng = np.random.default_rng(1)
    p0, G = rng.standard_normal((2, 6, 2))
    ref = _muon_steps([G], p0, lr=0.1, momentum=0.0, weight_decay=0.0, shape_factor="reference")
    flat = _muon_steps([G], p0, lr=0.1, momentum=0.0, weight_decay=0.0)
    assert np.allclose(ref, flat, atol=1e-14)
    assert np.allclose(p0 - flat, 0.1 * np.sqrt(3.0) * newton_schulz(torch.tensor(G)).numpy(), atol=1e-12)


def test_sign_descent_with_coupled_decay_and_defaults():
    from implicitbias.numerics.optim.optimizers import SignDescent

    # g + lambda w: the decay term wins where |lambda w| > |g|
    assert np.allclose(one_step("sign", [[3.0, -1.0]], [[-0.5, 0.1]], weight_decay=0.5), [[2.9, -0.9]])
    w = torch.nn.Parameter(torch.tensor([2.0, -2.0], dtype=torch.float64))
    opt = SignDescent([w], 0.1)
    w.grad = torch.tensor([1e-3, 1e-3], dtype=torch.float64)
    opt.step()
    assert torch.allclose(w.detach(), torch.tensor([1.9, -2.1], dtype=torch.float64))  # no decay by default


def test_plain_sgd_has_no_momentum():
    w = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    opt = make_optimizer("sgd", [w], 0.1)
    for g in (1.0, 2.0):
        w.grad = torch.tensor([g], dtype=torch.float64)
        opt.step()
    assert w.item() == pytest.approx(1.0 - 0.1 * 1.0 - 0.1 * 2.0)


@pytest.mark.parametrize("kwargs, name", [
    (dict(name="adam", betas=(1.0, 0.999)), "beta1"),
    (dict(name="muon", ns_steps=51), "ns_steps"),
    (dict(name="muon", companion_lr=0.0), "companion_lr"),
])
def test_more_bad_input(kwargs, name):
    with pytest.raises(ParameterError, match=rf"^{name} must"):
        make_optimizer(params=[torch.nn.Parameter(torch.zeros(2, 2))], lr=0.1, **kwargs)
