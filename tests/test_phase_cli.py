"""`implicitbias phase` and the report's phase section: the atlas written, the store reused, bad input.

The CLI's CSV is compared with the records of the store (not with itself): one row per cell,
verdicts of the theorem's cells, the boundary table; the npz holds one explicit matrix per cell
whose margins and objective are recomputed here.  The report section is layout only: its
verdicts come from the claims of ``implicitbias.claims`` (run on small configs here).
"""

import csv
import subprocess
import sys

import numpy as np
import pytest

from implicitbias.claims.depth import nc_shallow, phase_atlas, theorem_3_1, theorem_3_2
from implicitbias.cli import main
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.numerics.maxmargin.phase import KIND
from implicitbias.report import build_report
from implicitbias.report.sections import phase as section
from implicitbias.store import Store


def test_phase_command_writes_the_atlas_and_reuses_the_store(tmp_path, capsys):
    db, out = tmp_path / "s.sqlite", tmp_path / "out"
    args = ["--store", str(db), "phase", "--K-max", "6", "--L-max", "3", "--L-extra", "2.5",
            "--out", str(out), "--executor", "inline", "--no-progress"]
    assert main(args) == 0
    assert "L*(K)" in capsys.readouterr().out
    rows = list(csv.DictReader((out / "phase_cells.csv").open()))
    assert len(rows) == 5 * 4  # K = 2..6, L = 1, 2, 2.5, 3
    verdict = {(int(r["K"]), r["L"]): r for r in rows}
    assert verdict[(6, "2")]["verdict"] == "NC suboptimal" and verdict[(4, "3")]["verdict"] == "NC suboptimal"
    assert verdict[(6, "2")]["structure"] == "cross-polytope" and verdict[(4, "3")]["structure"] == "regular 4-gon"
    assert all(verdict[(K, "1")]["verdict"] == "NC optimal" for K in range(2, 7))
    assert all(verdict[(3, L)]["verdict"] == "NC optimal" for L in ("2", "2.5", "3"))  # K = 3 certified
    atlas = np.load(out / "phase_atlas.npz")
    assert len(atlas["keys"]) == 20 and set(atlas["names"]) >= {"NC (simplex)", "cross-polytope"}
    for r in rows:
        Z = atlas[r["matrix"]]
        assert margins(Z).min() == pytest.approx(1.0, abs=1e-9)
        s = np.linalg.svd(Z, compute_uv=False)
        assert np.sum(s[s > 1e-9 * s[0]] ** float(r["p"])) == pytest.approx(float(r["objective"]), rel=1e-9)
        assert float(r["lower_bound"]) <= float(r["objective"]) * (1 + 1e-12)
    bound = {int(r["K"]): r["L_star"] for r in csv.DictReader((out / "phase_boundary.csv").open())}
    assert bound[6] == "2" and bound[4] == "3" and bound[3] == ""
    for name in ("phase_heatmap.png", "phase_heatmap.csv", "phase_structures.png", "phase_codes_rank2.png",
                 "phase_codes_rank3.png", "phase_crossovers.csv", "phase.md"):
        assert (out / name).stat().st_size > 0
    with Store(db) as store:
        assert store.counts(KIND) == {"done": 5}  # one column per K
    assert main(args) == 0  # second run: everything cached
    with Store(db) as store:
        assert store.counts(KIND) == {"done": 5}


def test_figures_drawn_on_the_process_pool_are_the_ones_drawn_here(tmp_path, capsys):
    """``--executor process`` draws the four figures on the pool's workers (``atlas.write_outputs``'s
    ``executor``); from the same stored columns they equal, byte for byte, the ones drawn in this process."""
    db = tmp_path / "s.sqlite"
    base = ["--store", str(db), "phase", "--K-max", "5", "--L-max", "3", "--no-progress"]
    assert main([*base, "--out", str(tmp_path / "here"), "--executor", "inline"]) == 0
    here = capsys.readouterr().out
    assert main([*base, "--out", str(tmp_path / "pool"), "--executor", "process", "--workers", "2"]) == 0
    assert capsys.readouterr().out.replace("pool", "here") == here  # the same files, listed in the same order
    names = sorted(f.name for f in (tmp_path / "here").iterdir())
    assert names == sorted(f.name for f in (tmp_path / "pool").iterdir())
    assert {"phase_codes_rank2.png", "phase_codes_rank3.png", "phase_heatmap.png", "phase_structures.png"} <= set(names)
    for name in names:
        if name.endswith((".png", ".csv", ".md")):
            assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "pool" / name).read_bytes(), name


