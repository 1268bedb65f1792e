"""The direction test of C7 (numerics.metrics.clock_direction): its geometry against closed forms, its
fit against an independent least-squares route, every outcome of its rule, its simulation and its
seeds-needed search, and bad inputs."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.metrics import clock_direction as cd
from implicitbias.theory.params import ParameterError

N, B = 500, 64
SPE = math.ceil(N / B)  # steps per epoch


def sgd_grid(clocks=(0.11, 0.37, 1.9), epochs=(13, 50, 170)):
    """A crossed SGD grid at generic (unequal) spacings: lr = sqrt(T b / steps)."""
    return [(math.sqrt(t * B / (SPE * e)), B, e, 0.0) for t in clocks for e in epochs]


def adam_grid(clocks=(0.7, 2.9, 13.0), epochs=(11, 47, 230)):
    return [(t / (SPE * e), B, e, 0.0) for t in clocks for e in epochs]


def plane_angle(alpha_x, beta_z):
    """Degrees of the line (alpha, beta) in the plane, in (-90, 90]."""
    a = math.degrees(math.atan2(beta_z, alpha_x))
    return a - 180 if a > 90 else (a + 180 if a <= -90 else a)


def test_sgd_rivals_sit_where_the_closed_form_puts_them():
    """On an SGD grid at fixed b, log eta = (x - z + log b) / 2 with x = log T_SGD and z = log steps, so a
    predictor eta^a steps^s has the line (a / 2, s - a / 2) in (x, z)."""
    d = cd.Design.of("T_SGD", sgd_grid())
    got = {r.name: r.angle for r in cd._rivals(d)}
    for name, (a, s) in {"lr": (1, 0), "steps": (0, 1), "T_adapt": (1, 1), "sum eta^2": (2, 1)}.items():
        assert got[name] == pytest.approx(plane_angle(a / 2, s - a / 2), abs=1e-9)
    assert "lambda" not in got and "T_L2" not in got  # no decay: lambda names no direction
    assert cd.bound_of(cd._rivals(d)) == pytest.approx(22.5)  # halfway to lr and T_adapt at -45 / +45


def test_adam_rivals_and_bound():
    """Adam at fixed b: log eta = x - z, so eta^a steps^s is the line (a, s - a); sum eta^2 at -26.57 deg."""
    d = cd.Design.of("T_adapt", adam_grid())
    got = {r.name: r.angle for r in cd._rivals(d)}
    assert got["sum eta^2"] == pytest.approx(plane_angle(2, -1))
    assert got["lr"] == pytest.approx(plane_angle(1, -1))
    assert cd.bound_of(cd._rivals(d)) == pytest.approx(math.degrees(math.atan(0.5)) / 2)


def test_the_tie_of_equal_clocks_summed_in_another_order():
    """Equal clocks that differ in the last bits (summed in another order) are one clock in the design."""
    grid = sgd_grid()
    nudged = [(lr * (1 + 4e-16), b, e, w) for lr, b, e, w in grid]
    assert np.array_equal(cd.Design.of("T_SGD", grid).u, cd.Design.of("T_SGD", nudged).u)


def logistic(v):
    return 1 / (1 + np.exp(-v))


def table_of(design, predictor, seeds=6, noise=0.004, seed=0):
    """Per-seed memory falling with a log predictor (exponents on AXES), plus seed noise."""
    p = design.logs @ np.asarray(cd.NAMED[predictor], dtype=float)
    mean = logistic(1.0 - 0.8 * (p - p.mean()) / p.std())
    return mean + noise * np.random.default_rng(seed).standard_normal((seeds, len(mean)))


def test_fitted_gradient_equals_independent_least_squares():
    """The gradient in (log clock, log steps) against numpy's lstsq with an intercept column."""
    d = cd.Design.of("T_SGD", sgd_grid())
    y = table_of(d, "lr", noise=0.01)
    t = cd.direction_test(d, y)
    x = d.logs @ np.array(cd.NAMED["T_SGD"], float)
    z = d.logs @ np.array(cd.NAMED["steps"], float)
    logit = np.log(y.mean(0) / (1 - y.mean(0)))
    coef, *_ = np.linalg.lstsq(np.column_stack([np.ones_like(x), x, z]), logit, rcond=None)
    assert t.gradient == pytest.approx(coef[1:], rel=1e-9)
    assert t.angle == pytest.approx(plane_angle(coef[1], coef[2]), abs=1e-9)


