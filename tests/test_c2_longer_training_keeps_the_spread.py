"""C2 (training longer does not forget): the memory kept at the long horizon relative to E, on
synthetic records: every outcome, the checkpoint it judges, its threshold."""

import math

import pytest
from spec_b_records import SEEDS8, group, judged, moved, noisy

from implicitbias.claims.forgetting.c2_longer_training_keeps_the_spread import CLAIM
from implicitbias.validation.analysis import group_runs

SHORT = {"epochs": 6}
LONG = {"epochs": 150, "eval_every": 25, "eval_dense_until": 6}
MEMORY = noisy(0.04)


def evidence(long_accuracy, short_accuracy=MEMORY, long=LONG, **kw):
    runs = group(SHORT, accuracy=short_accuracy, seeds=SEEDS8) + group(long, accuracy=long_accuracy, seeds=SEEDS8, **kw)
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(long_accuracy, short_accuracy=MEMORY, long=LONG, **kw):
    return judged(CLAIM, evidence(long_accuracy, short_accuracy, long, **kw), 0)


def test_agrees_when_the_memory_is_kept_25x_later():
    v = verdict(noisy(0.04, draw=1))
    assert v.verdict == "agrees" and v.numbers["estimate"].lo > math.sqrt(4 / 26.5)


def test_disagrees_when_the_long_run_forgets():
    v = verdict(noisy(0.002, draw=1))
    assert v.verdict == "disagrees" and v.numbers["estimate"].hi < math.sqrt(4 / 26.5)


def test_judges_the_interpolating_checkpoint():
    """The long run forgets at its interpolating checkpoint (epoch 2 onward, 'middle'), keeps its memory
    at its earlier validation minimum (epoch 1) and at the end: judged at the first."""
    v = verdict(lambda s, k: (MEMORY(s, k), MEMORY(s, k)), middle=noisy(0.002, draw=1), selected_epoch=1, tau=2)
    assert v.verdict == "disagrees" and v.numbers["beside"] == {"all": "agrees", "end": "agrees"}


def test_inconclusive_when_the_horizons_are_too_close():
    v = verdict(noisy(0.04, draw=1), long={"epochs": 12})
    assert v.verdict == "inconclusive" and "horizons" in v.reason


def test_inconclusive_when_the_baseline_has_no_memory():
    v = verdict(noisy(0.04, draw=1), short_accuracy=noisy(0.0, 0.01))
    assert v.verdict == "inconclusive" and "no memory" in v.reason


def test_not_run_without_a_longer_horizon():
    assert CLAIM.judge(CLAIM.evidence(group_runs(group(SHORT, accuracy=MEMORY)))).verdict == "not run"


def test_the_threshold_is_the_pre_registered_value_and_moved_by_20_percent_flips_a_case():
    assert CLAIM.threshold("kept") == pytest.approx(math.sqrt(4.0 / 26.5))
    ev = evidence(noisy(0.015, draw=1))
    lo = judged(CLAIM, ev).numbers["estimate"].lo
    outcomes = moved(CLAIM, ev, "kept", [lo * f for f in (1.2, 1 / 1.2)])
    assert outcomes[0] in ("inconclusive", "disagrees") and outcomes[1] == "agrees"


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule (simulated OC included)
    ("agrees", evidence(noisy(0.04, draw=1))),
    ("disagrees", evidence(noisy(0.002, draw=1))),
    ("inconclusive", evidence(noisy(0.04, draw=1), long={"epochs": 12})),
    ("not run", CLAIM.evidence(group_runs(group(SHORT, accuracy=MEMORY)))),
]


def test_states_both_horizons_radial_memory_at_its_checkpoint():
    v = verdict(noisy(0.04, draw=1), norm1=lambda s, k: 10.0 * s**0.5)
    assert set(v.numbers["radial"]) == {"E", "25E"}
    assert v.numbers["radial"]["25E"]["slope"]["estimate"] == pytest.approx(0.5)
    assert v.numbers["radial"]["E"]["slope"]["estimate"] == pytest.approx(1.0)
    assert "radial memory at the interpolating checkpoint: E: norm slope 1.00" in v.measured
