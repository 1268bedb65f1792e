"""C6 (deep ResNets at large sigma_w fail to interpolate): the rule on synthetic records."""

import math

import pytest
from spec_b_records import group

from implicitbias.claims.forgetting.c6_deep_nets_fail_to_interpolate import CLAIM
from implicitbias.validation.analysis import group_runs

SEEDS = (0, 1, 2)


def deep(arch, interpolates, diverged=None):
    """``interpolates(sigma, seed)`` -> bool, at sigma_w 0.25 and 2.5."""
    return group({"arch": arch, "width": 0.25, "dataset": "synthetic"}, sigmas=(0.25, 2.5), seeds=SEEDS,
                 accuracy=lambda s, k: 0.8, tau=lambda s, k: 3 if interpolates(s, k) else None,
                 train_acc=lambda s, k: 1.0 if interpolates(s, k) else 0.6, diverged=diverged)


def evidence(*groups):
    return CLAIM.evidence(group_runs([r for g in groups for r in g]), "synthetic")


def verdict(*groups):
    return CLAIM.judge(evidence(*groups))


def test_agrees_when_the_largest_sigma_fails_everywhere():
    v = verdict(deep("resnet56", lambda s, k: s < 1), deep("resnet110", lambda s, k: s < 1))
    assert v.verdict == "agrees"
    assert "Fisher exact p = 0.05 (n = 3 seeds each)" in v.measured


def test_diverged_runs_count_as_failures_and_are_shown():
    v = verdict(deep("resnet56", lambda s, k: s < 1,
                     diverged=lambda s, k: (2, "training accuracy 0.100 at chance") if s > 1 and k == 0 else None))
    assert v.verdict == "agrees" and "(1 diverged)" in v.measured


def test_disagrees_when_large_sigma_interpolates_too():
    v = verdict(deep("resnet56", lambda s, k: True), deep("resnet110", lambda s, k: s < 1))
    assert v.verdict == "disagrees" and "resnet56" in v.reason


def test_inconclusive_when_small_sigma_does_not_interpolate_either():
    v = verdict(deep("resnet110", lambda s, k: False))
    assert v.verdict == "inconclusive"


def test_inconclusive_on_mixed_seeds():
    v = verdict(deep("resnet110", lambda s, k: s < 1 or k == 0))
    assert v.verdict == "inconclusive"



def test_inconclusive_when_only_the_large_sigma_interpolates_everywhere():
    """One condition of "disagrees" fails: every large-sigma_w run interpolates, one small-sigma_w run does not."""
    v = verdict(deep("resnet110", lambda s, k: s > 1 or k != 0))
    assert v.verdict == "inconclusive" and "resnet110" in v.reason


def test_not_run_without_deep_groups():
    v = CLAIM.judge(CLAIM.evidence(group_runs(group(accuracy=lambda s, k: 0.5)), ""))
    assert v.verdict == "not run"


def test_render_draws_training_curves_at_both_ends(tmp_path):
    from implicitbias.claims import Context

    ev = CLAIM.evidence(group_runs(deep("resnet56", lambda s, k: s < 1)), "synthetic")
    md = CLAIM.render(Context(store=None, out=tmp_path, progress=False), ev, CLAIM.judge(ev))
    assert "c6_synthetic.png" in md
    rows = (tmp_path / "figures" / "c6_synthetic.csv").read_text().splitlines()
    assert rows[0] == "group,sigma_w,seed,epoch,train_acc" and len(rows) == 1 + 6 * 7  # 6 runs x epochs 0..6


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", evidence(deep("resnet56", lambda s, k: s < 1), deep("resnet110", lambda s, k: s < 1))),
    ("disagrees", evidence(deep("resnet56", lambda s, k: True), deep("resnet110", lambda s, k: s < 1))),
    ("inconclusive", evidence(deep("resnet110", lambda s, k: s < 1 or k == 0))),
    ("not run", evidence(group(accuracy=lambda s, k: 0.5))),
]


def test_render_skips_the_curve_of_a_run_diverged_at_initialisation(tmp_path):
    """A run non-finite before its first step has no valid row: its curve is empty, the others are drawn."""
    from implicitbias.claims import Context
    from implicitbias.claims.forgetting.figures import curves_figure

    from implicitbias.numerics.metrics.resampling import Interval
    from implicitbias.validation.analysis import GroupSummary, RunRow

    runs = (RunRow(0.25, 0, None, None, curve=((0, 0.1, 0.1), (1, 0.9, 0.8))),
            RunRow(2.5, 0, 0, "non-finite values", curve=()),
            RunRow(2.5, 1, None, None, curve=((0, 0.1, 0.1), (1, 0.5, 0.4))))
    none = Interval(math.nan, math.nan, math.nan, 0.95, n=0)
    summary = GroupSummary("deep", {"arch": "resnet110"}, "sgd", 1, (0.25, 2.5), (0, 1), runs, False, (), none, none,
                           none, {}, None)
    curves_figure(Context(store=None, out=tmp_path, progress=False), [summary], "c6_init")
    rows = (tmp_path / "figures" / "c6_init.csv").read_text().splitlines()
    assert len(rows) == 1 + 4 and all(",2.5,0," not in r for r in rows)


