"""Per-run forgetting metrics (``numerics.metrics.forgetting_metrics``) on histories written by hand.

Each metric is read off a history whose answer is visible by eye (the row of least validation
loss, the first row at or above the threshold, best minus worst), including the ties and the
boundaries the definitions name: training accuracy exactly at the threshold, two epochs with
the same validation loss, the first epoch not numbered 1.  norm_slope against numpy's polyfit on
log-log data, and its refusals.
"""

import math

import numpy as np
import pytest

from implicitbias.numerics.metrics import forgetting_metrics as fm
from implicitbias.theory.params import ParameterError


def _row(epoch, train_acc, val_loss, val_acc, test_acc, kernel_norm):
    return dict(epoch=epoch, train_acc=train_acc, val_loss=val_loss, val_acc=val_acc, test_acc=test_acc,
                kernel_norm=kernel_norm)


HISTORY = [
    _row(5, 0.30, 2.0, 0.35, 0.33, 1.5),
    _row(6, 0.80, 0.9, 0.55, 0.52, 2.0),
    _row(7, 0.995, 1.2, 0.61, 0.60, 2.5),  # exactly at the threshold
    _row(8, 1.0, 0.9, 0.66, 0.64, 3.0),  # ties the least validation loss: the first (epoch 6) counts
    _row(9, 1.0, 1.4, 0.58, 0.57, 3.25),
]


def test_each_metric_on_a_hand_made_history():
    assert fm.selected_epoch(HISTORY) == 6 and fm.selected_test_acc(HISTORY) == 0.52
    assert fm.tau_interp(HISTORY) == 7
    assert fm.tau_interp(HISTORY, threshold=0.996) == 8 and fm.tau_interp(HISTORY, threshold=1.0) == 8
    assert fm.tau_interp(HISTORY, threshold=0.0) == 5
    assert fm.repair_gap(HISTORY) == pytest.approx(0.58 - 0.61)
    assert fm.repair_gap(HISTORY, threshold=0.5) == pytest.approx(0.58 - 0.55)
    summary = fm.run_summary(HISTORY)
    assert summary == {"selected_epoch": 6, "selected_test_acc": 0.52, "tau_interp": 7,
                       "repair_gap": pytest.approx(-0.03), "final_train_acc": 1.0, "final_test_acc": 0.57,
                       "initial_kernel_norm": 1.5, "final_kernel_norm": 3.25}
    first = dict(HISTORY[0])
    del first["kernel_norm"]
    assert math.isnan(fm.run_summary([first, *HISTORY[1:]])["initial_kernel_norm"])


@pytest.mark.parametrize("threshold", [-0.01, 1.01, math.nan])
def test_tau_interp_refuses_thresholds_outside_0_1(threshold):
    with pytest.raises(ParameterError, match="^threshold must"):
        fm.tau_interp(HISTORY, threshold)


def test_spread_is_best_minus_worst():
    assert fm.spread([0.61, 0.58, 0.7, 0.64]) == pytest.approx(0.7 - 0.58)
    assert fm.spread(np.array([0.5])) == 0.0
    with pytest.raises(ParameterError, match="^values must"):
        fm.spread([])


def test_norm_slope_against_polyfit_on_noisy_data():
    rng = np.random.default_rng(4)
    s = np.array([0.25, 0.5, 1.0, 1.5, 2.5])
    norms = 3.0 * s**0.7 * np.exp(rng.normal(0, 0.1, size=5))
    assert fm.norm_slope(s, norms) == pytest.approx(np.polyfit(np.log(s), np.log(norms), 1)[0], rel=1e-12)
    small = [0.2, 0.3, 0.9]  # norms below 1 and sigma_w below 1 are valid
    assert fm.norm_slope([0.5, 0.7, 2.0], small) == pytest.approx(np.polyfit(np.log([0.5, 0.7, 2.0]), np.log(small), 1)[0])


@pytest.mark.parametrize("sigma_ws, norms, what", [
    ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], "sigma_ws must hold"),
    ([1.0, 2.0], [1.0, 2.0, 3.0], "sigma_ws must hold"),
    ([0.0, 1.0], [1.0, 2.0], "sigma_ws and final_norms must be positive"),
    ([1.0, 2.0], [0.0, 2.0], "sigma_ws and final_norms must be positive"),
    ([1.0, 2.0], [1.0, math.inf], "sigma_ws and final_norms must be positive"),
])
def test_norm_slope_refuses_degenerate_sweeps(sigma_ws, norms, what):
    with pytest.raises(ParameterError, match=f"^{what}"):
        fm.norm_slope(sigma_ws, norms)
