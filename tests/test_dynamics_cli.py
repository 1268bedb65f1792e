"""``implicitbias dynamics``: trajectory and basin figures (PNG + CSV), cached runs, clear errors."""

import csv

import pytest

from implicitbias.cli import main
from implicitbias.store import Store


def read_csv(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def test_trajectory_writes_figure_and_csv_and_is_cached(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    args = [
        "--store",
        str(store),
        "dynamics",
        "trajectory",
        "--K",
        "4",
        "--L",
        "1,3",
        "--margin",
        "8",
        "--scale",
        "0.01",
        "--out",
        str(tmp_path),
    ]
    assert main(args) == 0
    png = tmp_path / "dynamics_trajectory.png"
    assert png.stat().st_size > 10_000
    rows = read_csv(png.with_suffix(".csv"))
    assert {r["L"] for r in rows} == {"1", "3"}
    shallow = [r for r in rows if r["L"] == "1"]
    assert float(shallow[-1]["effective_rank"]) == pytest.approx(3.0, abs=0.05)  # L = 1 ends at NC (rank K - 1)
    assert float(shallow[-1]["margin"]) == pytest.approx(8.0, rel=1e-6)
    assert "| L |" in capsys.readouterr().out
    with Store(store) as s:
        assert s.counts("dynamics.trajectory") == {"done": 2}
    assert main(args) == 0  # second run reads the store
    with Store(store) as s:
        assert s.counts("dynamics.trajectory") == {"done": 2}


def test_basin_map(tmp_path):
    args = ["--store", str(tmp_path / "s.sqlite"), "dynamics", "basin", "--K", "4", "--L", "1,2", "--scales", "0.01,1"]
    assert main([*args, "--perturbations", "0.3", "--starts", "2", "--out", str(tmp_path)]) == 0
    rows = read_csv(tmp_path / "dynamics_basin.csv")
    assert len(rows) == 4
    assert all(float(r["fraction_at_nc"]) == 1.0 for r in rows if r["L"] == "1")


@pytest.mark.parametrize(
    "extra, name",
    [
        (["trajectory", "--K", "6"], "--K must be a power of two"),
        (["trajectory", "--L", "0,2"], "--L must be"),
        (["trajectory", "--L", "1,x"], "--L must be a comma-separated"),
        (["trajectory", "--scale", "nan"], "--scale must be"),
        (["basin", "--perturbations", "0.1,inf"], "--perturbations must be"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, extra, name):
    assert main(["--store", str(tmp_path / "s.sqlite"), "dynamics", *extra, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and name in err[0]


@pytest.mark.parametrize("what", ["trajectory", "basin"])
def test_k_beyond_the_measured_cap_is_one_line(tmp_path, capsys, what):
    """K = 1024 runs for minutes (benchmarks/bench_trajectory_k.py): refused before anything starts."""
    assert main(["--store", str(tmp_path / "s.sqlite"), "dynamics", what, "--K", "1024", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "K must be an integer in [2, 512], got 1024" in err, err
