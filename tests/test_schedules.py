"""Learning-rate schedules (theory/schedules.py) against torch.optim.lr_scheduler, step by step."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from implicitbias.theory.params import ParameterError
from implicitbias.theory.schedules import SCHEDULES, schedule


def torch_lrs(make, lr, total):
    p = [torch.zeros(1, requires_grad=True)]
    opt = torch.optim.SGD(p, lr=lr)
    sched = make(opt)
    out = []
    for _ in range(total):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return out


@settings(max_examples=15, deadline=None)
@given(total=st.integers(8, 300), lr=st.floats(1e-4, 1.0))
def test_cosine_and_onecycle_match_torch(total, lr):
    cos = torch_lrs(lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=total), lr, total)
    one = torch_lrs(lambda o: torch.optim.lr_scheduler.OneCycleLR(o, max_lr=lr, total_steps=total), lr, total)
    f, g = schedule("cosine", lr, total), schedule("onecycle", lr, total)
    assert max(abs(f(k) - c) for k, c in enumerate(cos)) < 1e-12 * lr + 1e-15
    assert max(abs(g(k) - c) for k, c in enumerate(one)) < 1e-9 * lr


@settings(max_examples=15, deadline=None)
@given(total=st.integers(10, 300), lr=st.floats(1e-4, 1.0), gamma=st.floats(0.05, 0.9))
def test_step_and_warmup_match_torch(total, lr, gamma):
    milestones = [math.ceil(0.5 * total), math.ceil(0.75 * total)]
    step = torch_lrs(lambda o: torch.optim.lr_scheduler.MultiStepLR(o, milestones, gamma), lr, total)
    f = schedule("step", lr, total, gamma=gamma)
    assert max(abs(f(k) - s) for k, s in enumerate(step)) < 1e-12
    W = round(0.1 * total)
    if W > 1:
        warm = torch_lrs(lambda o: torch.optim.lr_scheduler.LinearLR(o, 1 / W, 1.0, total_iters=W - 1), lr, total)
        g = schedule("warmup", lr, total, warmup=0.1)
        assert max(abs(g(k) - s) for k, s in enumerate(warm)) < 1e-12


def test_warmup_then_cosine_by_hand():
    f = schedule("warmup", 1.0, 6, warmup=1 / 3, after="cosine")
    # W = 2: 1/2, 1, then cosine over the 4 remaining steps: 1, (1 + cos(pi/4))/2, 1/2, (1 - cos(pi/4))/2
    expected = [0.5, 1.0, 1.0, 0.8535533905932737, 0.5, 0.14644660940672627]
    assert [f(k) for k in range(6)] == pytest.approx(expected, abs=1e-12)


def test_user_callable_and_constant():
    f = schedule(lambda k: 0.1 / (k + 1), total_steps=5)
    assert f(4) == pytest.approx(0.02)
    assert schedule("constant", 0.3, 7)(6) == 0.3
    assert set(SCHEDULES) == {"constant", "step", "cosine", "warmup", "onecycle"}


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: schedule("linear", 0.1, 10), "schedule"),
        (lambda: schedule("cosine", 0.0, 10), "lr"),
        (lambda: schedule("cosine", 0.1, 0), "total_steps"),
        (lambda: schedule("cosine", 0.1, 10)(10), "k"),
        (lambda: schedule("step", 0.1, 10, milestones=(1.5,)), "milestones"),
        (lambda: schedule("constant", 0.1, 10, gamma=0.1), "schedule keyword"),
        (lambda: schedule(lambda k: -1.0, total_steps=3)(0), r"lr_schedule\(k\)"),
        (lambda: schedule("warmup", 0.1, 10, after="linear"), "after"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ParameterError, match=rf"^{name} must"):
        call()


@pytest.mark.parametrize("total, pct, div, final_div", [(5, 0.3, 25.0, 1e4), (20, 0.1, 1.5, 1.5), (37, 0.45, 3.0, 1e4)])
def test_onecycle_matches_torch_relatively_at_short_warm_ups_and_small_factors(total, pct, div, final_div):
    """Relative agreement at every step (the last rate lr / (div final_div) is tiny), with a warm-up
    ending before step 1 (pct T - 1 <= 1) and factors near their lower bound 1."""
    lr = 0.7
    one = torch_lrs(lambda o: torch.optim.lr_scheduler.OneCycleLR(o, max_lr=lr, total_steps=total, pct_start=pct,
                                                                  div_factor=div, final_div_factor=final_div), lr, total)
    g = schedule("onecycle", lr, total, pct_start=pct, div_factor=div, final_div_factor=final_div)
    assert max(abs(g(k) - c) / c for k, c in enumerate(one)) < 1e-12
    default = schedule("onecycle", lr, 50)
    assert default(49) == pytest.approx(lr / 25 / 1e4, rel=1e-12) and default(0) == pytest.approx(lr / 25, rel=1e-12)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: schedule("step", 0.1, 10, gamma=0.0), "gamma must be a finite number > 0 and <= 1"),
        (lambda: schedule("step", 0.1, 10, gamma=1.5), "gamma must be a finite number > 0 and <= 1"),
        (lambda: schedule("warmup", 0.1, 10, warmup=1.5), "warmup must be a finite number >= 0 and <= 1"),
        (lambda: schedule("onecycle", 0.1, 10, pct_start=1.5), "pct_start must be a finite number > 0 and <= 1"),
        (lambda: schedule("onecycle", 0.1, 10, div_factor=0.5), "div_factor must be a finite number >= 1"),
        (lambda: schedule("onecycle", 0.1, 10, final_div_factor=0.5), "final_div_factor must be a finite number >= 1"),
        (lambda: schedule("cosine", 0.1, 10**9 + 1), r"total_steps must be an integer in \[1, 1000000000\]"),
        (lambda: schedule(lambda k: 0.1, total_steps=4)(4), r"k must be an integer in \[0, 3\]"),
        (lambda: schedule("constant", 0.1, 10, eta_min=0.0), r"schedule keyword must be one of \(none\) for constant"),
        (lambda: schedule("step", 0.1, 10, eta_min=0.0), r"schedule keyword must be one of \(gamma, milestones\) for step"),
    ],
)
def test_bad_keywords_are_refused_at_their_bounds(call, message):
    with pytest.raises(ParameterError, match=rf"^{message}"):
        call()


def test_keywords_on_their_bounds_are_accepted():
    assert schedule("step", 0.4, 10, gamma=1.0)(9) == 0.4
    assert schedule("warmup", 0.4, 10, warmup=1.0)(9) == pytest.approx(0.4)
    assert schedule("onecycle", 0.4, 10, pct_start=1.0)(9) == pytest.approx(0.4)
    assert schedule("cosine", 0.4, 10**9)(0) == 0.4
