"""C7 (memory changes along each family's clock): the direction test on synthetic records, every
outcome of the rule, its premises, its simulated gate, and families never pooled."""

import math

import pytest
from spec_b_records import group, judged, moved

from implicitbias.claims.forgetting import c7_clocks_collapse_the_spreads as c7
from implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads import CLAIM, memory_table
from implicitbias.numerics.metrics import clock_direction as cd
from implicitbias.validation.analysis import group_runs, invariant_slopes

SPE = 16  # spec_b_records: 1,000 training images at b 64
CLOCKS = (0.05, 0.2, 0.8)
EPOCHS = (3, 6, 12)


def logistic(v):
    return 1 / (1 + math.exp(-v))


def grid_groups(memory, optimizer="sgd", noise=0.002, clocks=CLOCKS, epochs=EPOCHS, seeds=(0, 1, 2, 3)):
    """A crossed grid of clock lines x horizons whose final kernel norms scale as sigma_w^m with
    m = memory(clock, steps) plus a seed-dependent wobble: each seed's radial memory is m + wobble."""
    runs = []
    for i, (t, e) in enumerate((t, e) for t in clocks for e in epochs):
        lr = math.sqrt(t * 64 / (SPE * e)) if optimizer == "sgd" else t / (SPE * e)
        m = memory(t, SPE * e)
        runs += group({"optimizer": optimizer, "lr": lr, "epochs": e}, accuracy=lambda s, k: 0.6, seeds=seeds,
                      norm0=lambda s, k: 10.0 * s,
                      norm1=lambda s, k, m=m, i=i: 10.0 * s ** (m + noise * wobble(i, k)))
    return group_runs(runs)


def wobble(i, k):
    """A fixed seed effect in {-2, ..., 2} that differs between groups."""
    return (3 * k + 7 * i * i) % 5 - 2


def by_clock(t, steps):
    return logistic(1.0 - 0.6 * math.log(t))


def by_steps(t, steps):
    return logistic(3.0 - 0.6 * math.log(steps))


def evidence(groups):
    (ev,) = CLAIM.evidences(groups)
    return ev


SYNTHETIC_VERDICTS = [  # every outcome, judged by the intervals and the premises (no simulation)
    ("agrees", evidence(grid_groups(by_clock))),
    ("disagrees", evidence(grid_groups(by_steps))),
    ("inconclusive", evidence(grid_groups(lambda t, s: logistic(0.2 - 0.2 * math.log(t)), noise=0.08))),
    ("inconclusive", evidence(grid_groups(by_clock, epochs=(6,), clocks=(0.05, 0.1, 0.2, 0.4)))),
    ("not run", CLAIM.evidences([])[0]),
]


@pytest.mark.parametrize("expected, ev", SYNTHETIC_VERDICTS, ids=[f"{e}-{i}" for i, (e, _) in enumerate(SYNTHETIC_VERDICTS)])
def test_verdict(expected, ev):
    assert judged(CLAIM, ev).verdict == expected


def test_radial_memory_is_the_per_seed_slope_of_the_final_norm():
    (g, *_) = grid_groups(by_clock)
    expected = by_clock(CLOCKS[0], SPE * EPOCHS[0])
    mem = invariant_slopes(g, "end")
    assert sorted(mem) == [0, 1, 2, 3]
    for k, v in mem.items():
        assert v == pytest.approx(expected + 0.002 * wobble(0, k), abs=1e-9)
    seeds, table = memory_table(grid_groups(by_clock))
    assert seeds == [0, 1, 2, 3] and len(table) == 4 and len(table[0]) == 9


@pytest.mark.parametrize("memory, expected", [(by_clock, "agrees"), (by_steps, "disagrees")])
def test_verdict_by_the_intervals(memory, expected):
    v = judged(CLAIM, evidence(grid_groups(memory)))
    assert v.verdict == expected
    assert v.numbers["bound"] == pytest.approx(22.5) and v.numbers["lo"] <= v.numbers["angle"] <= v.numbers["hi"]


