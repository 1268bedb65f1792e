"""C7 (spreads collapse onto each family's clock): the held-out prediction rule on synthetic points
and records, every outcome, and families never pooled."""

import math

import numpy as np
import pytest
from spec_b_records import group, judged

from implicitbias.claims.forgetting import c7_clocks_collapse_the_spreads as c7
from implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads import CLAIM, clock_points
from implicitbias.numerics.metrics.clock_collapse import half_splits
from implicitbias.validation.analysis import group_runs

CLOCKS = [0.02 * 4**i for i in range(4)]  # four clock levels, each reached at 30 and at 120 epochs
GRID = [(c, e) for c in CLOCKS for e in (30, 120)]


def point(clock, epochs, spread, family="sgd"):
    return {"label": f"clock {clock:g}, {epochs} ep", "family": family, "governing": "T_SGD", "clock": clock,
            "epochs": epochs, "steps": 8 * epochs, "lr": 0.1, "optimizer": "sgd", "n_diverged": 0, "n_runs": 20,
            "seeds": [0, 1, 2, 3], "spread": {"estimate": spread, "lo": spread - 1, "hi": spread + 1, "n": 4, "level": 0.95}}


def evidence(spreads, grid=GRID):
    return CLAIM.family_evidence([point(c, e, s) for (c, e), s in zip(grid, spreads)], "sgd")


COLLAPSED = [12 - 2 * math.log(c, 4) for c, _ in GRID]  # a function of the clock alone
BY_EPOCHS = [10.0 if e == 30 else 4.0 for _, e in GRID]  # a function of the epochs alone
# a falling trend buried in noise: the CI of (clock - epochs) error straddles 0 and -1 point
NOISY = [3.0, 5.0, 9.0, 9.0, 10.0, 10.0, 14.0, 5.0]
# the clock a fraction of a point better than epochs at most: CI of the difference in (-1, +0.4)
BARELY = [8.0, 8.0, 9.0, 10.0, 8.0, 4.0, 6.0, 8.0]

SYNTHETIC_VERDICTS = [
    ("agrees", evidence(COLLAPSED)),
    ("disagrees", evidence(BY_EPOCHS)),
    # the rule disagrees (tests below), but its simulated P(disagrees | true) is 0.24: underpowered
    ("inconclusive", evidence(BARELY)),
    ("inconclusive", evidence(NOISY)),
    ("inconclusive", evidence(COLLAPSED[:5], GRID[:5])),  # fewer than min_groups
    ("inconclusive", evidence(COLLAPSED, [(c, 120) for c, _ in GRID])),  # epochs do not vary
    ("not run", CLAIM.evidences([])[0]),
]


@pytest.mark.parametrize("expected, ev", SYNTHETIC_VERDICTS, ids=[f"{e}-{i}" for i, (e, _) in enumerate(SYNTHETIC_VERDICTS)])
def test_verdict(expected, ev):
    assert CLAIM.judge(ev).verdict == expected  # the whole rule, its simulated operating characteristics too


def test_agrees_numbers_come_from_held_out_groups():
    v = judged(CLAIM, evidence(COLLAPSED))
    # each clock level has its twin at the other epoch count; a held-out group is predicted exactly
    # when its twin is in the fitting half, so the clock's error is small but not zero
    assert 0 < v.numbers["error_clock"] < v.numbers["error_epochs"]
    assert v.numbers["hi"] < 0 and v.numbers["n"] == 8 and v.numbers["epoch_ratio"] == 4


def test_disagrees_when_epochs_predict_the_spread():
    """A held-out group is missed (by 10 - 4 = 6 points) only in the one split of the 35 that hold it
    out whose fitting half has no group at its epoch count: error 6/35 per group."""
    v = judged(CLAIM, evidence(BY_EPOCHS))
    assert v.numbers["error_epochs"] == pytest.approx(6 / 35) and v.numbers["lo"] > -1


def test_disagrees_when_the_clock_is_less_than_the_margin_better():
    v = judged(CLAIM, evidence(BARELY))
    assert -1 < v.numbers["lo"] < v.numbers["difference"] < v.numbers["hi"] and v.numbers["hi"] > 0


def test_a_two_variable_fit_of_lr_and_epochs_is_a_comparator_the_clock_must_beat():
    """Spreads linear in log lr and log epochs, the clock unrelated to both: the strongest non-clock
    predictor is the two-variable fit, and the clock loses to it."""
    lrs = [0.05, 0.1, 0.2, 0.4, 0.05, 0.1, 0.2, 0.4]
    epochs = [30, 30, 30, 30, 120, 120, 120, 120]
    clocks = [0.3, 0.02, 0.9, 0.1, 0.05, 0.7, 0.2, 0.4]
    pts = [{**point(c, e, 10 - 2 * math.log(lr) - math.log(e)), "lr": lr} for c, e, lr in zip(clocks, epochs, lrs)]
    v = judged(CLAIM, CLAIM.family_evidence(pts, "sgd"))
    # steps = 8 x epochs here: (lr, epochs) and (lr, steps) fit equally well
    assert v.verdict == "disagrees" and v.numbers["strongest"].startswith("log lr + log")
    # exact wherever the fitting half holds both epoch counts (else the least-squares fit is underdetermined)
    assert v.numbers["error_strongest"] < 0.1 < v.numbers["error_clock"]


