"""C1 (low-lr SGD remembers sigma_w): the rule on synthetic records: every outcome, the checkpoint
it judges, its thresholds (values from the paper, and moved by 20% a case flips), its OC gate."""

import math
from dataclasses import replace

import pytest
from spec_b_records import SEEDS8, group, judged, moved, noisy

from implicitbias.claims import Threshold
from implicitbias.claims.forgetting.c1_low_lr_sgd_remembers import CLAIM
from implicitbias.validation.analysis import group_runs

REMEMBERS = noisy(0.04)  # memory 4 points, residual noise 0.5 points: s = 8
FLAT = noisy(0.0, 0.01)  # no memory, noise 1 point


def evidence(runs):
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(runs, sims=0):
    return judged(CLAIM, evidence(runs), sims)


def test_agrees_when_every_run_interpolates_with_memory_and_coupled_norms():
    v = verdict(group(accuracy=REMEMBERS, seeds=SEEDS8))
    assert v.verdict == "agrees"
    e = v.numbers["estimate"]
    assert e.checkpoint == "interpolating" and e.n == 8 and e.lo > 1 and e.p < 0.01


def test_disagrees_when_there_is_no_memory_beyond_seed_noise():
    v = verdict(group(accuracy=FLAT, seeds=SEEDS8 + tuple(range(8, 16))))
    assert v.verdict == "disagrees" and v.numbers["estimate"].hi < 1


def test_disagrees_when_the_final_norm_is_forgotten():
    v = verdict(group(accuracy=REMEMBERS, seeds=SEEDS8, norm1=lambda s, k: 20.0 * (1 + 0.01 * k)))
    assert v.verdict == "disagrees" and "norm slope" in v.reason


def test_judges_the_interpolating_checkpoint_not_the_earlier_minimum_or_the_end():
    """Validation loss is lowest at epoch 1, before interpolation (epoch 2): there the accuracies carry
    no memory; at the interpolating checkpoint (epoch 2 onward: the 'middle' accuracy) they do; the
    end carries none either."""
    runs = group(accuracy=lambda s, k: (FLAT(s, k), FLAT(s, k)), middle=REMEMBERS, seeds=SEEDS8, selected_epoch=1,
                 tau=2)
    v = verdict(runs)
    assert v.verdict == "agrees"
    assert v.numbers["beside"] == {"all": "disagrees", "end": "disagrees"}
    assert "differs at all, end" in v.reason


def test_a_failed_premise_states_the_rules_simulated_rates_as_not_used():
    runs = group(accuracy=REMEMBERS, seeds=SEEDS8, tau=lambda s, k: None if (s, k) == (2.5, 0) else 2,
                 train_acc=lambda s, k: 0.8 if (s, k) == (2.5, 0) else 1.0)
    v = verdict(runs, sims=20)
    assert v.verdict == "inconclusive" and "premise" in v.reason
    assert "simulated (20 experiments" in v.measured and "not used: its premise fails" in v.measured
    assert not math.isnan(v.numbers["estimate"].agree_false)


def test_inconclusive_when_some_run_does_not_interpolate():
    runs = group(accuracy=REMEMBERS, seeds=SEEDS8, tau=lambda s, k: None if (s, k) == (2.5, 0) else 2,
                 train_acc=lambda s, k: 0.8 if (s, k) == (2.5, 0) else 1.0)
    v = verdict(runs)
    assert v.verdict == "inconclusive" and "premise" in v.reason


def test_inconclusive_when_the_interval_straddles_the_bound():
    v = verdict(group(accuracy=noisy(0.01, 0.01), seeds=SEEDS8))
    e = v.numbers["estimate"]
    assert v.verdict == "inconclusive" and e.lo < 1 < e.hi


def test_inconclusive_with_fewer_than_three_seeds():
    v = verdict(group(accuracy=REMEMBERS, seeds=(0, 1)))
    assert v.verdict == "inconclusive" and v.reason.startswith("only 2 complete seeds (need 3)")
    assert not verdict(group(accuracy=REMEMBERS, seeds=(0, 1, 2))).reason.startswith("only")  # 3 seeds are enough


def test_diverged_runs_are_counted_named_and_left_out():
    runs = group(accuracy=REMEMBERS, seeds=SEEDS8,
                 diverged=lambda s, k: (3, "non-finite loss") if (s, k) == (2.5, 1) else None)
    v = verdict(runs)
    assert v.verdict == "inconclusive" and "premise" in v.reason
    assert "1 diverged (left out: sigma_w 2.5 seed 1 at epoch 3: non-finite loss)" in v.reason
    mem = evidence(runs).data.memory["interpolating"]
    assert (mem.n, mem.k) == (7, 4)  # the seed with the diverged run is left out of the complete table


