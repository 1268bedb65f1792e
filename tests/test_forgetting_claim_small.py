"""Forgetting at small scale (Spec B, C3/C4/C7): the clocks computed by theory/ against trained ResNets.

- T_L2 (C4): with coupled L2 decay the initial kernel norm is forgotten as exp(-T_L2),
  T_L2 = lambda sum eta_k (theory.clocks).  For a large sigma_w, where gradient-driven norm growth
  is negligible, the final norm with decay over the final norm without it is exp(-T_L2).
- Radial memory (C1 vs C3): plain low-lr SGD keeps the final norm proportional to the initial one
  (log-norm slope ~ 1), Adam moves it towards a common norm (slope clearly below SGD's).
"""

import math

import pytest

from implicitbias.validation.analysis import group_runs, summarise
from implicitbias.validation.run import execute
from implicitbias.validation.sweep import load_spec

BASE = {"dataset": "synthetic", "data_size": 300, "width": 0.0625, "epochs": 8, "batch_size": 32}


@pytest.fixture(scope="module")
def runs():
    spec = load_spec({
        "base": BASE,
        "grid": [
            {"label": "sgd", "optimizer": "sgd", "lr": 0.1, "sigma_w": [0.5, 2.0]},
            {"label": "sgd+l2", "optimizer": "sgd", "lr": 0.1, "sigma_w": 2.0, "weight_decay": 0.2},
            {"label": "adam", "optimizer": "adam", "lr": 0.01, "sigma_w": [0.5, 2.0]},
        ],
    })
    return [(label, c, execute(c, options={"threads": 1})) for label, c in spec.runs]


def test_l2_decay_forgets_the_initial_norm_on_the_T_L2_clock(runs):
    plain = next(r for label, c, r in runs if label == "sgd" and c["sigma_w"] == 2.0)
    decayed = next(r for label, _, r in runs if label == "sgd+l2")
    t_l2 = decayed["summary"]["clocks"]["T_L2"]
    assert t_l2 > 1.0  # enough decay to matter
    ratio = decayed["summary"]["final_kernel_norm"] / plain["summary"]["final_kernel_norm"]
    assert ratio == pytest.approx(math.exp(-t_l2), rel=0.05)


def test_adam_forgets_the_norm_sgd_remembers_it(runs):
    groups = {g.setting["optimizer"]: g for g in group_runs([(c, r) for label, c, r in runs if label != "sgd+l2"])}
    sgd, adam = (summarise(groups[k]).norm_slope.estimate for k in ("sgd", "adam"))
    assert sgd > 0.9
    assert adam < sgd - 0.2