def test_write_outputs_submits_every_figure_to_the_executor_it_is_given(tmp_path):
    from implicitbias.atlas import draw_codes, draw_heatmap, draw_structure_map, write_outputs
    from implicitbias.executors import InlineExecutor
    from implicitbias.numerics.maxmargin.phase import column_config, phase_column

    class Spy(InlineExecutor):
        def __init__(self):
            self.calls = []

        def submit(self, fn, /, *args, **kwargs):
            self.calls.append(fn)
            return super().submit(fn, *args, **kwargs)

    spy = Spy()
    paths = write_outputs([phase_column(column_config(K, [1, 2, 3])) for K in (4, 5)], tmp_path, executor=spy)
    assert sorted(f.__name__ for f in spy.calls) == sorted(f.__name__ for f in (draw_codes, draw_codes, draw_heatmap,
                                                                                draw_structure_map))
    assert {"heatmap", "structures", "codes_rank2"} <= set(paths) and all(p.exists() for p in paths.values())


@pytest.mark.parametrize(
    "extra, name",
    [
        (["--K-max", "1"], "--K-max"),
        (["--L-max", "0"], "--L-max"),
        (["--L-extra", "nan"], "L"),
        (["--L-extra", "0.5"], "L"),
        (["--L-extra", "two"], "--L-extra"),
        (["--effort", "0"], "--effort"),
        (["--K-max", "256", "--L-max", "10000"], "grid"),
        (["--K-min", "9", "--K-max", "5"], "--K-min"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, extra, name):
    status = main(["--store", str(tmp_path / "s.sqlite"), "phase", "--out", str(tmp_path / "o"), "--executor", "inline", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and f"{name} must" in err[0]


def test_bad_input_from_a_shell_has_no_traceback(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "implicitbias", "--store", str(tmp_path / "s.sqlite"), "phase", "--K-max", "1"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


# slow (21 s): the default report (CI's main job) writes this section; the CLI's atlas is tested above
@pytest.mark.slow
def test_report_section_is_layout_and_its_claims_agree(tmp_path, monkeypatch, store):
    monkeypatch.setattr(theorem_3_1.CLAIM, "configs", {"default": theorem_3_1.Config(kmax=6, lmax=3, local_Ks=(4,),
                                                                                    local_Ls=(2,), directions=5)})
    monkeypatch.setattr(theorem_3_2.CLAIM, "configs", {"default": theorem_3_2.Config(Ks=(4,), depths=(30,))})
    monkeypatch.setattr(nc_shallow.CLAIM, "configs", {"default": nc_shallow.Config(Ks=(2, 3), search_Ks=())})
    monkeypatch.setattr(phase_atlas, "CENSUS", {"default": ((4,), (3,), 2)})
    monkeypatch.setattr(phase_atlas, "LARGE_K", {"default": 5})
    monkeypatch.setattr(phase_atlas, "LARGE_DEPTHS", (1, 3))
    assert not hasattr(section, "build")
    report = build_report(tmp_path / "r", store, only=["phase"], progress=False)
    assert {c.claim: c.verdict for c in report.claims} == {"Theorem 3.1": "agrees", "Theorem 3.2": "agrees", "L = 1": "agrees"}
    text = report.path.read_text()
    assert "L*(K)" in text and "structure map" in text and "GD census" in text and "A large-K row, K = 5" in text
    for name in ("phase_structures.png", "phase_heatmap.png", "phase_gd_census.png"):
        assert (tmp_path / "r" / "figures" / "phase" / name).exists()
