"""C3 (adaptive methods forget: memory relative to low-lr SGD, and a common final norm): the rule on
synthetic records: every outcome, every group against any group, the checkpoint it judges, its
thresholds (values from the paper, and moved by 20% a case flips)."""

import math

import pytest
from spec_b_records import SEEDS8, group, judged, moved, noisy

from implicitbias.claims.forgetting.c3_adaptive_methods_forget import CLAIM
from implicitbias.validation.analysis import group_runs

ADAM = {"optimizer": "adam", "lr": 1e-3}
MUON = {"optimizer": "muon", "lr": 2e-2}
SGD = noisy(0.05)  # the baseline: memory 5 points, noise 0.5
COMMON = 20.0  # a common final norm: slope 0


def forgets(draw=1):
    return {"accuracy": noisy(0.002, draw=draw), "norm1": lambda s, k: COMMON * (1 + 0.001 * k)}  # r ~ 0.04


def remembers(draw=2):
    return {"accuracy": noisy(0.05, draw=draw), "norm1": lambda s, k: COMMON * (1 + 0.001 * k)}  # r ~ 1


def straddles(draw=3):
    return {"accuracy": noisy(0.02, 0.012, draw=draw), "norm1": lambda s, k: COMMON * (1 + 0.001 * k)}  # r ~ 0.4


def evidence(*adaptive, baseline=None, seeds=SEEDS8):
    runs = baseline if baseline is not None else group(accuracy=SGD, seeds=seeds)
    for setting, kw in adaptive:
        runs = runs + group(setting, seeds=seeds, **kw)
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(*adaptive, baseline=None):
    return judged(CLAIM, evidence(*adaptive, baseline=baseline), 0)


def test_agrees_when_every_adaptive_group_forgets_memory_and_norm():
    v = verdict((ADAM, forgets()), (MUON, forgets(4)))
    assert v.verdict == "agrees"
    assert [p.outcome for p in v.numbers["parts"]] == ["agrees"] * 4


def test_disagrees_when_any_group_remembers_even_if_another_forgets():
    v = verdict((ADAM, forgets()), (MUON, remembers()))
    assert v.verdict == "disagrees" and "muon" in v.reason and "adam" not in v.reason


def test_inconclusive_when_one_group_forgets_and_another_straddles():
    """'every group' is required to agree: one straddling group is not enough to agree."""
    v = verdict((ADAM, forgets()), (MUON, straddles()))
    outcomes = [p.outcome for p in v.numbers["parts"] if "memory" in p.what]
    assert outcomes == ["agrees", "inconclusive"] and v.verdict == "inconclusive"


def test_disagrees_when_the_final_norm_stays_coupled_whatever_the_memory():
    v = verdict((ADAM, {"accuracy": noisy(0.002, draw=1)}))  # norm1 = norm0: slope 1
    assert v.verdict == "disagrees" and "norm slope" in v.reason


def test_judges_the_interpolating_checkpoint():
    """The adaptive group remembers at its earlier validation minimum (epoch 1, before interpolation)
    and at the end, forgets at the interpolating checkpoint: judged there, the others beside."""
    kw = forgets()
    kw = {**kw, "accuracy": lambda s, k: (noisy(0.05, draw=5)(s, k), noisy(0.05, draw=6)(s, k)),
          "middle": kw["accuracy"], "selected_epoch": 1, "tau": 2}
    base = group(accuracy=lambda s, k: (SGD(s, k), SGD(s, k)), middle=SGD, seeds=SEEDS8, selected_epoch=1, tau=2)
    v = verdict((ADAM, kw), baseline=base)
    assert v.verdict == "agrees" and v.numbers["beside"] == {"all": "disagrees", "end": "disagrees"}


def test_inconclusive_when_the_baseline_does_not_interpolate():
    base = group(accuracy=SGD, seeds=SEEDS8, tau=None, train_acc=0.8)
    v = verdict((ADAM, forgets()), baseline=base)
    assert v.verdict == "inconclusive" and "baseline does not interpolate" in v.reason


def test_inconclusive_when_the_baseline_shows_no_memory():
    v = verdict((ADAM, forgets()), baseline=group(accuracy=noisy(0.0, 0.01), seeds=SEEDS8))
    assert v.verdict == "inconclusive" and "no memory" in v.reason


def test_inconclusive_with_too_few_seeds():
    v = CLAIM.judge(evidence((ADAM, forgets()), seeds=(0, 1)))
    assert v.verdict == "inconclusive" and "seeds" in v.reason


def test_not_run_without_adaptive_groups():
    assert verdict().verdict == "not run"


def test_thresholds_are_the_pre_registered_values():
    assert CLAIM.threshold("forgets") == pytest.approx(math.sqrt(4.0 / 26.5))
    assert CLAIM.threshold("common_norm") == pytest.approx(math.sqrt(4.0 / 26.5))


@pytest.mark.parametrize("name, part, case", [
    ("forgets", 0, {"accuracy": noisy(0.015, draw=1), "norm1": lambda s, k: COMMON * (1 + 0.001 * k)}),
    ("common_norm", 1, {"accuracy": noisy(0.002, draw=1), "norm1": lambda s, k: 20.0 * s ** 0.2 * (1 + 0.01 * k)}),
])
def test_each_threshold_moved_by_20_percent_flips_a_case_at_its_bound(name, part, case):
    """The parts lie below their bounds (claim side: below); a bound 20% below the interval's upper
    end makes the part no longer agree, 20% above it agrees (the other part agrees throughout)."""
    ev = evidence((ADAM, case))
    hi = judged(CLAIM, ev).numbers["parts"][part].interval.hi
    outcomes = moved(CLAIM, ev, name, [hi * f for f in (1 / 1.2, 1.2)])
    assert outcomes[0] in ("inconclusive", "disagrees") and outcomes[1] == "agrees"


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule (simulated OC included)
    ("agrees", evidence((ADAM, forgets()))),
    ("disagrees", evidence((ADAM, remembers()))),
    ("inconclusive", evidence((ADAM, forgets()), baseline=group(accuracy=SGD, seeds=SEEDS8, tau=None, train_acc=0.8))),
    ("not run", evidence()),
]
