"""Groups, per-seed spreads, seed-mean spreads with bootstrap CIs, horizons and roles (Spec B analysis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spec_b_records import BASE, group, record, remembering

from implicitbias.claims.forgetting import roles
from implicitbias.validation.analysis import group_runs, seed_tables, spread_of_means, summarise
from implicitbias.validation.groups import group_by_setting, setting_key


def test_group_by_setting_ignores_only_sigma_and_seed():
    a = {"lr": 0.1, "sigma_w": 1.0, "seed": 0}
    assert setting_key(a) == setting_key({**a, "sigma_w": 2.0, "seed": 5}) != setting_key({**a, "lr": 0.2})
    assert group_by_setting([a, {**a, "lr": 0.2}, {**a, "seed": 1}]) == [[a, {**a, "seed": 1}], [{**a, "lr": 0.2}]]


@settings(max_examples=15, deadline=None)
@given(accs=st.lists(st.lists(st.floats(0.1, 1.0), min_size=3, max_size=3), min_size=3, max_size=4))
def test_spreads_per_seed_and_of_seed_means(accs):
    """accs[seed][i] at sigma_w SIGMAS[i]: per-seed spread = max - min; judged spread = range of the means."""
    sigmas = (0.25, 1.0, 2.5)
    (g,) = group_runs(group(accuracy=lambda s, k: accs[k][sigmas.index(s)], sigmas=sigmas, seeds=range(len(accs))))
    s = summarise(g)
    for row in s.per_seed:
        a = accs[row.seed]
        assert row.spread_selected == pytest.approx(100 * (max(a) - min(a)))
    means = [sum(a[i] for a in accs) / len(accs) for i in range(3)]
    ci = s.spread_selected
    assert ci.estimate == pytest.approx(100 * (max(means) - min(means)))
    assert ci.lo <= ci.estimate <= ci.hi and ci.n == len(accs)
    assert s.norm_slope.estimate == pytest.approx(1.0)


def test_seed_mean_spread_is_below_the_per_seed_noise_floor():
    """Pure noise (no sigma_w effect): per-seed spreads are large, the seed-mean spread much smaller."""
    noise = {(s, k): 0.02 * (((7 * k + 3 * i) % 5) - 2) for i, s in enumerate((0.25, 0.5, 1.0, 2.5)) for k in range(4)}
    (g,) = group_runs(group(accuracy=lambda s, k: 0.5 + noise[(s, k)]))
    s = summarise(g)
    assert min(r.spread_selected for r in s.per_seed) >= 6
    assert s.spread_selected.estimate < 3


def test_horizon_truncates_every_history():
    runs = group({"epochs": 6}, accuracy=lambda s, k: (0.7 - 0.1 * s, 0.5), selected_epoch=3)
    (g,) = group_runs(runs)
    early, full = summarise(g, horizon=2), summarise(g)
    assert early.horizon == 2 and full.horizon == 6
    assert early.spread_selected.estimate == pytest.approx(0.0)  # test acc 0.3 everywhere before epoch 3
    assert full.spread_final.estimate == pytest.approx(0.0)
    assert full.spread_selected.estimate == pytest.approx(100 * 0.1 * 2.25)
    assert early.clocks["T_SGD"] < full.clocks["T_SGD"]


def test_interpolating_only_leaves_out_runs_below_99_5_percent():
    runs = group(accuracy=remembering, tau=lambda s, k: None if s == 2.5 else 2,
                 train_acc=lambda s, k: 0.9 if s == 2.5 else 1.0)
    (g,) = group_runs(runs)
    all_runs, interp = summarise(g), summarise(g, interpolating_only=True)
    assert all_runs.n_interpolated == interp.n_interpolated == 12 and not interp.all_interpolate
    assert interp.spread_selected.estimate < all_runs.spread_selected.estimate
    assert all(2.5 not in t for t in seed_tables(interp).values())


def test_a_summary_is_computed_once_per_group_and_horizon_and_so_are_the_seed_halves():
    """Every caller shares one frozen summary per (horizon, interpolating_only); the seed halves are the
    first len // 2 sorted seeds and the rest, built once, each summarised from its own runs only."""
    (g,) = group_runs(group(accuracy=remembering, seeds=(3, 1, 4, 0, 2)))
    s = summarise(g)
    assert summarise(g) is s and summarise(g, horizon=s.horizon) is s and summarise(g, horizon=2) is not s
    first, second = g.seed_halves
    assert g.seed_halves[0] is first and (first.seeds, second.seeds) == ([0, 1], [2, 3, 4])
    assert summarise(first).seeds == (0, 1) and summarise(second).n_runs == 3 * len(g.sigma_w)
    assert summarise(first).spread_selected.n == 2 and summarise(first) is summarise(first)