@pytest.mark.parametrize("grid, clock, truth, expected, nearest", [
    (sgd_grid(), "T_SGD", "T_SGD", "agrees", "T_SGD"),
    (sgd_grid(), "T_SGD", "steps", "disagrees", "steps"),
    (sgd_grid(), "T_SGD", "lr", "disagrees", "lr"),
    (adam_grid(), "T_adapt", "T_adapt", "agrees", "T_adapt"),
    (adam_grid(), "T_adapt", "sum eta^2", "disagrees", "sum eta^2"),
])
def test_outcomes_on_worlds_of_one_predictor(grid, clock, truth, expected, nearest):
    d = cd.Design.of(clock, grid)
    t = cd.direction_test(d, table_of(d, truth))
    assert t.outcome == expected and nearest in t.nearest.split(" / ")
    assert t.lo <= t.angle <= t.hi


def test_inconclusive_when_the_noise_swamps_the_direction():
    d = cd.Design.of("T_SGD", sgd_grid())
    t = cd.direction_test(d, table_of(d, "T_SGD", seeds=3, noise=0.3, seed=3))
    assert t.outcome == "inconclusive" and t.hi - t.lo > 2 * t.bound


@pytest.mark.parametrize("lo, hi, expected", [
    (-10.0, 10.0, "agrees"), (5.0, 25.0, "inconclusive"), (30.0, 80.0, "disagrees"), (80.0, 100.0, "disagrees"),
    (-100.0, -30.0, "disagrees"), (150.0, 170.0, "inconclusive"), (-170.0, -150.0, "inconclusive"),
    (-30.0, 30.0, "inconclusive"),
])
def test_decide_every_branch_with_half_turns(lo, hi, expected):
    """Bound 20: an interval reaching 160-180 touches the clock's line turned by half a turn."""
    assert str(cd.decide(lo, hi, 20.0)) == expected


def test_simulation_of_a_strong_signal_has_no_wrong_verdicts_and_covers():
    d = cd.Design.of("T_SGD", sgd_grid())
    y = table_of(d, "T_SGD", seeds=8, noise=0.01)
    for noise in cd.NOISES:
        oc = cd.simulate(d, y, sims=100, noise=noise, seed=1)
        assert oc.wrong == 0.0 and oc.agree_true > 0.9 and oc.n == 8 and oc.level in cd.LEVELS
        assert oc.coverage >= 0.85


def test_simulation_of_a_weak_signal_has_little_power_and_few_wrong_verdicts():
    """Noise 25x the strong case's: the clock's world mostly gives inconclusive, and the intervals keep
    both wrong-direction rates near their 2.5% tails."""
    d = cd.Design.of("T_SGD", sgd_grid())
    y = table_of(d, "T_SGD", seeds=4, noise=0.25, seed=2)
    oc = cd.simulate(d, y, sims=200, seed=1, level=0.95)
    assert oc.agree_true < 0.5 and oc.wrong < 0.1


def test_worlds_cover_the_clock_the_bound_and_every_deciding_rival():
    d = cd.Design.of("T_adapt", adam_grid())
    ws = cd.worlds(d)
    bound = cd.bound_of(cd._rivals(d))
    assert [w.claim for w in ws[:3]] == [True, True, False]
    assert abs(ws[1].angle) == pytest.approx(bound / cd.NEAR) and abs(ws[2].angle) == pytest.approx(bound * cd.NEAR)
    assert {w.name for w in ws[3:]} == {r.name for r in cd._rivals(d) if not r.contained}


def test_seeds_needed_doubles_and_says_when_seeds_do_not_help():
    """C7's search (``memory_rules.seeds_needed`` with ``flat_after``): a rate that falls with n gives
    a seed count, one that stays flat from 4 to 16 seeds says so."""
    from implicitbias.claims.forgetting import memory_rules as mr

    def falling(n):
        return mr.OC(0.0, 0.4 / n, 0.0, 0.0, 400, n)

    def flat(n):
        return mr.OC(0.0, 0.3, 0.0, 0.0, 400, n)

    assert mr.seeds_needed(falling, 4, flat_after=4) == 8
    assert mr.seeds_needed(flat, 4, flat_after=4) == "not reachable by seeds"
    assert mr.seeds_needed(flat, 4) is None  # without the check: beyond 64 seeds
    assert mr.seeds_needed(lambda n: mr.OC(0.0, 0.0, 0.0, 0.0, 400, n), 4, flat_after=4) == 4