def test_not_run_without_plain_sgd():
    assert verdict(group({"optimizer": "adam"}, accuracy=REMEMBERS)).verdict == "not run"


def test_thresholds_are_the_pre_registered_values():
    assert CLAIM.threshold("remembers") == 1.0
    assert CLAIM.threshold("coupled") == pytest.approx(math.sqrt(4.0 / 26.5))
    assert CLAIM.threshold("min_seeds") == 3


@pytest.mark.parametrize("name, part", [("remembers", 0), ("coupled", 1)])
def test_each_threshold_moved_by_20_percent_flips_a_case_at_its_bound(name, part):
    """Both parts lie above their bounds (claim side: above); with the bound 20% above the interval's
    lower end the part no longer agrees (it straddles, or lies below), 20% below it agrees."""
    ev = evidence(group(accuracy=REMEMBERS, seeds=SEEDS8))
    lo = judged(CLAIM, ev).numbers["parts"][part].interval.lo
    outcomes = moved(CLAIM, ev, name, [lo * f for f in (1.2, 1 / 1.2)])
    assert outcomes[0] in ("inconclusive", "disagrees") and outcomes[1] == "agrees"


def test_a_wrong_direction_rate_above_the_limit_makes_it_inconclusive_underpowered(monkeypatch):
    """The gate: an agreeing tier, with the acceptable rate set below any simulated rate (the robust
    interval's rates are 0 of 400 tiers here, so no positive limit is exceeded): no seed count helps."""
    from implicitbias.claims.forgetting import memory_rules

    monkeypatch.setattr(memory_rules, "MAX_WRONG", Threshold(-1.0, "every rate exceeds it, for the test"))
    v = verdict(group(accuracy=noisy(0.03, 0.01), seeds=tuple(range(6))), sims=400)
    e = v.numbers["estimate"]
    assert v.verdict == "inconclusive" and v.reason.startswith("underpowered") and "rule gave agrees" in v.reason
    assert e.seeds_needed is None and "seeds needed: > 64" in v.reason


def test_the_memory_part_reads_the_robust_interval_of_its_table():
    """s's interval is ``memory_stats.robust_snr`` of the checkpoint's seed x sigma_w table (the exact
    interval joined with the bootstrap-t), not the exact one: on a table with one outlying seed the
    robust lower end sits below the exact one."""
    from implicitbias.numerics.metrics import memory_stats as ms

    outlier = noisy(0.02, 0.01)
    runs = group(accuracy=lambda s, k: outlier(s, k) + (0.04 * (s - 1) if k == 5 else 0.0), seeds=SEEDS8)
    ev = evidence(runs)
    part = verdict(runs).numbers["parts"][0]
    robust = ms.robust_snr(ev.data.tables["interpolating"])
    exact = ev.data.memory["interpolating"].snr
    assert (part.interval.lo, part.interval.hi) == pytest.approx((robust.lo, robust.hi))
    assert part.interval.lo < exact.lo - 0.1 and "bootstrap-t" in part.interval.method


def test_an_adequately_powered_tier_states_its_rates():
    v = verdict(group(accuracy=REMEMBERS, seeds=SEEDS8), sims=400)
    e = v.numbers["estimate"]
    assert v.verdict == "agrees" and e.agree_false <= 0.05 and e.disagree_true <= 0.05 and e.seeds_needed is None
    assert e.coverage > 0.95 - 4 * (0.95 * 0.05 / 400) ** 0.5  # the robust interval covers at least its level
    assert "bootstrap-t over seeds" in v.numbers["parts"][0].interval.method


