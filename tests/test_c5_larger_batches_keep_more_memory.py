"""C5 (larger batches increase the spread): exact permutation trend test on synthetic records."""

import math

import pytest
from spec_b_records import group

from implicitbias.claims.c5_larger_batches_keep_more_memory import CLAIM
from implicitbias.validation.analysis import group_runs

BATCHES = (16, 32, 64, 128, 256)


def evidence(spread_points, seeds=(0, 1, 2, 3), batches=BATCHES):
    """One group per batch size whose seed-mean spread is ``spread_points(b)``."""
    runs = []
    for b in batches:
        drop = spread_points(b) / 100
        runs += group({"batch_size": b}, seeds=seeds,
                      accuracy=lambda s, k, drop=drop: 0.6 - drop * (s == 2.5) + 0.004 * k * (s == 0.5))
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(spread_points, seeds=(0, 1, 2, 3), batches=BATCHES):
    return CLAIM.judge(evidence(spread_points, seeds, batches))


def test_agrees_on_a_rising_spread_with_the_exact_p_value():
    v = verdict(lambda b: 5 + 2 * math.log2(b))
    assert v.verdict == "agrees"
    assert v.numbers["pairings"] == 120 and v.numbers["p"] == pytest.approx(1 / 120)
    assert v.numbers["slope"]["estimate"] == pytest.approx(2.0, abs=1e-9)
    assert "n = 5 batch sizes" in v.measured


def test_disagrees_on_a_falling_spread():
    v = verdict(lambda b: 30 - 2 * math.log2(b))
    assert v.verdict == "disagrees"


def test_disagrees_on_a_flat_spread():
    v = verdict(lambda b: 10.0)
    assert v.verdict == "disagrees" and v.numbers["slope"]["hi"] < CLAIM.threshold("min_trend")


def test_inconclusive_on_a_noisy_rise():
    """Rising on average but not in order (p > 0.05) and its CI reaching a real rise."""
    v = verdict({16: 9, 32: 14, 64: 8, 128: 15, 256: 12}.get)
    assert v.verdict == "inconclusive" and v.numbers["p"] > 0.05


def test_inconclusive_with_too_few_batch_sizes_or_seeds():
    assert verdict(lambda b: b / 10, batches=(64, 128)).verdict == "inconclusive"
    assert verdict(lambda b: b / 10, seeds=(0, 1)).verdict == "inconclusive"


def test_not_run_without_batch_sizes():
    v = CLAIM.judge(CLAIM.evidence(group_runs(group({"optimizer": "adam", "lr": 1e-3},
                                                    accuracy=lambda s, k: 0.5)), ""))
    assert v.verdict == "not run"


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", evidence(lambda b: 5 + 2 * math.log2(b))),
    ("disagrees", evidence(lambda b: 30 - 2 * math.log2(b))),
    ("inconclusive", evidence({16: 9, 32: 14, 64: 8, 128: 15, 256: 12}.get)),
    ("not run", CLAIM.evidence(group_runs(group({"optimizer": "adam", "lr": 1e-3}, accuracy=lambda s, k: 0.5)), "")),
]