def test_inconclusive_when_a_comparator_orders_the_groups_as_the_clock_does():
    """lr x epochs proportional to the clock: the grid cannot tell them apart."""
    pts = [{**point(c, e, 12 - 2 * math.log(c, 4)), "lr": c / e} for c, e in GRID]
    v = judged(CLAIM, CLAIM.family_evidence(pts, "sgd"))
    assert v.verdict == "inconclusive" and "lr_epochs" in v.reason


def test_linear_errors_are_zero_on_exactly_linear_data_and_match_a_hand_fit():
    from implicitbias.numerics.metrics.clock_collapse import half_splits, linear_errors

    x = [1.0, 2.0, 4.0, 8.0]
    masks, _ = half_splits(4)
    assert linear_errors([x], [3 + 2 * math.log(v) for v in x], masks).tolist() == pytest.approx([0.0] * 4, abs=1e-9)
    y = [1.0, 0.0, 2.0, 5.0]
    got = linear_errors([x], y, masks).tolist()
    u = [math.log(v) for v in x]
    want = [0.0] * 4
    for mask in masks:  # a line through the two fitting points, evaluated at the two held out
        (i, j), held = [k for k in range(4) if mask[k]], [k for k in range(4) if not mask[k]]
        slope = (y[j] - y[i]) / (u[j] - u[i])
        for k in held:
            want[k] += abs(y[i] + slope * (u[k] - u[i]) - y[k]) / 3  # each group is held out in 3 of the 6 splits
    assert got == pytest.approx(want)


def test_inconclusive_reason_names_the_straddle():
    v = judged(CLAIM, evidence(NOISY))
    assert v.numbers["lo"] < -1 < 0 < v.numbers["hi"] and "straddles" in v.reason


def _runs(spread_of, family_settings):
    """Synthetic records: for each setting, accuracy falls by spread_of(setting) points at the largest sigma_w."""
    out = []
    for setting in family_settings:
        d = spread_of(setting) / 100
        out += group(setting, accuracy=lambda s, k, d=d: (0.6, 0.6 - d * (s == 2.5)))
    return group_runs(out)


SGD = [{"lr": lr, "epochs": e} for lr, e in ((0.1, 6), (0.2, 6), (0.4, 6), (0.8, 6), (0.05, 24), (0.1, 24),
                                             (0.2, 24), (0.4, 24))]
ADAM = [{"optimizer": "adam", "lr": lr, "epochs": e} for lr, e in ((1e-3, 6), (4e-3, 6), (1.6e-2, 6),
                                                                   (2.5e-4, 24), (1e-3, 24), (4e-3, 24))]


def _sgd_clock(s):  # T_SGD = E * 16 steps * lr^2 / 64 (records use N = 1000, b = 64)
    return s["epochs"] * 16 * s["lr"] ** 2 / 64


def test_records_give_one_evidence_per_family_never_pooled():
    """SGD spreads follow T_SGD; Adam spreads follow epochs: each family is judged on its own points."""
    groups = _runs(lambda s: 20 - 2 * math.log(_sgd_clock(s)) if s.get("optimizer") != "adam" else
                   (8 if s["epochs"] == 6 else 2), SGD + ADAM)
    evs = CLAIM.evidences(groups, "synthetic")
    assert [e.label for e in evs] == ["synthetic: sgd", "synthetic: adaptive"]
    assert [len(e.data["points"]) for e in evs] == [8, 6]
    assert {p["family"] for p in evs[0].data["points"]} == {"sgd"}
    assert [judged(CLAIM, e).verdict for e in evs] == ["agrees", "disagrees"]


def test_points_carry_clock_epochs_and_steps_from_the_records():
    groups = _runs(lambda s: 5.0, SGD[:2] + SGD[4:5])
    pts = clock_points(groups)
    assert [p["clock"] for p in pts] == pytest.approx([_sgd_clock(s) for s in SGD[:2] + SGD[4:5]])
    assert [p["epochs"] for p in pts] == [6, 6, 24] and [p["steps"] for p in pts] == [96, 96, 384]
    assert [p["spread"]["estimate"] for p in pts] == pytest.approx([5.0, 5.0, 5.0])


def test_render_draws_both_panels_and_the_held_out_table(tmp_path):
    from implicitbias.claims import Context

    ev = evidence(COLLAPSED)
    ctx = Context(store=None, out=tmp_path)
    text = CLAIM.render(ctx, ev, judged(CLAIM, ev))
    assert (tmp_path / "figures" / "c7_sgd.png").exists() and "held-out from clock" in text
    csv = (tmp_path / "figures" / "c7_sgd.csv").read_text().splitlines()
    assert len(csv) == 1 + len(GRID) and csv[0].startswith("group,clock,epochs")


