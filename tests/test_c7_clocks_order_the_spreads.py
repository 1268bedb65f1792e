"""C7 (clocks order the spreads within families): the stratified permutation rule on synthetic records."""

import math

import pytest
from spec_b_records import group

from implicitbias.claims.c7_clocks_order_the_spreads import CLAIM
from implicitbias.numerics.metrics.resampling import stratified_rank_test
from implicitbias.validation.analysis import group_runs

SGD_LRS = (0.02, 0.05, 0.1, 0.2)  # T_SGD grows as lr^2
ADAM_LRS = (1e-4, 1e-3, 1e-2)  # T_adapt grows as lr


def runs(spread_sgd, spread_adam):
    out = []
    for lr in SGD_LRS:
        out += group({"lr": lr}, accuracy=lambda s, k, d=spread_sgd(lr) / 100: (0.6, 0.6 - d * (s == 2.5)))
    for lr in ADAM_LRS:
        out += group({"optimizer": "adam", "lr": lr},
                     accuracy=lambda s, k, d=spread_adam(lr) / 100: (0.6, 0.6 - d * (s == 2.5)))
    return group_runs(out)


def test_agrees_when_a_larger_clock_means_a_smaller_spread_in_every_family():
    v = CLAIM.judge(CLAIM.evidence(runs(lambda lr: 1 / lr, lambda lr: -math.log(lr)), ""))
    assert v.verdict == "agrees" and v.numbers["n"] == 7
    assert v.numbers["p_less"] == pytest.approx(1 / (24 * 6))  # exact: 4! x 3! within-family orderings


def test_disagrees_when_the_clocks_order_the_spreads_backwards():
    v = CLAIM.judge(CLAIM.evidence(runs(lambda lr: 100 * lr, lambda lr: 1000 * lr), ""))
    assert v.verdict == "disagrees"


def test_inconclusive_when_unordered():
    order = {0.02: 3, 0.05: 9, 0.1: 2, 0.2: 8}
    v = CLAIM.judge(CLAIM.evidence(runs(order.get, {1e-4: 5, 1e-3: 1, 1e-2: 6}.get), ""))
    assert v.verdict == "inconclusive"


def test_inconclusive_when_no_family_has_three_groups():
    v = CLAIM.judge(CLAIM.evidence(group_runs(group(accuracy=lambda s, k: 0.5)), ""))
    assert v.verdict == "inconclusive"


def test_not_run_without_groups():
    assert CLAIM.judge(CLAIM.evidence([], "")).verdict == "not run"


def test_clocks_of_different_families_are_never_pooled():
    """Pooled, Adam's large T_adapt next to SGD's tiny T_SGD would fake an ordering; within families
    the statistic only sees each family's own order."""
    within = stratified_rank_test([([1, 2, 3], [1, 2, 3]), ([10, 20, 30], [3, 2, 1])])
    assert within["rho"] == pytest.approx([1.0, -1.0]) and within["statistic"] == pytest.approx(0.0)
