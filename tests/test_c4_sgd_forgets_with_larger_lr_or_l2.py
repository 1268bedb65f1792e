"""C4 (SGD forgets with a larger lr or L2 decay): the rule on synthetic records."""

from spec_b_records import forgetting, group, remembering

from implicitbias.claims.c4_sgd_forgets_with_larger_lr_or_l2 import CLAIM
from implicitbias.validation.analysis import group_runs

HIGH = {"lr": 1.0}
L2 = {"weight_decay": 1e-2}


def evidence(*others, baseline=None):
    runs = baseline if baseline is not None else group(accuracy=remembering)
    for setting, accuracy in others:
        runs = runs + group(setting, accuracy=accuracy)
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(*others, baseline=None):
    return CLAIM.judge(evidence(*others, baseline=baseline))


def test_agrees_when_larger_lr_and_l2_both_forget():
    v = verdict((HIGH, forgetting), (L2, forgetting))
    assert v.verdict == "agrees" and len(v.numbers["forget"]) == 2


def test_disagrees_when_l2_keeps_the_spread():
    v = verdict((HIGH, forgetting), (L2, remembering))
    assert v.verdict == "disagrees" and v.numbers["remember"] == ["sgd lr 0.1, b 64, L2 0.01, 6 ep"]


def test_inconclusive_when_the_baseline_does_not_interpolate():
    v = verdict((HIGH, forgetting), baseline=group(accuracy=remembering, tau=None, train_acc=0.8))
    assert v.verdict == "inconclusive"


def test_inconclusive_when_a_spread_straddles():
    v = verdict((HIGH, lambda s, k: 0.6 - (0.11 if s == 2.5 and k in (1, 3) else 0.0)))
    assert v.verdict == "inconclusive"


def test_not_run_without_larger_lr_or_l2_groups():
    assert verdict().verdict == "not run"


def test_momentum_at_the_same_lr_is_not_a_larger_lr():
    v = verdict(({"optimizer": "sgd_momentum"}, forgetting))
    assert v.verdict == "not run"


def test_the_end_of_training_verdict_is_stated_beside_the_selected_one():
    """L2 decay acts late: the early validation-selected predictor still remembers, the trained one forgets."""
    v = verdict((L2, lambda s, k: (remembering(s, k), forgetting(s, k))))
    assert v.verdict == "disagrees" and "on the end-of-training spread: agrees" in v.reason
    assert v.numbers["end_of_training"] == "agrees"


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", evidence((HIGH, forgetting), (L2, forgetting))),
    ("disagrees", evidence((HIGH, forgetting), (L2, remembering))),
    ("inconclusive", evidence((HIGH, lambda s, k: 0.6 - (0.11 if s == 2.5 and k in (1, 3) else 0.0)))),
    ("not run", evidence(({"optimizer": "sgd_momentum"}, forgetting))),
]