# -- operating characteristics -------------------------------------------------------------------
def _world_draws(points, mean, noise, draws, seed):
    rng = np.random.default_rng(seed)
    for _ in range(draws):
        y = mean + noise * rng.standard_normal(len(mean))
        yield [{**p, "spread": {**p["spread"], "estimate": float(v)}} for p, v in zip(points, y)]


def _outcome(pts, full):
    if full:
        return judged(CLAIM, CLAIM.family_evidence(pts, "sgd")).verdict
    d = c7.comparators(pts)["difference"]  # the interval the rule reads, without the rest of the evidence
    return "agrees" if d["hi"] < 0 else "disagrees" if d["lo"] > -1 else "inconclusive"


@pytest.mark.parametrize("draws, full", [(60, False), pytest.param(300, True, marks=pytest.mark.slow)])
def test_the_vectorised_simulation_agrees_with_the_rule_run_draw_by_draw(draws, full):
    """The simulated P(disagrees | true) and P(agrees | false) of the BARELY grid (35 splits: the rule's
    own) against the interval-only rule judged on tiers drawn here from the same worlds."""
    points = [point(c, e, s) for (c, e), s in zip(GRID, BARELY)]
    sim = c7.simulate(points, 1.0, sims=2000, level=0.95)
    clock, others = c7.predictors(points)
    true, false = c7.world_means(points, np.array(BARELY), clock, others, sim.true_law, sim.false_law)
    noise = np.array([c7.spread_noise(p) for p in points])
    disagree = np.mean([_outcome(pts, full) == "disagrees" for pts in _world_draws(points, true, noise, draws, 5)])
    agree = np.mean([_outcome(pts, full) == "agrees" for pts in _world_draws(points, false, noise, draws, 6)])
    for drawn, simulated in ((disagree, sim.oc.disagree_true), (agree, sim.oc.agree_false)):
        se = math.sqrt(max(simulated * (1 - simulated), 0.01) / draws)
        assert abs(drawn - simulated) < 4 * se, (drawn, simulated)
    assert 0.1 < sim.oc.disagree_true < 0.9  # a real rate, not a degenerate 0 or 1


def test_the_worlds_hold_the_same_values_ordered_by_the_clock_and_by_the_strongest_law():
    points = [point(c, e, s) for (c, e), s in zip(GRID, BY_EPOCHS)]
    clock, others = c7.predictors(points)
    y = np.array(BY_EPOCHS)
    _, (true_law,), (false_law,), _ = c7.differences(clock, others, y[None], half_splits(len(y))[0])
    true, false = c7.world_means(points, y, clock, others, true_law, false_law)
    assert false.tolist() == pytest.approx(BY_EPOCHS)  # epochs govern these data exactly
    clocks = [c for c, _ in GRID]
    for i in range(len(GRID)):
        for j in range(len(GRID)):
            if clocks[i] == clocks[j]:
                assert true[i] == pytest.approx(true[j])  # equal clocks, equal spreads
            elif clocks[i] < clocks[j]:
                assert true[i] >= true[j] - 1e-12  # falling with the clock (rho of these data is 0)
    assert sorted(true) == pytest.approx(sorted(false), abs=3.0) and np.mean(true) == pytest.approx(np.mean(false))


def test_the_interval_level_is_the_narrowest_that_covers():
    points = [point(c, e, s) for (c, e), s in zip(GRID, NOISY)]
    sim = c7.simulate(points, 1.0, sims=400)
    tol = 2 * math.sqrt(0.95 * 0.05 / 400)
    levels = [1 - 2 * t for t in c7.ms.TAILS]
    for level in levels[: levels.index(sim.level)]:
        assert c7.simulate(points, 1.0, sims=400, level=level).coverage < 0.95 - tol
    assert sim.covered == (sim.coverage >= 0.95 - tol)
    assert sim.covered or sim.level == levels[-1]


def test_underpowered_names_the_fewest_seeds_whose_simulated_rates_are_within_five_percent():
    v = CLAIM.judge(evidence(BARELY))
    e = v.numbers["estimate"]
    assert v.verdict == "inconclusive" and "underpowered" in v.reason and f"seeds needed: {e.seeds_needed}" in v.reason
    points = [point(c, e_, s) for (c, e_), s in zip(GRID, BARELY)]
    level = v.numbers["simulation"].level
    rates = lambda n: c7.simulate(points, 1.0, c7.SEARCH_SIMS, n=n, level=level).oc.wrong  # noqa: E731
    assert rates(e.seeds_needed) <= 0.05 < rates(e.seeds_needed - 1)
    assert e.agree_false <= 0.05 < e.disagree_true and e.n == 4 and 0 < e.coverage <= 1
