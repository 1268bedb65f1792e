"""The clock calculator against sums computed by hand, one case per schedule."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from implicitbias.theory.clocks import (
    forgetting_clocks,
    governing_clock,
    steps_per_epoch,
)
from implicitbias.theory.params import ParameterError
from implicitbias.theory.schedules import schedule


def test_constant_by_hand():
    # N = 10, b = 4: ceil -> 3 steps per epoch; lr 0.1: sum eta = 0.3, sum eta^2 = 0.03 per epoch
    c = forgetting_clocks("sgd", 0.1, 4, 10, 2, weight_decay=0.5)
    assert c.steps_per_epoch == 3
    assert c.per_epoch["T_SGD"] == pytest.approx([0.0075, 0.0075])
    assert c.per_epoch["T_adapt"] == pytest.approx([0.3, 0.3])
    assert c.cumulative["T_L2"] == pytest.approx([0.15, 0.3])
    assert forgetting_clocks("sgd", 0.1, 4, 10, 1, drop_last=True).per_epoch["T_adapt"] == pytest.approx([0.2])


def test_step_by_hand():
    # 6 steps, milestone at half, gamma 0.1: 0.1, 0.1, 0.1 | 0.01, 0.01, 0.01
    eta = schedule("step", 0.1, 6, milestones=(0.5,), gamma=0.1)
    c = forgetting_clocks("sgd_momentum", eta, 2, 6, 2, weight_decay=1.0)
    assert c.per_epoch["T_adapt"] == pytest.approx([0.3, 0.03])
    assert c.per_epoch["T_SGD"] == pytest.approx([0.03 / 2, 0.0003 / 2])
    assert c.cumulative["T_L2"] == pytest.approx([0.3, 0.33])


def test_cosine_by_hand():
    # 4 steps: lr (1 + cos(pi k / 4)) / 2 = 1, 0.853553, 0.5, 0.146447; 2 per epoch, b = 2
    c = forgetting_clocks("adam", schedule("cosine", 1.0, 4), 2, 4, 2)
    assert c.per_epoch["T_adapt"] == pytest.approx([1.8535534, 0.6464466])
    assert c.per_epoch["T_SGD"] == pytest.approx([(1 + 0.7285534) / 2, (0.25 + 0.0214466) / 2])
    assert c.governing == "T_adapt"


def test_warmup_by_hand():
    # 4 steps, W = 2: 0.5, 1, 1, 1
    c = forgetting_clocks("sgd", schedule("warmup", 1.0, 4, warmup=0.5), 1, 1, 4)
    assert c.cumulative["T_adapt"] == pytest.approx([0.5, 1.5, 2.5, 3.5])
    assert c.cumulative["T_SGD"] == pytest.approx([0.25, 1.25, 2.25, 3.25])


def test_onecycle_by_hand():
    # 5 steps, pct 0.4: up over k <= 1 from 1/25 to 1, then cosine down to 1/25e4 at k = 4
    lrs = [0.04, 1.0, (1 + 0.04e-4) / 2 + (1 - 0.04e-4) / 2 * math.cos(math.pi / 3), 0.0, 0.04e-4]
    lrs[3] = 0.04e-4 + (1 - 0.04e-4) * (1 + math.cos(2 * math.pi / 3)) / 2
    c = forgetting_clocks("muon", schedule("onecycle", 1.0, 5, pct_start=0.4), 1, 1, 5)
    assert c.per_epoch["T_adapt"] == pytest.approx(lrs, rel=1e-9)


def test_user_callable_by_hand():
    c = forgetting_clocks("sgd", lambda k: 1.0 / (k + 1), 2, 4, 1)
    assert c.per_epoch["T_adapt"] == pytest.approx([1.5])
    assert c.per_epoch["T_SGD"] == pytest.approx([1.25 / 2])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5000), b=st.integers(1, 512), epochs=st.integers(1, 20), lr=st.floats(1e-4, 1.0))
def test_constant_schedule_totals(n, b, epochs, lr):
    if b > n:
        with pytest.raises(ParameterError, match="^batch_size must"):
            forgetting_clocks("sgd", lr, b, n, epochs)
        return
    c = forgetting_clocks("sgd", lr, b, n, epochs)
    k = epochs * -(-n // b)
    assert c.total["T_SGD"] == pytest.approx(k * lr * lr / b, rel=1e-9)
    assert c.total["T_adapt"] == pytest.approx(k * lr, rel=1e-9)


def test_governing_clocks():
    assert governing_clock("sgd") == "T_SGD"
    assert governing_clock("sgd", 5e-4) == "T_L2"
    assert {governing_clock(o) for o in ("adam", "adamw", "muon", "rmsprop", "sign")} == {"T_adapt"}
    assert steps_per_epoch(45000, 128) == 352
    assert steps_per_epoch(2**54, 2**53) == 2  # the largest minibatch allowed (MAX_BATCH)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(optimizer="sgd", lr_schedule=0.0), "lr"),
        (dict(optimizer="sgd", lr_schedule=-0.1), "lr"),
        (dict(optimizer="sgd", lr_schedule=0.1, batch_size=200), "batch_size"),
        (dict(optimizer="adamx", lr_schedule=0.1), "optimizer"),
        (dict(optimizer="sgd", lr_schedule=0.1, weight_decay=-1.0), "weight_decay"),
        (dict(optimizer="sgd", lr_schedule=float("nan")), "lr"),
        (dict(optimizer="sgd", lr_schedule=0.1, epochs=10**8), "epochs"),
        (dict(optimizer="sgd", lr_schedule=0.1, batch_size=2**64, n_train=2**64), "batch_size"),
    ],
)
def test_bad_input(kwargs, name):
    base = dict(batch_size=10, n_train=100, epochs=2)
    with pytest.raises(ParameterError, match=rf"^{name} must"):
        forgetting_clocks(**{**base, **kwargs})


def test_step_budget_and_learning_rate_are_checked():
    with pytest.raises(ParameterError, match="^epochs must give at most 1e\\+08 steps, got 101000000"):
        forgetting_clocks("sgd", 0.1, 1, 10**6, 101)
    with pytest.raises(ParameterError, match="^lr must be"):
        forgetting_clocks("sgd", 0.0, 8, 64, 1)


def test_no_decay_by_default_and_rows_per_epoch():
    c = forgetting_clocks("sgd", 0.1, 8, 64, 2)
    assert c.total["T_L2"] == 0.0
    rows = c.rows()
    assert [r[0] for r in rows] == [1, 2] and rows[1][1] == pytest.approx(8 * 0.01 / 8)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1e-3, 1e101, True, "0.1", None])
@pytest.mark.parametrize("at", [0, 7, 19])
def test_a_bad_rate_anywhere_in_a_schedule_is_named(bad, at):
    """A schedule's rate is checked at every step, wherever in the run the bad one falls."""
    with pytest.raises(ParameterError, match=r"^lr_schedule\(k\) must be a finite number >= 0"):
        forgetting_clocks("sgd", lambda k: bad if k == at else 0.1, batch_size=10, n_train=100, epochs=2)


def test_numpy_and_integer_rates_give_the_clocks_of_their_float_values():
    """Rates of other real types (numpy floats, ints) give the sums of their float values, by hand."""
    import numpy as np

    for rate in (np.float32(0.25), np.float64(0.25), 1):
        c = forgetting_clocks("sgd", lambda k, r=rate: r, batch_size=10, n_train=100, epochs=2)
        eta = float(rate)
        assert c.total["T_SGD"] == pytest.approx(20 * eta**2 / 10) and c.total["T_adapt"] == pytest.approx(20 * eta)
