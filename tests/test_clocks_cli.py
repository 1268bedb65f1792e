"""``implicitbias clocks`` and ``implicitbias flows``: printed values and one-line errors."""

import re
import subprocess
import sys

import pytest

from implicitbias.cli import main


def test_clocks_prints_per_epoch_and_cumulative(capsys):
    # N = 1000, b = 100: 10 steps/epoch, lr 0.1: T_SGD 1e-3, T_adapt 1 and T_L2 1e-2 per epoch
    assert main(["clocks", "--optimizer", "sgd", "--lr", "0.1", "--batch-size", "100", "--n-train", "1000",
                 "--epochs", "4", "--weight-decay", "0.01", "--every", "1"]) == 0
    out = capsys.readouterr().out
    assert "| 4 | 0.001 | 0.01 | 1 | 0.004 | 0.04 | 4 |" in out
    assert "governing clock for sgd: T_L2" in out


def test_clocks_with_a_cosine_schedule(capsys):
    # 2 steps in total: lr 1 then (1 + cos(pi/2))/2 = 1/2: T_adapt = 1.5, T_SGD = 1.25 / b
    assert main(["clocks", "--optimizer", "adam", "--lr", "1", "--schedule", "cosine", "--batch-size", "2",
                 "--n-train", "4", "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"T_SGD = 0\.625, T_L2 = 0, T_adapt = 1\.5; governing clock for adam: T_adapt", out)


def test_flows_prints_the_derived_heavy_ball_flow(capsys):
    assert main(["flows", "--optimizer", "sgd_momentum"]) == 0
    out = capsys.readouterr().out
    assert "f_0[theta] = Derivative(L(theta), theta)/(beta - 1)" in out
    assert main(["flows", "--optimizer", "adam", "--latex"]) == 0
    assert r"\frac{d \theta}{dt}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, name",
    [
        (["clocks", "--lr", "-1"], "--lr"),
        (["clocks", "--batch-size", "100", "--n-train", "50"], "--batch-size"),
        (["clocks", "--optimizer", "adamx"], "--optimizer"),
        (["clocks", "--schedule", "linear"], "--schedule"),
        (["flows", "--optimizer", "adamx"], "--optimizer"),
        (["flows", "--order", "7"], "--order"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, name, capsys):
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"error: {name} must" in lines[0]


def test_bad_input_from_the_shell_has_no_traceback():
    res = subprocess.run([sys.executable, "-m", "implicitbias", "clocks", "--batch-size", "0"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