def test_disagrees_names_the_steps():
    v = judged(CLAIM, evidence(grid_groups(by_steps)))
    assert "steps" in v.numbers["nearest"].split(" / ") and abs(v.numbers["angle"]) > 80


def test_agrees_with_the_simulated_gate():
    v = judged(CLAIM, evidence(grid_groups(by_clock)), sims=60)
    assert v.verdict == "agrees"
    assert {oc.noise for oc in v.numbers["oc"]} == set(cd.NOISES) and all(oc.wrong <= 0.05 for oc in v.numbers["oc"])
    assert "P(agrees | rival)" in v.measured and "exponent ratios" in v.measured


def test_noisy_memory_is_inconclusive():
    v = judged(CLAIM, evidence(grid_groups(lambda t, s: logistic(0.2 - 0.2 * math.log(t)), noise=0.08)))
    assert v.verdict == "inconclusive" and "straddles" in v.reason


def test_flat_memory_has_no_direction():
    v = judged(CLAIM, evidence(grid_groups(lambda t, s: 0.5 + 0.001 * math.log(t))))
    assert v.verdict == "inconclusive" and "min_change" not in v.reason and "no direction" in v.reason


def test_a_grid_that_does_not_cross_clock_and_steps_is_untestable():
    groups = grid_groups(by_clock, epochs=(6,), clocks=(0.05, 0.1, 0.2, 0.4))
    v = judged(CLAIM, evidence(groups))
    assert v.verdict == "inconclusive" and "untestable grid" in v.reason


def test_too_few_seeds():
    v = judged(CLAIM, evidence(grid_groups(by_clock, seeds=(0, 1))))
    assert v.verdict == "inconclusive" and "complete seeds" in v.reason



def test_three_seeds_are_enough():
    v = judged(CLAIM, evidence(grid_groups(by_clock, seeds=(0, 1, 2))))
    assert CLAIM.threshold("min_seeds") == 3 and "complete seeds" not in v.reason


@pytest.mark.parametrize("change, decides", [(0.09, False), (0.11, True)])
def test_the_minimum_change_is_0_1_a_change_10_percent_either_side_decides(change, decides):
    """The bound moved by 20% (0.08 or 0.12) flips one of these: memory rising linearly in log clock by
    0.09 or 0.11 over the grid (the group means, read off the table here, within 0.005 of that)."""
    span = math.log(CLOCKS[-1] / CLOCKS[0])
    ev = evidence(grid_groups(lambda t, s: 0.5 + change * math.log(t / CLOCKS[0]) / span, noise=0.0005))
    means = [sum(col) / len(col) for col in zip(*ev.data.table)]
    assert max(means) - min(means) == pytest.approx(change, abs=0.005)
    assert CLAIM.threshold("min_change") == 0.1
    assert ("no direction" not in judged(CLAIM, ev).reason) == decides


def test_underpowered_when_the_simulation_says_so(monkeypatch):
    def weak(design, table, sims=400, n=None, noise="normal", resamples=400, level=None, seed=0, fraction=0.5):
        return cd.OC(0.5, 0.2 if (n or 4) < 16 else 0.01, 0.0, "steps", 0.95, level or 0.95, sims, n or 4, noise)

    monkeypatch.setattr(cd, "simulate_levels", lambda design, table, sims=400, noise="normal", fraction=0.5: [
        weak(design, table, sims, noise=noise, level=level) for level in cd.LEVELS])
    monkeypatch.setattr(cd, "simulate", weak)
    v = judged(CLAIM, evidence(grid_groups(by_clock)), sims=10)
    assert v.verdict == "inconclusive" and "underpowered" in v.reason and "seeds needed: 16" in v.reason
    assert v.numbers["estimate"].seeds_needed == 16


def test_the_bound_is_used():
    """Halving the bound fraction makes the clock's own interval (about 0 +- a few degrees) still inside;
    a fraction near 0 leaves it straddling."""
    ev = evidence(grid_groups(by_clock, noise=0.01))
    assert moved(CLAIM, ev, "bound_fraction", [0.5, 0.001]) == ["agrees", "inconclusive"]