def test_stability_judges_two_disjoint_seed_halves_and_says_whether_they_agree():
    groups = group_runs(group(accuracy=REMEMBERS, seeds=tuple(range(16))))  # 4 seeds are too few to resample
    halves = CLAIM.halves(groups)
    assert [h for h, _ in halves] == [list(range(8)), list(range(8, 16))] and [v for _, v in halves] == [{"": "agrees"}] * 2
    ev = evidence(group(accuracy=REMEMBERS, seeds=SEEDS8))
    ev.data = replace(ev.data, halves=[(part, verdicts[""]) for part, verdicts in halves])
    v = judged(CLAIM, ev)
    assert "same verdict on seeds 0-7 (agrees) and 8-15 (agrees)" in v.reason
    ev.data = replace(ev.data, halves=[([0, 1, 2, 3], "agrees"), ([4, 5, 6, 7], "inconclusive")])
    v = judged(CLAIM, ev)
    assert "not the same verdict on seeds 0-3 (agrees) and 4-7 (inconclusive)" in v.numbers["estimate"].stability
    ev.data = replace(ev.data, halves=[([0, 1, 2, 3], "inconclusive"), ([4, 5, 6, 7], "inconclusive")])
    v = judged(CLAIM, ev)  # the whole set agrees, both halves straddle
    assert "both halves give inconclusive (seeds 0-3 and 4-7, intervals only), the whole set agrees" in v.reason
    assert CLAIM.halves(group_runs(group(accuracy=REMEMBERS, seeds=(0, 1, 2, 3, 4)))) == []  # 5 < 2 x 3 seeds


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", evidence(group(accuracy=REMEMBERS, seeds=SEEDS8))),
    ("disagrees", evidence(group(accuracy=REMEMBERS, seeds=SEEDS8, norm1=lambda s, k: 20.0 * (1 + 0.01 * k)))),
    ("inconclusive", evidence(group(accuracy=REMEMBERS, seeds=(0, 1)))),
    ("not run", evidence(group({"optimizer": "adam"}, accuracy=REMEMBERS))),
]


def test_states_the_baselines_radial_memory_at_its_checkpoint():
    """SGD's clock in units of the initial norm is read off the norms (tr Sigma is not measured): a
    common norm 20 from 10 sigma_w is X = (20 / (10 sigma_w))^4 - 1 at sigma_w 0.25 and 2.5."""
    v = verdict(group(accuracy=REMEMBERS, seeds=SEEDS8, norm1=lambda s, k: 20.0))
    r = v.numbers["radial"]["sgd lr 0.1, b 64, 6 ep"]
    assert r["x"] == pytest.approx([(20 / 2.5) ** 4 - 1, (20 / 25) ** 4 - 1]) and r["measured"]
    assert r["slope"]["estimate"] == pytest.approx(0.0, abs=1e-9) and r["checkpoint"] == "interpolating"
    assert "radial memory at the interpolating checkpoint: sgd lr 0.1, b 64, 6 ep: norm slope " in v.measured
    assert "X 4.1e+03 at sigma_w 0.25, -0.59 at 2.5 (sgd law" in v.measured


def test_seed_halves_need_twice_the_minimum_and_reach_the_evidence():
    """Six seeds (2 x 3) are split into halves of three; ``stable_evidences`` hands each Evidence the
    halves' verdicts (computed without simulation) under its label."""
    groups = group_runs(group(accuracy=REMEMBERS, seeds=(0, 1, 2, 3, 4, 5)))
    assert [h for h, _ in CLAIM.halves(groups)] == [[0, 1, 2], [3, 4, 5]]
    (ev,) = CLAIM.stable_evidences(groups, "toy")
    assert ev.label == "toy" and ev.data.halves == [([0, 1, 2], "agrees"), ([3, 4, 5], "agrees")]
    assert CLAIM.oc_sims == 2000  # restored after the halves


def test_each_half_is_judged_on_its_own_seeds_by_the_intervals_alone(monkeypatch):
    """Seeds 0-2 carry memory, seeds 3-5 none: the first half agrees, the second does not; the halves
    never simulate (a simulation here fails the test); no groups, no halves."""
    from implicitbias.claims.forgetting import memory_rules

    def no_simulation(part):
        raise AssertionError("the halves are judged by their intervals only")

    monkeypatch.setattr(memory_rules, "_simulated", no_simulation)
    groups = group_runs(group(accuracy=lambda s, k: REMEMBERS(s, k) if k < 3 else FLAT(s, k), seeds=(0, 1, 2, 3, 4, 5)))
    (first, a), (second, b) = CLAIM.halves(groups)
    assert (first, a[""], second) == ([0, 1, 2], "agrees", [3, 4, 5]) and b[""] != "agrees"
    assert CLAIM.halves([]) == []


def test_memory_verdict_simulates_from_one_tier_and_needs_no_extra_numbers():
    """``sims`` = 1 already simulates (the rates are stated); ``numbers`` is optional."""
    from implicitbias.claims.forgetting.wording import memory_verdict

    d = evidence(group(accuracy=REMEMBERS, seeds=SEEDS8)).data
    v = memory_verdict(lambda cp, sims: CLAIM.parts(d, cp, sims), "interpolating", SEEDS8, 1)
    assert "simulated (1 experiments, n = 8)" in v.measured and not math.isnan(v.numbers["estimate"].agree_false)
    assert set(v.numbers) == {"estimate", "beside", "parts"}
