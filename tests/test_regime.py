"""The regime gate of Spec B's memory claims (``claims.forgetting.regime``), on synthetic radial memories:
each target failing alone, each bound with a value 10% either side (a bound moved by 20% flips one) and on
the bound itself, the words of every miss (issue 29 item 7)."""

import math
from types import SimpleNamespace

import pytest

from implicitbias.claims.forgetting import regime as rg
from implicitbias.numerics.metrics.memory_stats import Interval
from implicitbias.numerics.metrics.radial_memory import RadialMemory


def _summary(label, interpolated=4, runs=4):
    """The fields of a group summary that ``regime_misses`` reads."""
    return SimpleNamespace(label=label, all_interpolate=interpolated == runs, n_interpolated=interpolated, n_runs=runs)


def _radial(slope, x_hi=10.0):
    return RadialMemory("adam", "interpolating", Interval(slope, slope - 0.05, slope + 0.05), 4, (0.25, 2.5),
                        (100.0, x_hi), (100.0, x_hi), (0.01, 0.1), False)


def _misses(base_slope=0.9, slope=0.0, x_hi=10.0, base_runs=4, group_runs=4, kept=True, forgotten=True):
    """regime_misses of a baseline and one group "adam" with the module's own targets."""
    return rg.regime_misses(_summary("sgd", base_runs), _radial(base_slope), [_summary("adam", group_runs)],
                            [_radial(slope, x_hi)], kept=float(rg.KEPT_SLOPE) if kept else None,
                            forgotten=(float(rg.FORGOTTEN_CLOCK), float(rg.FORGOTTEN_SLOPE)) if forgotten else None)


def test_the_targets_are_the_registered_numbers():
    assert (float(rg.FORGOTTEN_CLOCK), float(rg.FORGOTTEN_SLOPE), float(rg.KEPT_SLOPE)) == (3.0, 0.1, 0.8)


def test_every_target_met_is_no_miss_and_no_premise():
    assert _misses() == [] and rg.regime_premise([]) == ""


@pytest.mark.parametrize("base_slope, missed", [(0.88, False), (0.8, False), (0.72, True)])
def test_the_baseline_keeps_its_norm_at_slope_0_8_or_more(base_slope, missed):
    assert _misses(base_slope=base_slope) == ([f"low-lr SGD baseline norm slope {base_slope:.2f} < 0.8"] if missed else [])


@pytest.mark.parametrize("x_hi, missed", [(3.3, False), (3.0, False), (2.7, True)])
def test_a_group_has_forgotten_at_x_3_or_more_at_the_largest_sigma_w(x_hi, missed):
    assert _misses(x_hi=x_hi) == (["adam: X at sigma_w 2.5 2.7 < 3"] if missed else [])


@pytest.mark.parametrize("slope, missed", [(0.09, False), (0.1, False), (0.11, True)])
def test_a_group_has_a_common_norm_at_slope_0_1_or_less(slope, missed):
    assert _misses(slope=slope) == (["adam: norm slope 0.11 > 0.1"] if missed else [])


def test_every_run_of_the_baseline_and_of_the_groups_interpolates():
    assert _misses(base_runs=3) == ["sgd: 3/4 runs interpolate"]
    assert _misses(group_runs=2) == ["adam: 2/4 runs interpolate"]


def test_each_target_applies_only_where_the_claim_names_it():
    """C4 names the baseline's target only: a group that kept its norm and a failed run are not read;
    without ``kept`` the baseline's slope is not read."""
    assert _misses(slope=1.0, x_hi=0.5, group_runs=1, forgotten=False) == []
    assert _misses(base_slope=0.0, kept=False) == []


def test_a_missing_radial_memory_misses_every_target_it_is_read_for():
    misses = rg.regime_misses(_summary("sgd"), None, [_summary("adam")], [None], kept=0.8, forgotten=(3.0, 0.1))
    assert misses == ["low-lr SGD baseline norm slope nan < 0.8", "adam: X at the largest sigma_w nan < 3",
                      "adam: norm slope nan > 0.1"]
    assert math.isnan(rg._x_hi(None)) and math.isnan(rg._slope(None))


def test_the_premise_names_every_miss():
    assert rg.regime_premise(["a", "b"]) == "regime: clocks not matched (a; b)"
