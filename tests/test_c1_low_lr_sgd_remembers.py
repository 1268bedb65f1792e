"""C1 (low-lr SGD remembers sigma_w): the verdict rule on synthetic records, every outcome."""

import pytest
from spec_b_records import SEEDS, forgetting, group, remembering

from implicitbias.claims.c1_low_lr_sgd_remembers import CLAIM
from implicitbias.validation.analysis import group_runs


def evidence(runs):
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(runs):
    return CLAIM.judge(evidence(runs))


def test_agrees_when_interpolating_runs_keep_a_large_spread_and_their_norms():
    v = verdict(group(accuracy=remembering))
    assert v.verdict == "agrees"
    assert v.numbers["spread"]["estimate"] == pytest.approx(100 * 0.08 * 2.25)
    assert v.numbers["norm_slope"]["estimate"] == pytest.approx(1.0)
    assert "4 seeds" in v.measured and "16/16 interpolate" in v.measured


def test_disagrees_when_every_run_interpolates_with_a_small_spread():
    v = verdict(group(accuracy=forgetting))
    assert v.verdict == "disagrees" and "every run interpolates" in v.reason


def test_disagrees_when_the_final_norm_is_forgotten():
    v = verdict(group(accuracy=remembering, norm1=30.0))  # every run ends at the same norm
    assert v.verdict == "disagrees" and "norm is forgotten" in v.reason


def test_judged_from_interpolating_runs_only():
    """The largest sigma_w never interpolates: it is left out, the others still remember."""
    v = verdict(group(accuracy=remembering, tau=lambda s, k: None if s == 2.5 else 2,
                      train_acc=lambda s, k: 0.9 if s == 2.5 else 1.0))
    assert v.verdict == "agrees"
    assert v.numbers["spread"]["estimate"] == pytest.approx(100 * 0.08 * 0.75)
    assert v.numbers["interpolated"] == 12 and v.numbers["runs"] == 16


def test_inconclusive_when_the_spread_is_small_but_runs_do_not_interpolate():
    v = verdict(group(accuracy=forgetting, tau=lambda s, k: None if s == 2.5 else 2,
                      train_acc=lambda s, k: 0.9 if s == 2.5 else 1.0))
    assert v.verdict == "inconclusive" and "do not interpolate" in v.reason


def test_inconclusive_when_the_ci_straddles_the_threshold():
    """Two of four seeds lose 11 points at sigma_w 2.5: seed-mean spread 5.5, bootstrap CI 1 to 11."""
    v = verdict(group(accuracy=lambda s, k: 0.6 - (0.11 if s == 2.5 and k in (1, 3) else 0.0)
                      - (0.01 if s == 0.5 else 0.0)))
    assert v.verdict == "inconclusive" and "straddles" in v.reason
    assert v.numbers["spread"]["lo"] < 5 < v.numbers["spread"]["hi"]


def test_inconclusive_with_fewer_than_three_seeds():
    v = verdict(group(accuracy=remembering, seeds=(0, 1)))
    assert v.verdict == "inconclusive" and "seeds" in v.reason


def test_diverged_runs_are_counted_named_and_left_out():
    runs = group(accuracy=remembering, diverged=lambda s, k: (4, "training loss 1e17 > 10 x its start")
                 if (s, k) == (2.5, 0) else None)
    v = verdict(runs)
    assert "1 diverged" in v.measured and "sigma_w 2.5 seed 0 at epoch 4" in v.measured
    assert v.numbers["diverged"] == 1 and v.verdict == "agrees"


def test_not_run_without_plain_sgd():
    v = verdict(group({"optimizer": "adam", "lr": 1e-3}, accuracy=remembering))
    assert v.verdict == "not run"


def test_outcomes_are_the_ones_tested():
    assert set(CLAIM.outcomes) == {"agrees", "disagrees", "inconclusive", "not run"}
    assert len(SEEDS) >= CLAIM.threshold("min_seeds")


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", evidence(group(accuracy=remembering))),
    ("disagrees", evidence(group(accuracy=forgetting))),
    ("disagrees", evidence(group(accuracy=remembering, norm1=30.0))),
    ("inconclusive", evidence(group(accuracy=remembering, seeds=(0, 1)))),
    ("not run", evidence(group({"optimizer": "adam", "lr": 1e-3}, accuracy=remembering))),
]