def test_the_bound_fraction_reaches_the_worlds_and_the_simulation():
    """The bound moved to a quarter of the way to the nearest rival moves the near worlds with it, and
    the clock's own world then agrees less often (its interval must fit a narrower band)."""
    d = cd.Design.of("T_SGD", sgd_grid())
    assert abs(cd.worlds(d, 0.25)[2].angle) == pytest.approx(0.25 * 45 * cd.NEAR)
    y = table_of(d, "T_SGD", seeds=4, noise=0.05, seed=4)
    half = cd.simulate(d, y, sims=100, seed=1, level=0.95)
    tight = cd.simulate(d, y, sims=100, seed=1, level=0.95, fraction=0.02)
    assert tight.agree_true < half.agree_true
    assert cd.direction_test(d, y, fraction=0.25).bound == pytest.approx(0.25 * 45)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.01, 10.0), min_size=3, max_size=3, unique=True),
       st.lists(st.integers(5, 400), min_size=3, max_size=3, unique=True),
       st.sampled_from(["T_SGD", "steps", "lr", "T_adapt"]))
def test_noise_free_world_has_its_predictor_angle(clocks, epochs, truth):
    """Without noise, memory logit-linear in one predictor's log points exactly along that predictor."""
    d = cd.Design.of("T_SGD", sgd_grid(clocks, epochs))
    p = d.logs @ np.array(cd.NAMED[truth], float)
    y = np.tile(logistic(0.3 - 0.5 * (p - p.mean()) / p.std()), (3, 1))
    t = cd.direction_test(d, y, resamples=100)
    expected = 0.0 if truth == "T_SGD" else next(r.angle for r in t.rivals if r.name == truth)
    assert abs(cd._wrap(t.angle - expected)) < 1e-6


@pytest.mark.parametrize("call, match", [
    (lambda: cd.Design.of("T_X", sgd_grid()), "clock"),
    (lambda: cd.Design.of("T_SGD", [(0.1, 64, 10, 0.0)]), "axes"),
    (lambda: cd.Design.of("T_SGD", [(-0.1, 64, 10, 0.0)] * 3), "axes"),
    (lambda: cd.direction_test(cd.Design.of("T_SGD", sgd_grid()), np.ones((1, 9))), "table"),
    (lambda: cd.direction_test(cd.Design.of("T_SGD", sgd_grid()), np.ones((3, 4))), "table"),
    (lambda: cd.direction_test(cd.Design.of("T_SGD", [(0.1 * i, 64, 10, 0.0) for i in (1, 2, 3)]),
                               np.full((3, 3), 0.5)), "design"),
    (lambda: cd.simulate(cd.Design.of("T_SGD", sgd_grid()), np.full((3, 9), 0.5), noise="cauchy"), "noise"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


def test_interval_is_t_bootstrap_standard_errors_with_the_small_sample_factor():
    """estimate +- t_{n-1} x sd(draws) x sqrt(n / (n - 1)), at a generic point (n = 5, level 0.9), the draws
    unwrapped around the estimate (one draw sits across +-90 degrees)."""
    from scipy.stats import t

    draws = np.array([80.0, 84.0, 87.5, 89.0, -88.0, 83.0, 86.0])
    unwrapped = np.where(draws < 0, draws + 180, draws)
    half = t.ppf(0.95, 4) * unwrapped.std() * math.sqrt(5 / 4)
    lo, hi = cd._interval(np.array(85.0), draws, 0.9, 5)
    assert (float(lo), float(hi)) == pytest.approx((85.0 - half, 85.0 + half), rel=1e-12)


def test_resampled_noise_has_the_unbiased_variance_of_the_seeds():
    """Resampling 4 centred seed rows keeps each group's unbiased seed variance (the rows are inflated by
    sqrt(n / (n - 1)), else the draws would have (n - 1) / n of it)."""
    y = np.array([[0.1, 0.5, 0.2], [0.3, 0.4, 0.6], [0.2, 0.9, 0.3], [0.6, 0.2, 0.1]])
    noise = cd._noise(y, "resampled", 20_000, 4, np.random.default_rng(5))
    assert noise.reshape(-1, 3).var(0) == pytest.approx(y.var(0, ddof=1), rel=0.03)


@pytest.mark.parametrize("angle, contained", [(0.0, True), (0.9, True), (-0.9, True), (1.1, False), (5.0, False)])
def test_a_rival_contains_the_clock_within_one_degree(angle, contained):
    assert cd.Angle("rival", angle).contained is contained


def test_the_narrowest_covering_level_is_taken():
    """A strong signal at 8 seeds covers at 95% already: the simulation does not widen the interval."""
    d = cd.Design.of("T_SGD", sgd_grid())
    oc = cd.simulate(d, table_of(d, "T_SGD", seeds=8, noise=0.01), sims=200, seed=3)
    assert oc.level <= 0.975 and oc.coverage >= 0.93