def test_families_are_never_pooled():
    evs = CLAIM.evidences(grid_groups(by_clock) + grid_groups(by_clock, optimizer="adam"))
    assert [e.data.family for e in evs] == ["sgd", "adaptive"]
    assert [e.data.clock for e in evs] == ["T_SGD", "T_adapt"]
    assert all(len(e.data.points) == 9 for e in evs)


def test_adaptive_optimisers_are_tested_on_their_own_lines():
    """Adam and Muon share T_adapt but are two evidences, never pooled; SGD's optimisers share one."""
    evs = CLAIM.evidences(grid_groups(by_clock, optimizer="muon") + grid_groups(by_clock, optimizer="adam"))
    assert [e.label for e in evs] == ["adaptive (adam)", "adaptive (muon)"]
    assert [e.data.clock for e in evs] == ["T_adapt", "T_adapt"]
    assert all(len(e.data.points) == 9 for e in evs)


def test_not_run_without_groups():
    assert CLAIM.judge(CLAIM.evidences([])[0]).verdict == "not run"


def test_the_default_grid_is_crossed_with_the_pre_registered_bounds():
    """The packaged grid (clock_lines.toml): each family's design crosses clock and steps, and the bound
    is the one pre-registered from its geometry (SGD 22.5 deg; Adam, AdamW and SGD + L2 13.28 deg:
    AdamW is on the same T_adapt lines as Adam, so sum eta^2 is again the nearest rival)."""
    from implicitbias.claims.forgetting.experiments import experiment

    t = experiment(c7.CLOCK_LINES)
    families = {}
    for configs in t.blocks.values():
        c = configs[0]
        families.setdefault((c["optimizer"], c["weight_decay"] > 0), []).append(
            (c["lr"], c["batch_size"], c["epochs"], c["weight_decay"]))
    half_atan = math.degrees(math.atan(0.5)) / 2
    bounds = {("sgd", False): ("T_SGD", 22.5), ("adam", False): ("T_adapt", half_atan), ("sgd", True): ("T_L2", half_atan),
              ("adamw", True): ("T_adapt", half_atan)}
    assert set(families) == set(bounds)
    for key, axes in families.items():
        clock, bound = bounds[key]
        d = cd.Design.of(clock, axes)
        assert d.crossed
        assert cd.bound_of(cd._rivals(d)) == pytest.approx(bound, abs=1e-6)


def test_one_seed_is_judged_and_drawn(tmp_path):
    """A sweep of one seed (a notebook's first try): inconclusive, and the figure and table still come out."""
    from implicitbias.claims import Context

    ev = evidence(grid_groups(by_clock, seeds=(0,)))
    v = CLAIM.judge(ev)
    assert v.verdict == "inconclusive" and "complete seeds" in v.reason
    text = CLAIM.render(Context(store=None, out=tmp_path, progress=False), ev, v)
    assert "(sd nan)" in text and (tmp_path / "figures/c7_sgd.png").exists()


# -- the rule's conditions one at a time, and its bounds exactly (issue 29 item 7) --------------------

AGREES = SYNTHETIC_VERDICTS[0][1]


def _oc(agree_false=0.01, disagree_true=0.01, agree_true=0.9, coverage=0.96, level=cd.LEVEL):
    return cd.OC(agree_true, disagree_true, agree_false, "rival", coverage, level, 400, 4, "normal")


def _direction(d):
    design = cd.Design.of(d.clock, d.axes)
    return design, cd.direction_test(design, [list(r) for r in d.table], level=cd.LEVEL, fraction=0.5)


def test_a_direction_needs_three_groups_and_three_crossed_groups_are_a_grid():
    two = evidence(grid_groups(by_clock, clocks=(0.05, 0.2), epochs=(6,)))
    assert CLAIM.premise(two.data)[0] == "2 groups in the sgd family: a direction needs a grid"
    (three,) = CLAIM.evidences(grid_groups(by_clock, clocks=(0.05, 0.2), epochs=(3, 6))[:3])
    assert len(three.data.points) == 3 and not CLAIM.premise(three.data)[0].startswith("3 groups")


