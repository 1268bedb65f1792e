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
