"""Radial memory of a group of runs (numerics.metrics.radial_memory): the norm slope with its t
interval and the clock in units of the initial norm, against routes computed here by hand and with
scipy (linregress per seed, the t quantile), at generic points."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from implicitbias.numerics.metrics.radial_memory import RadialRun, radial_memory

SIGMAS = (0.3, 0.7, 1.3, 2.9)


def _runs(seeds=(0, 1, 2), rho=lambda s, k: 1.0 + 0.1 * k, **kw):
    """Runs whose total norm is 5 sigma^0.4 (1 + 0.03 seed) and scale-invariant norm at init 2 sigma."""
    return [RadialRun(s, k, 5 * s**0.4 * (1 + 0.03 * k) + 0.01 * (k * s) ** 2, rho0=2 * s, rho=rho(s, k), **kw)
            for s in SIGMAS for k in seeds]


def test_slope_and_its_t_interval_against_scipy():
    """The slope reads the scale-invariant kernels' joint norm rho where it is known (the total norm
    has another slope here: 0.4 against rho's 0.7)."""
    runs = _runs(size=300.0, clock=0.02, rho=lambda s, k: 2 * s**0.7 * (1 + 0.05 * k) + 0.02 * (k * s) ** 2)
    r = radial_memory("adam", "end", runs)
    slopes = [stats.linregress(np.log(SIGMAS), np.log([x.rho for x in runs if x.seed == k])).slope for k in (0, 1, 2)]
    lo, hi = stats.t.interval(0.95, len(slopes) - 1, loc=np.mean(slopes), scale=stats.sem(slopes))
    assert (r.slope.estimate, r.slope.lo, r.slope.hi) == pytest.approx((np.mean(slopes), lo, hi), rel=1e-10)
    assert r.n == 3 and r.sigma_w == (0.3, 2.9) and r.checkpoint == "end"


def test_slope_falls_back_on_the_total_norm_where_rho_is_unknown():
    runs = _runs(rho=lambda s, k: math.nan)
    r = radial_memory("sgd", "end", runs)
    slopes = [stats.linregress(np.log(SIGMAS), np.log([x.norm for x in runs if x.seed == k])).slope for k in (0, 1, 2)]
    assert r.slope.estimate == pytest.approx(np.mean(slopes), rel=1e-10)


def test_adam_units_realised_and_memory_by_hand():
    runs = _runs(size=300.0, clock=0.02)
    r = radial_memory("adam", "interpolating", runs)
    x = [300 * 0.02 / (2 * s) ** 2 for s in (0.3, 2.9)]  # D sum eta^2 / rho_0^2
    assert r.x == pytest.approx(x)
    realised = [np.mean([(1.0 + 0.1 * k) ** 2 / (2 * s) ** 2 - 1 for k in (0, 1, 2)]) for s in (0.3, 2.9)]
    assert r.realised == pytest.approx(realised)
    assert r.memory == pytest.approx([1 / (1 + v) for v in x]) and not r.measured
    assert "X 17 at sigma_w 0.3, 0.18 at 2.9 (adam law: D sum eta^2 / rho_0^2" in r.describe()


def test_sgd_units_are_the_realised_fourth_power():
    r = radial_memory("sgd", "all", _runs())
    x = [np.mean([(1.0 + 0.1 * k) ** 4 / (2 * s) ** 4 - 1 for k in (0, 1, 2)]) for s in (0.3, 2.9)]
    assert r.x == pytest.approx(x) and r.realised == pytest.approx(x) and r.measured
    assert "tr Sigma unknown" in r.describe()


def test_measured_units_are_the_realised_ones_whatever_the_law():
    """Muon (``measured``): X is rho^2 / rho_0^2 - 1 of the norms, not the adam law's D sum eta^2 / rho_0^2."""
    r = radial_memory("adam", "end", _runs(size=300.0, clock=0.02), measured=True)
    realised = [np.mean([(1.0 + 0.1 * k) ** 2 / (2 * s) ** 2 - 1 for k in (0, 1, 2)]) for s in (0.3, 2.9)]
    assert r.x == pytest.approx(realised) and r.measured
    assert r.memory == pytest.approx([1 / (1 + v) for v in realised])
    assert "the law's clock not used" in r.describe()


def test_decay_laws_count_twice_the_decay_clock():
    r = radial_memory("sgd_l2", "end", _runs(clock=0.35))
    assert r.x == pytest.approx((0.7, 0.7)) and r.memory == pytest.approx((math.exp(-0.7),) * 2)
    assert all(math.isnan(v) for v in r.realised)
    hb = radial_memory("heavy_ball_l2", "end", _runs(clock=0.35, beta=0.9))
    assert hb.x == pytest.approx((7.0, 7.0))


def test_missing_norms_give_nan_clocks_and_a_seed_needs_two_sigmas():
    runs = [RadialRun(0.5, 0, 3.0), RadialRun(1.0, 0, 4.0), RadialRun(1.0, 1, 4.0)]
    r = radial_memory("adam", "end", runs)
    assert r.n == 1 and r.slope.estimate == pytest.approx(math.log(4 / 3) / math.log(2))
    assert all(math.isnan(v) for v in r.x) and "X n/a" in r.describe()


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="law"):
        radial_memory("adagrad", "end", _runs())
    with pytest.raises(ValueError, match="runs"):
        radial_memory("adam", "end", [])


@settings(max_examples=20, deadline=None)
@given(size=st.floats(10, 1e5), clock=st.floats(1e-5, 1.0), ratio=st.floats(1.5, 20))
def test_adam_units_fall_as_the_square_of_the_initial_norm(size, clock, ratio):
    """He-normal kernels: rho_0 proportional to sigma_w, so X at the smallest over X at the largest
    sigma_w is (sigma_max / sigma_min)^2 whatever D and the clock."""
    runs = [RadialRun(s, 0, 1.0, rho0=1.7 * s, rho=1.0, size=size, clock=clock) for s in (1.0, ratio)]
    r = radial_memory("adam", "end", runs)
    assert r.x[0] / r.x[1] == pytest.approx(ratio**2, rel=1e-9)