def test_a_change_of_exactly_the_minimum_is_a_direction_to_test():
    """Column means 0, 0.1 (four seeds of 0.1 sum and divide exactly) and 0.05: a range of exactly 0.1."""
    from dataclasses import replace

    columns = [0.0, 0.1] + [0.05] * (len(AGREES.data.points) - 2)
    d = replace(AGREES.data, table=tuple(tuple(columns) for _ in range(4)))
    assert CLAIM.threshold("min_change") == 0.1 and CLAIM.premise(d)[0] == ""
    d = replace(d, table=tuple(tuple(0.99 * c for c in columns) for _ in range(4)))
    assert CLAIM.premise(d)[0].startswith("radial memory changes by 0.099")


@pytest.mark.parametrize("agree_false, underpowered", [(0.05, False), (0.0501, True)])
def test_a_simulated_wrong_direction_rate_of_exactly_5_percent_is_not_underpowered(monkeypatch, agree_false,
                                                                                   underpowered):
    monkeypatch.setattr(CLAIM, "simulated", lambda design, table, fraction: [_oc(agree_false), _oc()])
    monkeypatch.setattr(c7.mr, "seeds_needed", lambda *a, **k: 12)
    v = CLAIM.judge(AGREES)
    assert v.verdict == ("inconclusive" if underpowered else "agrees")
    assert v.reason.startswith("underpowered") == underpowered and ("seeds needed: 12" in v.reason) == underpowered
    e = v.numbers["estimate"]
    assert (e.agree_false, e.disagree_true, e.inconclusive) == pytest.approx((agree_false, 0.01, 1 - 0.9 - 0.01))


def test_the_stability_on_seed_halves_is_appended_to_the_reason():
    from dataclasses import replace

    v = CLAIM.judge(replace(AGREES, data=replace(AGREES.data, halves=[])))
    assert v.reason.endswith("; stability: not judged on seed halves (a group has fewer than 2 x 3 seeds)")
    assert "stability" not in CLAIM.judge(replace(AGREES, data=replace(AGREES.data, halves=None))).reason


@pytest.mark.parametrize("covering, level", [(0, cd.LEVELS[0]), (2, cd.LEVELS[2]), (None, cd.LEVELS[-1])])
def test_the_simulation_takes_the_narrowest_level_that_covers_else_the_widest(monkeypatch, covering, level):
    def levels(design, table, sims, noise, fraction):
        return [_oc(coverage=0.96 if j == covering else 0.5, level=lev) for j, lev in enumerate(cd.LEVELS)]

    monkeypatch.setattr(c7.cd, "simulate_levels", levels)
    design, _ = _direction(AGREES.data)
    assert {oc.level for oc in CLAIM.simulated(design, AGREES.data.table, 0.5)} == {level}


def test_the_measured_text_marks_the_rivals_that_contain_the_clock():
    from dataclasses import replace

    design, test = _direction(AGREES.data)
    test = replace(test, rivals=(cd.Angle("near", 0.5), cd.Angle("far", 40.0)))
    text = CLAIM.describe(AGREES.data, design, test, test.bound, [])
    assert "rivals' angles: near +0.5 (contains the clock here: not used), far +40.0;" in text


def test_the_exponent_ratios_need_two_exponents_and_a_first_one_not_zero():
    from dataclasses import replace

    design, test = _direction(AGREES.data)
    text = c7._profiles_text(design, test)
    assert text.startswith("; exponent ratios ") and f", {test.clock} " in text.split(" data ")[1]
    assert c7._profiles_text(design, replace(test, exponents=test.exponents[:1])) == ""
    zero = (replace(test.exponents[0], estimate=0.0), *test.exponents[1:])
    assert c7._profiles_text(design, replace(test, exponents=zero)) == ""
