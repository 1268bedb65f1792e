"""C4 (SGD forgets with a larger lr or L2 decay; L2 1e-2 almost zero): the rule on synthetic records:
every outcome, each group's bound (0.389 for a larger lr, 0.151 for L2), every group."""

import math

import pytest
from spec_b_records import SEEDS8, group, judged, moved, noisy

from implicitbias.claims.forgetting.c4_sgd_forgets_with_larger_lr_or_l2 import CLAIM
from implicitbias.validation.analysis import group_runs

HIGH = {"lr": 1.0}
L2 = {"weight_decay": 1e-2}
SGD = noisy(0.05)
GONE = noisy(0.0005, 0.002, draw=1)  # r ~ 0.01: almost zero
HALFWAY = noisy(0.012, 0.002, draw=2)  # r ~ 0.24: forgets (< 0.389) but not almost zero (> 0.151)


def evidence(*others, baseline=None):
    runs = baseline if baseline is not None else group(accuracy=SGD, seeds=SEEDS8)
    for setting, accuracy in others:
        runs = runs + group(setting, accuracy=accuracy, seeds=SEEDS8)
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(*others, baseline=None, sims=0):
    return judged(CLAIM, evidence(*others, baseline=baseline), sims)


def test_agrees_when_larger_lr_forgets_and_l2_leaves_almost_nothing():
    v = verdict((HIGH, HALFWAY), (L2, GONE))
    assert v.verdict == "agrees"
    assert [p.bound for p in v.numbers["parts"]] == pytest.approx([math.sqrt(4 / 26.5), 4 / 26.5])


def test_l2_must_reach_almost_zero_where_a_larger_lr_only_has_to_forget():
    """The same halfway memory agrees for the larger lr (bound 0.389) and disagrees for L2 (0.151)."""
    assert verdict((HIGH, HALFWAY)).verdict == "agrees"
    v = verdict((L2, HALFWAY))
    assert v.verdict == "disagrees" and "L2" in v.reason


def test_disagrees_when_any_group_remembers():
    v = verdict((HIGH, noisy(0.05, draw=3)), (L2, GONE))
    assert v.verdict == "disagrees" and "lr 1" in v.reason


def test_inconclusive_when_the_l2_group_does_not_interpolate():
    """The claim's checkpoint does not exist without interpolation: no complete seeds."""
    runs = group(accuracy=SGD, seeds=SEEDS8) + group(L2, accuracy=GONE, seeds=SEEDS8, tau=None, train_acc=0.9)
    v = CLAIM.judge(CLAIM.evidence(group_runs(runs)))
    assert v.verdict == "inconclusive" and "complete seeds" in v.reason


def test_regime_not_matched_when_the_baseline_forgets_its_norm():
    """C4 applies the regime's baseline target only (slope >= 0.8); its groups are judged as they are."""
    base = group(accuracy=SGD, seeds=SEEDS8, norm1=lambda s, k: 10.0 * s**0.6)
    v = verdict((HIGH, HALFWAY), (L2, GONE), baseline=base)
    assert v.verdict == "inconclusive" and "regime: clocks not matched (low-lr SGD baseline norm slope 0.60" in v.reason
    assert verdict((HIGH, HALFWAY), baseline=group(accuracy=SGD, seeds=SEEDS8, norm1=lambda s, k: 10.0 * s**0.9)
                   ).verdict == "agrees"
    assert "sgd lr 1, b 64, 6 ep: norm slope 1.00" in v.measured and "sgd law" in v.measured


def test_inconclusive_when_the_baseline_does_not_interpolate():
    v = verdict((HIGH, HALFWAY), baseline=group(accuracy=SGD, seeds=SEEDS8, tau=None, train_acc=0.8))
    assert v.verdict == "inconclusive" and "baseline does not interpolate" in v.reason


def test_not_run_without_larger_lr_or_l2_groups():
    assert verdict().verdict == "not run"


def test_momentum_at_the_same_lr_is_not_a_larger_lr():
    v = CLAIM.evidence(group_runs(group(accuracy=SGD) + group({"momentum": 0.9}, accuracy=GONE)), "synthetic")
    assert v.data.groups == ()


def test_the_row_states_each_groups_clock_at_the_judged_checkpoint():
    """Closed form on the synthetic records (constant lr 0.1, b 64, 1,000 images: ceil(1000 / 64) = 16
    steps an epoch; judged at the interpolating checkpoint, epoch 3): T_L2 = lambda sum eta =
    1e-2 x 3 x 16 x 0.1 and, for the larger lr, T_SGD = (1/b) sum eta^2 = 3 x 16 x 1.0^2 / 64."""
    v = verdict((HIGH, HALFWAY), (L2, GONE))
    t_l2, t_sgd = 1e-2 * 3 * 16 * 0.1, 3 * 16 * 1.0**2 / 64
    assert [(name, t) for name, t in v.numbers["clocks"].values()] == [("T_SGD", pytest.approx(t_sgd)),
                                                                        ("T_L2", pytest.approx(t_l2))]
    assert f"T_L2 = {t_l2:.3g}" in v.measured and "interpolating checkpoint" in v.measured
    late = judged(CLAIM, CLAIM.evidence(group_runs(group(accuracy=SGD, seeds=SEEDS8)
                                                   + group(L2, accuracy=GONE, seeds=SEEDS8, selected_epoch=5))))
    assert f"T_L2 = {1e-2 * 5 * 16 * 0.1:.3g}" in late.measured  # the checkpoint moves, the clock with it
    spread = judged(CLAIM, CLAIM.evidence(group_runs(group(accuracy=SGD, seeds=SEEDS8) + group(
        L2, accuracy=GONE, seeds=SEEDS8, selected_epoch=lambda s, k: {0.25: 3, 0.5: 4, 1.0: 5, 2.5: 6}[s]))))
    # the median over the runs at epochs 3-6: between epoch 4's clock and epoch 5's
    assert list(spread.numbers["clocks"].values()) == [("T_L2", pytest.approx(1e-2 * 4.5 * 16 * 0.1))]


def test_thresholds_are_the_pre_registered_values():
    assert CLAIM.threshold("forgets") == pytest.approx(math.sqrt(4.0 / 26.5))
    assert CLAIM.threshold("almost_zero") == pytest.approx(4.0 / 26.5)


@pytest.mark.parametrize("name, setting, accuracy", [("forgets", HIGH, HALFWAY), ("almost_zero", L2, GONE)])
def test_each_threshold_moved_by_20_percent_flips_a_case_at_its_bound(name, setting, accuracy):
    ev = evidence((setting, accuracy))
    hi = judged(CLAIM, ev).numbers["parts"][0].interval.hi
    outcomes = moved(CLAIM, ev, name, [hi * f for f in (1 / 1.2, 1.2)])
    assert outcomes[0] in ("inconclusive", "disagrees") and outcomes[1] == "agrees"


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule (simulated OC included)
    ("agrees", evidence((HIGH, HALFWAY))),
    ("disagrees", evidence((L2, HALFWAY))),
    ("inconclusive", evidence((HIGH, HALFWAY), baseline=group(accuracy=SGD, seeds=SEEDS8, tau=None, train_acc=0.8))),
    ("not run", evidence()),
]
