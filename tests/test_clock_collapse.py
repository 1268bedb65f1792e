"""The collapse test's numerics (numerics.metrics.clock_collapse) against independent routes:
sklearn's isotonic regression, scipy's linear regression, leave-half-out by brute force."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import linregress
from sklearn.isotonic import IsotonicRegression

from implicitbias.numerics.metrics.clock_collapse import (
    collapse,
    explained_variance,
    fit_monotone,
    half_splits,
    held_out_errors,
)
from implicitbias.theory.params import ParameterError

# sklearn warns when its 'auto' direction rests on a rho whose CI spans zero (small samples)
pytestmark = pytest.mark.filterwarnings("ignore:Confidence interval of the Spearman")


def _sklearn(u, y, at):
    return IsotonicRegression(increasing="auto", out_of_bounds="clip").fit(u, y).predict(at)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-6, 6), st.floats(-50, 50, allow_nan=False, allow_infinity=False)),
                min_size=2, max_size=12),
       st.lists(st.floats(-8, 8, allow_nan=False), min_size=1, max_size=6))
def test_monotone_fit_is_sklearns_isotonic_regression(data, at):
    """Ties pooled, direction from Spearman's rho, linear between knots, clipped beyond: as sklearn's
    IsotonicRegression(increasing='auto', out_of_bounds='clip')."""
    u = np.array([d[0] / 2 for d in data], dtype=float)  # repeated u values: ties
    y = np.array([d[1] for d in data])
    # constant data: sklearn's 'auto' direction is undefined; the law is the constant mean
    expected = np.full(len(at), y.mean()) if np.ptp(u) == 0 or np.ptp(y) == 0 else _sklearn(u, y, np.array(at))
    np.testing.assert_allclose(fit_monotone(u, y)(at), expected, atol=1e-9, rtol=1e-9)


def test_fit_is_monotone_and_least_squares_at_a_generic_point():
    u = np.log([0.1, 0.3, 0.3, 1.0, 2.0, 7.0])
    y = np.array([9.0, 8.5, 9.7, 6.1, 6.4, 2.0])
    law = fit_monotone(u, y)
    assert law.decreasing and np.all(np.diff(law.y) <= 0)
    # PAV by hand: the tie at 0.3 pools to 9.1, then (9.0, 9.1) violates, pools to (9 + 2 * 9.1) / 3;
    # (6.1, 6.4) pools to 6.25
    assert law.y == pytest.approx([(9.0 + 2 * 9.1) / 3] * 2 + [6.25, 6.25, 2.0])


def test_clocks_equal_up_to_rounding_are_one_knot():
    """T_L2 = 0.72 summed step by step over 960 steps of 0.3 (x 0.0025) and over 240 (x 0.01) differs
    in the last bits: one tie, pooled to the mean of its two spreads."""
    a, b = sum([0.3] * 960) * 0.0025, sum([0.3] * 240) * 0.01
    assert a != b
    law = fit_monotone(np.log([0.18, a, b, 2.88]), [4.0, 1.0, 3.0, 1.5])
    assert len(law.u) == 3 and law.y == pytest.approx([4.0, 2.0, 1.5])


def test_explained_variance_is_the_squared_correlation_of_log_x():
    x = [0.1, 0.4, 2.0, 3.0, 9.0]
    y = [7.0, 6.1, 5.5, 5.9, 2.2]
    assert explained_variance(x, y) == pytest.approx(linregress(np.log(x), y).rvalue ** 2)
    assert explained_variance([120, 120, 120], [1.0, 2.0, 3.0]) == 0.0


def test_half_splits_enumerate_every_half_or_draw_distinct_ones():
    masks, exact = half_splits(6)
    assert exact and len(masks) == math.comb(6, 3) and (masks.sum(1) == 3).all()
    assert len({m.tobytes() for m in masks}) == 20
    masks, exact = half_splits(17, max_splits=50)
    assert not exact and len(masks) == 50 and (masks.sum(1) == 8).all() and len({m.tobytes() for m in masks}) == 50


def test_held_out_errors_by_brute_force():
    """Every half split of 5 groups (2 fitted, 3 held out), refitted with sklearn."""
    x = np.array([0.05, 0.2, 0.8, 3.2, 12.8])
    y = np.array([8.0, 7.1, 7.9, 3.0, 2.5])
    masks, _ = half_splits(5)
    error, predicted, every = held_out_errors(x, y, masks)
    errs = {g: [] for g in range(5)}
    for fit in itertools.combinations(range(5), 2):
        rest = [g for g in range(5) if g not in fit]
        guess = _sklearn(np.log(x[list(fit)]), y[list(fit)], np.log(x[rest]))
        for g, p in zip(rest, guess):
            errs[g].append(abs(p - y[g]))
    assert error == pytest.approx([np.mean(errs[g]) for g in range(5)])
    assert len(every) == 10 * 3
    r = collapse({"clock": x, "epochs": x}, y)
    assert r.predictors["clock"].band == pytest.approx(np.quantile(np.concatenate(list(errs.values())), 0.9))


def test_collapse_compares_every_predictor_with_the_reference():
    clock = [0.1, 0.1, 1.0, 1.0, 10.0, 10.0]
    epochs = [30, 120, 30, 120, 30, 120]
    y = [9.0, 9.0, 6.0, 6.0, 3.0, 3.0]
    r = collapse({"clock": clock, "epochs": epochs}, y)
    assert r.n == 6 and r.splits == 20 and r.exact
    assert r.predictors["clock"].r2 == pytest.approx(1.0) and r.predictors["epochs"].r2 == 0.0
    d = r.difference["clock"]
    assert d.estimate == pytest.approx(np.mean(np.array(r.predictors["clock"].per_group)
                                                  - np.array(r.predictors["epochs"].per_group)))
    assert d.hi < 0


@pytest.mark.parametrize("bad", [{"clock": [1.0, -1.0, 2.0]}, {"clock": [1.0, 2.0]}, {"clock": [1.0, math.nan, 2.0]}])
def test_collapse_refuses_bad_predictors(bad):
    with pytest.raises(ParameterError):
        collapse({**bad, "epochs": [1.0, 2.0, 3.0]}, [1.0, 2.0, 3.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=9),
       st.lists(st.floats(0.5, 4, allow_nan=False), min_size=9, max_size=9), st.booleans())
def test_isotonic_rows_is_scipys_pool_adjacent_violators(means, weights, increasing):
    """The max-min formula, vectorised over rows, against scipy's PAVA one vector at a time."""
    from scipy.optimize import isotonic_regression

    from implicitbias.numerics.metrics.clock_collapse import isotonic_rows

    m, w = np.array(means), np.array(weights[: len(means)])
    rows = np.stack([m, -m[::-1], m * 2 + 1])
    got = isotonic_rows(rows, w, np.array([increasing, not increasing, increasing]))
    for row, inc, fit in zip(rows, [increasing, not increasing, increasing], got):
        np.testing.assert_allclose(fit, isotonic_regression(row, weights=w, increasing=inc).x, atol=1e-9)


def test_held_out_errors_of_rows_are_the_rows_held_out_one_at_a_time():
    rng = np.random.default_rng(3)
    x = np.exp(np.round(rng.normal(size=9), 1))
    x[4] = x[2]  # tied predictor values pool
    rows = rng.normal(size=(6, 9))
    rows[1] = 2.0  # a constant row (no direction)
    masks, _ = half_splits(9)
    error, predicted, every = held_out_errors(x, rows, masks)
    for i, y in enumerate(rows):
        e, p, a = held_out_errors(x, y, masks)
        np.testing.assert_allclose(error[i], e, atol=1e-12)
        np.testing.assert_allclose(predicted[i], p, atol=1e-12)
        np.testing.assert_allclose(np.sort(every[i]), np.sort(a), atol=1e-12)
