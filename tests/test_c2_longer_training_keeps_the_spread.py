"""C2 (training longer leaves the spread unchanged): two-sided rule on synthetic records."""

import pytest
from spec_b_records import group, remembering

from implicitbias.claims.c2_longer_training_keeps_the_spread import CLAIM, paired_change
from implicitbias.validation.analysis import group_runs, summarise

SHORT = {"epochs": 6}
LONG = {"epochs": 150, "eval_every": 25, "eval_dense_until": 6}


def evidence(long_accuracy, short_accuracy=remembering, long=LONG):
    runs = group(SHORT, accuracy=short_accuracy) + group(long, accuracy=long_accuracy)
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(long_accuracy, short_accuracy=remembering, long=LONG):
    return CLAIM.judge(evidence(long_accuracy, short_accuracy, long))


def test_agrees_when_the_spread_is_unchanged_25x_later():
    v = verdict(lambda s, k: remembering(s, k) + 0.002 * k)
    assert v.verdict == "agrees" and v.numbers["ratio"] == 25


def test_disagrees_when_the_spread_shrinks():
    v = verdict(lambda s, k: 0.6 - 0.02 * (s - 0.25))  # 18 -> 4.5 points
    assert v.verdict == "disagrees" and "shrank" in v.reason


def test_disagrees_when_the_spread_grows():
    v = verdict(lambda s, k: 0.6 - 0.16 * (s - 0.25))  # 18 -> 36 points
    assert v.verdict == "disagrees" and "grew" in v.reason


def test_the_end_of_training_change_is_stated_beside_the_selected_one():
    """Validation selection picks the same early checkpoint (agrees), but the trained networks forget."""
    v = verdict(lambda s, k: (remembering(s, k), 0.6))
    assert v.verdict == "agrees" and "on the end-of-training spread: disagrees" in v.reason


def test_inconclusive_when_the_change_is_uncertain():
    v = verdict(lambda s, k: remembering(s, k) + (0.05 if s == 0.25 and k in (1, 3) else 0.0))
    assert v.verdict == "inconclusive" and "crosses" in v.reason


def test_inconclusive_when_the_horizons_are_too_close():
    v = verdict(remembering, long={"epochs": 12})
    assert v.verdict == "inconclusive" and "2x" in v.reason


def test_not_run_without_a_longer_horizon():
    v = CLAIM.judge(CLAIM.evidence(group_runs(group(SHORT, accuracy=remembering)), ""))
    assert v.verdict == "not run"


def test_paired_change_is_the_difference_of_seed_mean_spreads():
    short = summarise(group_runs(group(SHORT, accuracy=remembering))[0])
    long = summarise(group_runs(group({"epochs": 60}, accuracy=lambda s, k: 0.6 - 0.04 * (s - 0.25)))[0])
    change = paired_change(short, long)
    assert change["estimate"] == pytest.approx(100 * (0.04 - 0.08) * 2.25)
    assert change["lo"] <= change["estimate"] <= change["hi"] and change["n"] == 4


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", evidence(lambda s, k: remembering(s, k) + 0.002 * k)),
    ("disagrees", evidence(lambda s, k: 0.6 - 0.02 * (s - 0.25))),
    ("disagrees", evidence(lambda s, k: 0.6 - 0.16 * (s - 0.25))),
    ("inconclusive", evidence(remembering, long={"epochs": 12})),
    ("not run", CLAIM.evidence(group_runs(group(SHORT, accuracy=remembering)), "")),
]
