"""Radial memory of trained runs (validation.analysis.radial_memory_of): the law of each setting, and
on two real Adam runs the clock in units of the initial norm against the kernels' sizes and the
schedule counted here by hand."""

import math

import pytest
from spec_b_records import TINY

from implicitbias.validation.analysis import group_runs, invariant_slopes, law_of, radial_memory_of
from implicitbias.validation.run import canonical_config, execute


@pytest.mark.parametrize("setting, law", [
    ({"optimizer": "sgd"}, "sgd"), ({"optimizer": "sgd", "weight_decay": 0.01}, "sgd_l2"),
    ({"optimizer": "sgd_momentum", "weight_decay": 0.01}, "heavy_ball_l2"), ({"optimizer": "adam"}, "adam"),
    ({"optimizer": "adamw", "weight_decay": 0.1}, "adamw"), ({"optimizer": "muon"}, "adam"),
    ({"optimizer": "muon", "weight_decay": 0.1}, "adamw"), ({"optimizer": "sign"}, "adam"),
])
def test_law_of_each_setting(setting, law):
    assert law_of(canonical_config({**TINY["base"], "sigma_w": 1.0, "seed": 0, **setting})) == law


def test_adam_runs_clock_in_units_of_their_initial_norm():
    base = {k: v for k, v in TINY["base"].items() if k not in ("sigma_w", "seed")}
    configs = [canonical_config({**base, "optimizer": "adam", "lr": 0.01, "epochs": 2, "sigma_w": s, "seed": 0})
               for s in (0.5, 2.0)]
    records = [execute(c, options={"threads": 1}) for c in configs]
    r = radial_memory_of(group_runs(list(zip(configs, records)))[0], "end")
    steps = 2 * math.ceil(records[0]["summary"]["n_train"] / 64)
    D = 768 * 64 + 64 * 64  # the synthetic images' 3 x 16 x 16 inputs -> 64 units -> 64 units (BatchNormMLP)
    rho0 = [math.hypot(rec["history"][0]["kernel_norms"]["body.1"], rec["history"][0]["kernel_norms"]["body.4"])
            for rec in records]
    assert r.law == "adam" and r.sigma_w == (0.5, 2.0)
    assert r.x == pytest.approx([D * 0.01**2 * steps / rho**2 for rho in rho0], rel=1e-9)
    # He normal: rho_0^2 = 2 sigma_w^2 (64 + 64) in expectation (sum of fan_out), within the draw's noise
    assert r.x[1] == pytest.approx(D * 0.01**2 * steps / (2 * 2.0**2 * 128), rel=0.05)
    rho = [math.hypot(rec["history"][-1]["kernel_norms"]["body.1"], rec["history"][-1]["kernel_norms"]["body.4"])
           for rec in records]
    assert r.realised == pytest.approx([(b / a) ** 2 - 1 for a, b in zip(rho0, rho)], rel=1e-9)
    assert r.n == 1 and math.isfinite(r.slope.estimate) and math.isnan(r.slope.lo)


def test_invariant_slopes_read_the_scale_invariant_kernels_not_the_head():
    """Per seed, the slope over sigma_w of the hidden kernels' joint norm at the end (C7's radial memory),
    computed here by hand from the records' per-kernel norms: not the total, which includes the head."""
    base = {k: v for k, v in TINY["base"].items() if k not in ("sigma_w", "seed")}
    sigmas = (0.5, 1.0, 2.0)
    configs = [canonical_config({**base, "optimizer": "sgd", "lr": 0.3, "epochs": 2, "sigma_w": s, "seed": k})
               for k in (0, 1) for s in sigmas]
    records = [execute(c, options={"threads": 1}) for c in configs]
    slopes = invariant_slopes(group_runs(list(zip(configs, records)))[0], "end")
    for k in (0, 1):
        rows = [rec["history"][-1]["kernel_norms"] for c, rec in zip(configs, records) if c["seed"] == k]
        joint = [math.log(math.hypot(r["body.1"], r["body.4"])) for r in rows]
        total = [math.log(rec["history"][-1]["kernel_norm"]) for c, rec in zip(configs, records) if c["seed"] == k]
        logs = [math.log(s) for s in sigmas]
        by_hand = _slope(logs, joint)
        assert slopes[k] == pytest.approx(by_hand, rel=1e-9)
        assert abs(_slope(logs, total) - by_hand) > 1e-6  # the head moves the total


def _slope(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)