def test_spread_of_means_handles_missing_sigma_and_batches():
    nan = float("nan")
    assert spread_of_means(np.array([[0.5, 0.3], [0.7, nan]])) == pytest.approx(0.6 - 0.3)
    assert np.isnan(spread_of_means(np.array([[0.5, nan]])))  # one sigma_w only
    batch = np.array([[[0.5, 0.3], [0.7, 0.1]], [[0.2, 0.2], [0.4, 0.4]]])  # two resamples of two seeds
    np.testing.assert_allclose(spread_of_means(batch), [0.6 - 0.2, 0.0])


def test_roles_of_a_tier_like_set_of_groups():
    blocks = {"base": {}, "long": {"epochs": 60, "eval_every": 5}, "b128": {"batch_size": 128},
              "high": {"lr": 1.0}, "l2": {"weight_decay": 1e-2}, "adam": {"optimizer": "adam", "lr": 1e-3},
              "deep": {"arch": "resnet56"}, "momentum": {"optimizer": "sgd_momentum"}}
    runs = [record({**BASE, **over, "sigma_w": s, "seed": 0}, selected=0.5) for over in blocks.values() for s in (0.5, 1)]
    groups = group_runs(runs)
    r = roles(groups)
    label = {g.setting["epochs"] if name == "long" else name: g for name, g in zip(blocks, groups)}
    assert r.baseline is label["base"]
    assert r.longer == [label[60]]
    assert r.adaptive == [label["adam"]]
    assert r.forgetters == [label["high"], label["l2"]]
    assert r.batch_series == [label["base"], label["b128"]]
    assert r.deep == [label["deep"]]


def test_analyse_judges_the_report_claims_on_a_sweep(tmp_path, capsys):
    from implicitbias.cli import main

    spec = tmp_path / "s.toml"
    spec.write_text(
        'name = "mini"\n[base]\ndataset = "synthetic"\ndata_size = 200\narch = "mlp"\nwidth = 0.0625\nepochs = 2\n'
        'batch_size = 32\nsigma_w = [0.5, 2.0]\nseed = [0, 1, 2]\n'
        '[[grid]]\noptimizer = "sgd"\nlr = 0.1\n[[grid]]\noptimizer = "adam"\nlr = 0.001\n[options]\nthreads = 1\nbatched = true\n')
    store = str(tmp_path / "s.sqlite")
    assert main(["--store", store, "sweep", str(spec), "--no-progress"]) == 0
    out = tmp_path / "analysis"
    assert main(["--store", store, "analyse", str(spec), "--out", str(out)]) == 0
    text = (out / "analysis.md").read_text()
    assert "sweep mini: 12 of 12 runs finished" in text
    for claim in ("C1", "C2", "C3", "C4", "C5", "C6", "C7"):
        assert f"| {claim} |" in text or f"| {claim} (" in text  # C7 judged per optimiser family: "C7 (label)"
    assert "| C6 |" in text and "not run" in text
    assert (out / "figures" / "c1_runs.png").exists() and (out / "figures" / "analysis_spread_vs_clock.csv").exists()
    capsys.readouterr()
