"""`implicitbias phase` and the report section: outputs written, cache reused, bad input exits 2.

The CLI's CSV is compared with the records of the store (not with itself): one row per cell,
verdicts of the theorem's cells, the boundary table of the (K, L) grid.
"""

import csv
import subprocess
import sys

import pytest

from implicitbias.cli import main
from implicitbias.numerics.maxmargin.phase import KIND
from implicitbias.report import build_report
from implicitbias.report.sections import phase as section
from implicitbias.store import Store


def test_phase_command_writes_tables_and_reuses_the_store(tmp_path, capsys):
    db, out = tmp_path / "s.sqlite", tmp_path / "out"
    args = ["--store", str(db), "phase", "--kmax", "6", "--lmax", "3", "--depths", "2.5",
            "--out", str(out), "--executor", "inline", "--no-progress"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "L*(K)" in printed
    rows = list(csv.DictReader((out / "phase_cells.csv").open()))
    assert len(rows) == 5 * 4  # K = 2..6, L = 1, 2, 2.5, 3
    verdict = {(int(r["K"]), r["L"]): r["verdict"] for r in rows}
    assert verdict[(6, "2")] == "NC suboptimal" and verdict[(4, "3")] == "NC suboptimal"
    assert all(verdict[(K, "1")] == "NC optimal" for K in range(2, 7))
    bound = {int(r["K"]): r["L_star"] for r in csv.DictReader((out / "phase_boundary.csv").open())}
    assert bound[6] == "2" and bound[4] == "3"
    for name in ("phase_heatmap.png", "phase_heatmap.csv", "phase.md"):
        assert (out / name).stat().st_size > 0
    with Store(db) as store:
        assert store.counts(KIND) == {"done": 20}
    assert main(args) == 0  # second run: everything cached
    with Store(db) as store:
        assert store.counts(KIND) == {"done": 20}


@pytest.mark.parametrize(
    "extra, name",
    [
        (["--kmax", "1"], "kmax"),
        (["--lmax", "0"], "lmax"),
        (["--depths", "nan"], "L"),
        (["--depths", "0.5"], "L"),
        (["--depths", "two"], "depths"),
        (["--effort", "0"], "effort"),
        (["--kmax", "256", "--lmax", "10000"], "grid"),
        (["--kmin", "9", "--kmax", "5"], "kmin"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, extra, name):
    status = main(["--store", str(tmp_path / "s.sqlite"), "phase", "--out", str(tmp_path / "o"), "--executor", "inline", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and f"{name} must" in err[0]


def test_bad_input_from_a_shell_has_no_traceback(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "implicitbias", "--store", str(tmp_path / "s.sqlite"), "phase", "--kmax", "1"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_report_section_claims(tmp_path, monkeypatch, store):
    monkeypatch.setattr(section, "GRID", {"default": (7, 4)})
    monkeypatch.setattr(section, "LIMIT_KS", {"default": range(4, 6)})
    monkeypatch.setattr(section, "LIMIT_DEPTHS", (30,))
    report = build_report(tmp_path / "r", store, only=["phase"], progress=False)
    assert {c.claim: c.verdict for c in report.claims} == {
        "Theorem 3.1": "agrees",
        "Theorem 3.2": "agrees",
        "L = 1": "agrees",
    }
    assert "L*(K)" in report.path.read_text()
    assert (tmp_path / "r" / "figures" / "phase" / "phase_heatmap.png").exists()
