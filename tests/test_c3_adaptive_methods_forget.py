"""C3 (adaptive methods forget: small spread, common final norm): the rule on synthetic records."""

from spec_b_records import forgetting, group, remembering

from implicitbias.claims.c3_adaptive_methods_forget import CLAIM
from implicitbias.validation.analysis import group_runs

ADAM = {"optimizer": "adam", "lr": 1e-3}
MUON = {"optimizer": "muon", "lr": 2e-2}


def evidence(*adaptive, baseline=None):
    runs = baseline if baseline is not None else group(accuracy=remembering)
    for setting, kw in adaptive:
        runs = runs + group(setting, **kw)
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(*adaptive, baseline=None):
    return CLAIM.judge(evidence(*adaptive, baseline=baseline))


COMMON = {"accuracy": forgetting, "norm1": 20.0}  # common final norm: slope 0


def test_agrees_when_every_adaptive_group_forgets_spread_and_norm():
    v = verdict((ADAM, COMMON), (MUON, COMMON))
    assert v.verdict == "agrees" and set(v.numbers["forget"]) == {"adam lr 0.001, b 64, 6 ep", "muon lr 0.02, b 64, 6 ep"}


def test_disagrees_when_an_adaptive_group_keeps_the_spread():
    v = verdict((ADAM, COMMON), (MUON, {"accuracy": remembering, "norm1": 20.0}))
    assert v.verdict == "disagrees" and v.numbers["remember"] == ["muon lr 0.02, b 64, 6 ep"]


def test_disagrees_when_the_final_norm_stays_coupled_whatever_the_spread():
    """Absolute bound on the slope (not relative to SGD): slope 1 is remembering the norm."""
    v = verdict((ADAM, {"accuracy": forgetting}))
    assert v.verdict == "disagrees"


def test_inconclusive_when_the_baseline_does_not_interpolate():
    base = group(accuracy=remembering, tau=None, train_acc=0.8)
    v = verdict((ADAM, COMMON), baseline=base)
    assert v.verdict == "inconclusive" and "baseline does not interpolate" in v.reason


def test_inconclusive_when_a_slope_straddles_its_bound():
    v = verdict((ADAM, {"accuracy": forgetting, "norm1": lambda s, k: 20.0 * s ** (0.05 if k % 2 else 0.6)}))
    assert v.verdict == "inconclusive" and "straddles" in v.reason


def test_inconclusive_with_too_few_seeds():
    v = verdict((ADAM, {**COMMON, "seeds": (0, 1)}))
    assert v.verdict == "inconclusive" and "seeds" in v.reason


def test_not_run_without_adaptive_groups():
    assert verdict().verdict == "not run"


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", evidence((ADAM, COMMON), (MUON, COMMON))),
    ("disagrees", evidence((ADAM, COMMON), (MUON, {"accuracy": remembering, "norm1": 20.0}))),
    ("disagrees", evidence((ADAM, {"accuracy": forgetting}))),
    ("inconclusive", evidence((ADAM, COMMON), baseline=group(accuracy=remembering, tau=None, train_acc=0.8))),
    ("not run", evidence()),
]