def test_rate_difference_is_newcombes_hybrid_score_interval():
    """Newcombe (1998), Stat Med 17:873, Table II example (a): 56/70 - 48/80 = 0.2000, method 10
    interval 0.0524 to 0.3339."""
    from implicitbias.claims.forgetting.c6_deep_nets_fail_to_interpolate import rate_difference

    d, lo, hi = rate_difference(56, 70, 48, 80)
    assert d == pytest.approx(0.2) and lo == pytest.approx(0.0524, abs=6e-5) and hi == pytest.approx(0.3339, abs=6e-5)


def test_the_exact_rates_of_the_count_rule_against_simulated_tiers():
    import numpy as np

    from implicitbias.claims.forgetting.c6_deep_nets_fail_to_interpolate import FLIP, rates

    rng = np.random.default_rng(4)
    n, sims = 2, 200_000
    for p_large, rate in ((FLIP, "disagree_true"), (1 - FLIP, "agree_false")):
        small, large = rng.binomial(n, 1 - FLIP, sims), rng.binomial(n, p_large, sims)
        agree, disagree = (small == n) & (large == 0), (small == n) & (large == n)
        got = disagree.mean() if rate == "disagree_true" else agree.mean()
        assert got == pytest.approx(getattr(rates(n), rate), abs=4 * (got / sims) ** 0.5 + 1e-5)
        if rate == "disagree_true":
            assert 1 - agree.mean() - got == pytest.approx(rates(n).inconclusive_true, abs=0.005)


def test_the_coverage_of_the_interval_against_exact_enumeration():
    from scipy.stats import binom

    from implicitbias.claims.forgetting.c6_deep_nets_fail_to_interpolate import coverage, rate_difference

    n, p1, p2 = 5, 0.8, 0.3
    exact = sum(binom.pmf(a, n, p1) * binom.pmf(b, n, p2) for a in range(n + 1) for b in range(n + 1)
                if rate_difference(a, n, b, n)[1] <= p1 - p2 <= rate_difference(a, n, b, n)[2])
    got = coverage(p1, p2, n, sims=20_000)
    assert got == pytest.approx(exact, abs=4 * (exact * (1 - exact) / 20_000) ** 0.5)


def test_not_run_states_the_rules_rates_at_the_full_tiers_seeds():
    v = CLAIM.judge(CLAIM.measure(None, CLAIM.config("default"))[0])
    e = v.numbers["estimate"]
    assert v.verdict == "not run" and e.n == 3 and e.agree_false == pytest.approx(0.9**3 * 0.1**3)
    assert "P(agrees | false)" in v.measured


# -- the rule's pieces one at a time (issue 29 item 7) ------------------------------------------------


def test_the_exact_rates_in_the_false_world_and_nothing_simulated():
    """P(disagrees | false) = P(both ends all interpolate at 0.9) = 0.81^n, so P(inconclusive | false) =
    1 - 0.81^n - 0.09^n; exact, so no simulated tiers (sims 0)."""
    from implicitbias.claims.forgetting.c6_deep_nets_fail_to_interpolate import rates

    for n in (2, 3, 5):
        oc = rates(n)
        assert oc.inconclusive_false == pytest.approx(1 - 0.81**n - 0.09**n) and oc.sims == 0 and oc.n == n


def test_a_run_that_interpolated_and_then_diverged_fails():
    from dataclasses import replace

    from implicitbias.claims.forgetting.c6_deep_nets_fail_to_interpolate import DeepGroup
    from implicitbias.validation.analysis import RunRow, summarise

    summary = summarise(group_runs(deep("resnet56", lambda s, k: True))[0])
    runs = (RunRow(0.25, 0, None, None, tau_interp=3, final_train_acc=100.0),
            RunRow(2.5, 0, 5, "non-finite values", tau_interp=3, final_train_acc=100.0))
    ends = DeepGroup.of(replace(summary, sigma_w=(0.25, 2.5), runs=runs))
    assert (ends.smallest.interpolate, ends.largest.interpolate, ends.largest.diverged) == (1, 0, 1)


def test_the_check_names_the_deep_groups_or_that_it_needs_them():
    assert CLAIM.evidence(group_runs(group(accuracy=lambda s, k: 0.5)), "").check == "needs ResNet-56/110 groups"
    assert evidence(deep("resnet56", lambda s, k: s < 1)).check.startswith("resnet56 width 0.25")


def test_the_estimate_is_the_deciding_architecture_s_and_names_its_seeds():
    v = verdict(deep("resnet56", lambda s, k: s < 1), deep("resnet110", lambda s, k: True))
    e = v.numbers["estimate"]
    assert v.verdict == "disagrees" and "resnet110" in e.quantity and e.seeds.startswith("0 1 2")
