"""Deep UFM building blocks (``numerics.ufm.deep_ufm``): sizes, initialisations and the GD loop.

Checked against what each docstring states, by routes outside the code: the 2 GiB guard at the
exact boundary d max(d, K n) (L + 1) = 2^28 (L counts weight matrices, N = L + 1 factors); the
recorded steps of a run against the schedule k % record_every == 0 plus the last step, with
times summed by hand; normalised-gradient steps measured as the distance moved in parameter
space (length lr); the zero point, where every gradient vanishes, stopping a normalised run;
Gaussian initialisation's entry scale against scale / sqrt(d) (a chi-square interval).
"""

import math

import numpy as np
import pytest
import torch

from implicitbias.numerics.ufm import deep_ufm as du
from implicitbias.theory.params import ParameterError


def test_size_guard_at_its_exact_boundary():
    assert du.check_shape(2, 3, 8192, 1) == (2, 3, 8192, 1)  # 2^13 * 2^13 * 4 = 2^28: allowed
    with pytest.raises(ParameterError, match="exceed 2 GiB"):
        du.check_shape(2, 4, 8192, 1)  # 5 * 2^26 > 2^28
    assert du.check_shape(2, 1, 1, 100_000) == (2, 1, 1, 100_000)  # width 1 and the largest n
    with pytest.raises(ParameterError, match=r"^n must be an integer in \[1, 100000\]"):
        du.check_shape(2, 1, 1, 100_001)


def test_factor_shapes_are_checked_with_a_message_naming_them():
    with pytest.raises(ParameterError, match=r"^factors\[1\] has 4 columns but factors\[0\] has 3 rows"):
        du.gradient_descent([np.ones((3, 2)), np.ones((4, 4))], 0.1, 1)


def test_gaussian_init_scale():
    factors = du.gaussian_init(4, 2, 200, 1, scale=0.3, seed=5)
    entries = np.concatenate([f.numpy().ravel() for f in factors])
    n = entries.size  # sum of squares / (scale^2 / d) is chi-square with n degrees of freedom
    ratio = float(np.sum(entries**2)) / (0.3**2 / 200) / n
    assert abs(ratio - 1) < 5 * math.sqrt(2 / n)
    with pytest.raises(ParameterError, match="^scale must"):
        du.gaussian_init(4, 2, 8, scale=0.0)


def test_hadamard_init_default_and_largest_n():
    s = np.array([[1.0, 2.0], [0.5, 1.5]])
    H, W = du.hadamard_init(s)
    assert H.shape == (2, 2) and W.shape == (2, 2)
    assert np.allclose(np.linalg.svd((W @ H).numpy(), compute_uv=False), sorted(s.prod(axis=0), reverse=True))
    with pytest.raises(ParameterError, match="^n must"):
        du.hadamard_init(s, n=100_001)


def test_recorded_steps_and_times_follow_record_every():
    factors = du.gaussian_init(3, 1, 4, 1, scale=0.5, seed=1)
    run = du.gradient_descent(factors, 0.05, 7, record_every=3)
    assert run.success and run.message == ""
    assert np.allclose(run.times, [0.0, 0.15, 0.3, 0.35])  # steps 0, 3, 6 and the last, 7
    assert len(run.loss) == len(run.logits) == 4
    short = du.gradient_descent(factors, 0.05, 3, record_every=1)
    assert np.allclose(run.logits[1], short.logits[-1])


def test_normalised_gradient_steps_have_length_lr_and_stop_at_the_zero_point():
    factors = du.gaussian_init(3, 2, 5, 1, scale=0.4, seed=2)
    run = du.gradient_descent(factors, 0.07, 1, normalized="gradient")
    moved = math.sqrt(sum(float(((a - b) ** 2).sum()) for a, b in zip(run.factors, factors)))
    theta = [f.clone().requires_grad_(True) for f in factors]
    grads = torch.autograd.grad(du.loss(theta), theta)
    norm = math.sqrt(sum(float((g**2).sum()) for g in grads))
    assert moved == pytest.approx(0.07, rel=1e-12) and run.times[-1] == pytest.approx(0.07 / norm, rel=1e-12)
    zero = [torch.zeros(5, 3, dtype=torch.float64), torch.zeros(5, 5, dtype=torch.float64),
            torch.zeros(3, 5, dtype=torch.float64)]
    stuck = du.gradient_descent(zero, 0.07, 10, normalized="gradient")
    assert not stuck.success and "gradient normaliser underflowed to 0 at step 0" in stuck.message
    assert len(stuck.loss) == 1 and stuck.loss[0] == pytest.approx(math.log(3))


def test_margin_event_is_terminal_and_upward():
    event = du.margin_event(2.0)
    assert event.terminal is True and event.direction == 1
    assert event(np.array([[3.0, 0.0], [0.0, 3.0]])) == pytest.approx(1.0)


def test_gradient_norm_over_all_factors_survives_underflow_and_batches():
    """``gradient_norm`` against torch's vector norm of the concatenated gradients, at a generic
    point, at gradients of 1e-200 (whose squares underflow) and per seed of a batch."""
    gen = torch.Generator().manual_seed(5)
    grads = [torch.randn(3, 4, dtype=torch.float64, generator=gen), torch.randn(2, 3, dtype=torch.float64, generator=gen)]
    direct = float(torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads])))
    assert float(du.gradient_norm(grads)) == pytest.approx(direct, rel=1e-14)
    tiny = [g * 1e-200 for g in grads]
    assert float(torch.sqrt(sum((g**2).sum() for g in tiny))) < 1e-300  # the naive norm underflows
    assert float(du.gradient_norm(tiny)) == pytest.approx(direct * 1e-200, rel=1e-14)
    batched = [torch.stack([g, 3 * g]) for g in grads]
    assert du.gradient_norm(batched, batch_dims=1).tolist() == pytest.approx([direct, 3 * direct], rel=1e-14)
    assert not float(du.gradient_norm([torch.zeros(2, 2, dtype=torch.float64)])) > 0
