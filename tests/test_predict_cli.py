"""``implicitbias predict``: the paper's recipes, range checks of the calibrated law, the shipped law
against its own data, and bad recipes (one line, exit 2)."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

from implicitbias.cli import main
from implicitbias.validation.clock_law import LAW_FILE, load_law, predict_spread

# sklearn warns when its 'auto' direction rests on a rho whose CI spans zero (small samples)
pytestmark = pytest.mark.filterwarnings("ignore:Confidence interval of the Spearman")

PAPER = ["--batch-size", "128", "--epochs", "200", "--n-train", "50000"]


def _predict(capsys, *argv):
    status = main(["predict", *argv])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_paper_low_lr_sgd_is_outside_the_calibrated_range(capsys):
    status, out, _ = _predict(capsys, "--optimizer", "sgd", "--lr", "0.01", *PAPER)
    # T_SGD = 200 epochs x 391 steps x 0.01^2 / 128
    assert status == 0 and f"T_SGD = {200 * 391 * 1e-4 / 128:.4g}" in out and "T_L2 = 0" in out
    assert "governing clock: T_SGD" in out and "outside the calibrated range, below" in out
    assert "predicted end-of-training spread" not in out


def test_paper_adam_is_above_the_calibrated_range(capsys):
    status, out, _ = _predict(capsys, "--optimizer", "adam", "--lr", "0.001", *PAPER)
    assert status == 0 and "T_adapt = 78.2" in out and "governing clock: T_adapt" in out
    assert "above the largest calibrated value" in out


def test_paper_sgd_l2_gets_a_band_and_the_transfer_caveat(capsys):
    status, out, _ = _predict(capsys, "--optimizer", "sgd", "--lr", "0.01", "--weight-decay", "5e-4", *PAPER)
    law = load_law()["families"]["sgd_l2"]
    clock = 5e-4 * 0.01 * 200 * 391
    assert status == 0 and "governing clock: T_L2" in out
    assert law["range"][0] <= clock <= law["range"][1]  # the shipped law covers the paper's L2 recipe
    assert "predicted end-of-training spread" in out and "transfer, not a measurement" in out
    assert "outside the calibrated range" not in out


LAW = {"calibrated_on": "synthetic", "families": {"sgd": {
    "clock": "T_SGD", "optimizers": ["sgd"], "log_clock_knots": [math.log(0.1), math.log(1.0), math.log(10.0)],
    "spread_knots": [8.0, 5.0, 2.0], "range": [0.1, 10.0], "band": 1.5, "band_quantile": 0.9, "verdict": "agrees",
    "groups": [{}, {}, {}]}}}


@pytest.mark.parametrize("clock, status", [(0.05, "below"), (0.1, "inside"), (10.0, "inside"), (10.5, "above")])
def test_range_checks(clock, status):
    assert predict_spread(LAW, "sgd", 0.0, clock)["status"] == status


def test_inside_the_range_the_law_interpolates_in_log_clock():
    p = predict_spread(LAW, "sgd", 0.0, math.sqrt(0.1))  # halfway between the first two knots in log clock
    assert p["spread"] == pytest.approx(6.5) and p["band"] == pytest.approx([5.0, 8.0])
    assert predict_spread(LAW, "sgd", 0.0, 10.0)["band"] == pytest.approx([0.5, 3.5])
    wide = {**LAW, "families": {"sgd": {**LAW["families"]["sgd"], "band": 3.0}}}
    assert predict_spread(wide, "sgd", 0.0, 10.0)["band"] == pytest.approx([0.0, 5.0])  # a spread is never negative


def test_uncalibrated_family_or_optimiser_gets_no_prediction():
    assert predict_spread(LAW, "adam", 0.0, 1.0)["status"] == "uncalibrated"
    assert predict_spread(LAW, "sgd_momentum", 0.0, 1.0)["status"] == "uncalibrated"
    assert predict_spread(LAW, "sgd", 1e-3, 1.0)["status"] == "uncalibrated"  # decay: family sgd_l2


def test_shipped_law_is_the_isotonic_fit_of_its_own_groups():
    """Refit every family of the shipped file from the groups it lists, with sklearn."""
    law = json.loads(LAW_FILE.read_text())
    assert law["calibrated_on"] and law["families"]
    for name, f in law["families"].items():
        u = np.round(np.log([g["clock"] for g in f["groups"]]), 6)  # equal clocks up to rounding: exact ties
        y = np.array([g["spread"] for g in f["groups"]])
        ref = IsotonicRegression(increasing="auto", out_of_bounds="clip").fit(u, y)
        np.testing.assert_allclose(f["spread_knots"], ref.predict(np.round(f["log_clock_knots"], 6)), atol=1e-9)
        assert len(f["log_clock_knots"]) == len(set(u))
        assert f["range"] == pytest.approx([min(g["clock"] for g in f["groups"]), max(g["clock"] for g in f["groups"])])
        assert f["band"] > 0 and f["verdict"] in ("agrees", "disagrees", "inconclusive")


def test_law_file_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "law.json"
    bad.write_text('{"families": 3}')
    for path in (bad, tmp_path / "missing.json"):
        status, out, err = _predict(capsys, "--law", str(path))
        assert status == 2 and out == "" and err.count("\n") == 1 and "error: --law " in err


RECIPE = st.fixed_dictionaries({
    "--optimizer": st.sampled_from(["sgd", "adam", "muon", "lbfgs", "", "SGD"]),
    "--lr": st.sampled_from(["0.1", "0", "-1", "nan", "inf", "1e308", "x"]),
    "--batch-size": st.sampled_from(["64", "0", "-3", "100000", "2.5"]),
    "--n-train": st.sampled_from(["500", "0", "1", "x"]),
    "--epochs": st.sampled_from(["3", "0", "-1", "1e9"]),
    "--weight-decay": st.sampled_from(["0", "5e-4", "-1", "nan"]),
    "--schedule": st.sampled_from(["constant", "cosine", "linear", ""]),
})


@settings(max_examples=60, deadline=None)
@given(RECIPE)
def test_bad_recipes_are_one_line_exit_2(recipe):
    import contextlib
    import io

    argv = ["predict", *(x for kv in recipe.items() for x in kv)]
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            status = main(argv)
        except SystemExit as e:  # argparse: type errors
            status = e.code
    assert status in (0, 2), argv
    if status == 2:
        assert err.getvalue().count("\n") == 1 and "Traceback" not in err.getvalue(), (argv, err.getvalue())
    else:
        assert "governing clock" in out.getvalue()
