"""Results in a notebook: each shows as a table (``_repr_html_``) or an equation (``_repr_latex_``)
with the values read from an independent route (the stored record, the judged results, the run
records), prints a short ``repr``, and gives a tidy ``to_frame`` / ``to_csv`` equal to its
attributes.  Plots draw where they are told (``ax=``) and never change the user's matplotlib.
"""

import importlib.metadata
import os
import subprocess
import sys
import tomllib
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox
from spec_b_records import group, remembering

import implicitbias as ib
from implicitbias.claims import Evidence, Result, Threshold, Verdict, by_slug
from implicitbias.theory.params import ParameterError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def diagram():
    return ib.phase_diagram(K=range(2, 7), L=range(1, 5))


def table(html: str) -> list[list[str]]:
    """The rows (header first) of the one HTML table in ``html``, cell texts stripped."""
    root = ET.fromstring(html)
    return [[(cell.text or "").strip() for cell in row] for row in root.iter("tr")]


def fields(html: str) -> dict[str, str]:
    """A two-column (field, value) table as a dict."""
    return dict(table(html)[1:])


# -- the phase diagram and its cells ----------------------------------------------------------


def test_diagram_shows_its_grid_of_verdicts(diagram):
    rows = table(diagram._repr_html_())
    header, body = rows[0], rows[1:]
    assert header == ["K \\ L", *map(str, diagram.L)]
    for record in (c for column in diagram.columns for c in column["cells"]):  # the stored records, not the typed cells
        shown = body[diagram.K.index(record["K"])][1 + diagram.L.index(record["L"])]
        rank = record["best"]["rank"]
        assert shown == {"NC suboptimal": f"r{rank}", "NC optimal": "NC", "NC best found": "nc?"}[record["verdict"]]
    assert f"{len(diagram)} cells" in diagram._repr_html_()
    assert len(repr(diagram)) < 200 and "cells=20" in repr(diagram)


def test_cell_shows_its_record(diagram):
    cell = diagram.cell(K=6, L=4)
    shown = fields(cell._repr_html_())
    record = next(c for column in diagram.columns for c in column["cells"] if (c["K"], c["L"]) == (6, 4))  # as stored
    assert shown["verdict"] == record["verdict"] == "NC suboptimal"
    assert shown["structure"] == record["best"]["structure"]["name"]
    assert float(shown["objective"]) == pytest.approx(record["best"]["objective"])
    assert shown["certificate"] == record["certificate"]["kind"]
    assert len(repr(cell)) < 300 and "NC suboptimal" in repr(cell)


def test_diagram_frame_and_csv_are_its_cells(diagram, tmp_path):
    frame = diagram.to_frame()
    assert len(frame) == len(diagram)
    for row, cell in zip(frame.itertuples(index=False), diagram):
        assert (row.K, row.L, row.verdict, row.rank) == (cell.K, cell.L, cell.verdict, cell.rank)
        assert row.objective == cell.value and row.gap == cell.gap
    again = pd.read_csv(diagram.to_csv(tmp_path / "cells.csv"), keep_default_na=False)
    assert list(again.columns) == list(frame.columns) and again["objective"].tolist() == frame["objective"].tolist()
    cell = diagram.cell(K=5, L=3)
    assert cell.to_frame().iloc[0].to_dict() == frame[(frame.K == 5) & (frame.L == 3)].iloc[0].to_dict()


# -- checks, claims, analyses ------------------------------------------------------------------


def _results(*verdicts):
    claim = by_slug()["theorem-3.1"]
    return tuple(
        Result(claim, Evidence(f"check {i}", {"big": list(range(10_000))}, label=f"set {i}"),
               Verdict(v, f"because {i}", f"{i}.5"))
        for i, v in enumerate(verdicts)
    )


def test_check_shows_every_verdict_and_reason():
    check = ib.Check("theorem-3.1", by_slug()["theorem-3.1"], _results("agrees", "disagrees"))
    rows = table(check._repr_html_())
    assert rows[0] == ["slug", "label", "check", "verdict", "measured", "reason"]
    assert rows[1:] == [["theorem-3.1", "set 0", "check 0", "agrees", "0.5", "because 0"],
                        ["theorem-3.1", "set 1", "check 1", "disagrees", "1.5", "because 1"]]
    assert "disagrees" in check._repr_html_().split("</strong>")[0]  # the caption states the combined verdict
    assert len(repr(check)) < 120 and "disagrees" in repr(check)  # not the 10 000 numbers of the evidence
    assert all(len(repr(r)) < 200 for r in check.results)


def test_analysis_frame_is_its_results(tmp_path):
    results = _results("inconclusive", "agrees", "not run")
    analysis = ib.Analysis((), results, "# md")
    frame = analysis.to_frame()
    assert frame["verdict"].tolist() == [r.verdict.verdict for r in results]
    assert frame["reason"].tolist() == [r.verdict.reason for r in results]
    assert table(analysis._repr_html_())[1][3] == "inconclusive"
    assert pd.read_csv(analysis.to_csv(tmp_path / "a.csv"))["label"].tolist() == ["set 0", "set 1", "set 2"]


def test_analysis_groups_frame_is_the_seed_means_by_sigma():
    from implicitbias.validation.analysis import group_runs

    sigmas, seeds = (0.25, 0.5, 1.0), (0, 1, 2)
    analysis = ib.Analysis(tuple(group_runs(group(accuracy=remembering, sigmas=sigmas, seeds=seeds))), (), "")
    frame = analysis.groups_frame()
    expected = [100 * np.mean([remembering(s, k) for k in seeds]) for s in sigmas]  # the records' selected accuracy
    assert frame["sigma_w"].tolist() == list(sigmas)
    assert frame["selected_test_acc"].to_numpy() == pytest.approx(expected)
    assert frame["spread"].iloc[0] == pytest.approx(max(expected) - min(expected))
    assert set(frame["optimizer"]) == {"sgd"} and set(frame["governing"]) == {"T_SGD"}


def test_claim_shows_its_statement_and_thresholds():
    claim = next(c for c in by_slug().values() if c.thresholds)
    shown = fields(claim._repr_html_())
    assert shown["statement"] == claim.statement and shown["slug"] == claim.slug
    name, threshold = next(iter(claim.thresholds.items()))
    assert isinstance(threshold, Threshold) and f"{name} = {threshold.value:g}" in shown["thresholds"]
    assert repr(claim).startswith(f"<Claim {claim.slug}: ") and len(repr(claim)) < 100


# -- sweeps: histories in long format ----------------------------------------------------------


def test_sweep_frame_is_the_histories_in_long_format(tmp_path):
    runs = group(accuracy=remembering, sigmas=(0.5, 1.0), seeds=(0, 1))
    spec = types.SimpleNamespace(name="synthetic", configs=[c for c, _ in runs])
    result = ib.SweepResult(spec, tuple(r for _, r in runs))
    frame = result.to_frame()
    assert list(frame.columns) == ["run", "epoch", "metric", "value"]
    for run, (_, record) in enumerate(runs):
        for row in record["history"]:
            mine = frame[(frame.run == run) & (frame.epoch == row["epoch"])].set_index("metric")["value"]
            assert mine["test_acc"] == row["test_acc"] and mine["kernel_norm"] == row["kernel_norm"]
            assert mine["clocks.T_SGD"] == row["clocks"]["T_SGD"]
            assert mine["kernel_norms.body.1"] == row["kernel_norms"]["body.1"]
            assert len(mine) == sum(isinstance(v, float) for v in row.values()) + len(row["clocks"]) + len(row["kernel_norms"])
    assert len(frame) == frame.groupby(["run", "epoch", "metric"]).ngroups  # one value per (run, epoch, metric)
    configs = result.runs_frame()
    assert configs["sigma_w"].tolist() == [c["sigma_w"] for c, _ in runs] and set(configs["status"]) == {"done"}
    shown = table(result._repr_html_())
    assert shown[0] == ["run", "sigma_w", "seed", "status", "final_test_acc"]
    assert [float(r[4]) for r in shown[1:]] == [r["history"][-1]["test_acc"] for _, r in runs]
    assert repr(result) == "SweepResult('synthetic', runs=4, diverged=0)"
    assert pd.read_csv(result.to_csv(tmp_path / "h.csv")).shape == frame.shape


# -- the science layers' own results -----------------------------------------------------------


def test_clocks_frame_and_display():
    clocks = ib.forgetting_clocks("sgd", 0.05, batch_size=32, n_train=1000, epochs=10, weight_decay=0.01)
    frame = clocks.to_frame()
    assert frame["epoch"].tolist() == list(range(1, 11))
    steps = 32  # ceil(1000 / 32) steps of eta = 0.05 per epoch: the clocks by hand
    assert frame["T_SGD"].to_numpy() == pytest.approx(np.full(10, steps * 0.05**2 / 32))
    assert frame["cumulative_T_adapt"].to_numpy() == pytest.approx(np.cumsum(np.full(10, steps * 0.05)))
    assert frame["cumulative_T_L2"].iloc[-1] == pytest.approx(0.01 * 10 * steps * 0.05)
    html = clocks._repr_html_()
    assert f"governing {clocks.governing}" in html and len(table(html)) == 11
    assert len(repr(ib.forgetting_clocks("adam", 1e-3, batch_size=1, n_train=10_000, epochs=500))) < 200


def test_nc_metrics_frame_and_display():
    rng = np.random.default_rng(1)
    labels = np.repeat(np.arange(4), 10)
    metrics = ib.nc_metrics(np.eye(4)[labels] + 0.05 * rng.normal(size=(40, 4)), labels)
    assert metrics.to_frame().iloc[0].to_dict() == pytest.approx(vars(metrics))
    shown = fields(metrics._repr_html_())
    assert float(shown["nc1"]) == pytest.approx(metrics.nc1) and set(shown) == set(vars(metrics))


def test_derivations_show_as_latex():
    ode = ib.singular_value_ode(K=4, L=2)  # N = 3: dS/dt = 3/(4 sqrt n) S^(4/3) (1 - g)
    latex = ode._repr_latex_()
    assert latex.startswith("$\\displaystyle") and latex.endswith("$")
    assert "S^{\\frac{4}{3}}" in latex and "\\frac{3" in latex and "1 - g" in latex
    flow = ib.modified_flow("gd", order=1)
    latex = flow._repr_latex_()
    assert latex.startswith("$\\displaystyle") and "\\frac{d \\theta}{dt}" in latex and " h " in latex
    assert repr(flow) == "ModifiedFlow('gd', order=1, dim=1)"


def test_the_other_derivations_show_as_latex():
    import sympy as sp

    from implicitbias.theory.linear_regime import growth_law
    from implicitbias.theory.nc_stability import ray_linearisation
    from implicitbias.theory.radial import derive

    for derivation, expr in [
        (growth_law(2), "rate"),
        (ray_linearisation(2), "transverse"),
        (derive("sgd"), "recursion"),
    ]:
        latex = derivation._repr_latex_()
        assert latex.startswith("$\\displaystyle") and latex.endswith("$")
        assert sp.latex(getattr(derivation, expr)) in latex


# -- plots ---------------------------------------------------------------------------------------


def test_plot_draws_into_the_given_axes(diagram):
    fig, axes = plt.subplots(1, 3)
    try:
        assert diagram.plot(ax=axes) is fig
        assert all(len(ax.images) == 1 for ax in axes)
        fig2, ax = plt.subplots()
        assert diagram.plot(ax=ax, panels=["gap"]) is fig2 and ax.get_title() == "gap to the certified lower bound"
        own = Figure()
        assert diagram.plot(ax=own, panels=("verdict", "rank")) is own and len(own.axes) == 4  # 2 panels, 2 bars
    finally:
        plt.close("all")


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.integers(), st.text(), st.lists(st.integers(), max_size=3), st.floats(), st.just(object())))
def test_plot_rejects_what_is_not_axes(diagram, ax):
    with pytest.raises(ParameterError, match="ax must be"):
        diagram.plot(ax=ax)


def test_plot_rejects_too_few_axes_and_unknown_panels(diagram):
    fig, ax = plt.subplots()
    try:
        with pytest.raises(ParameterError, match="sequence of 3 matplotlib Axes"):
            diagram.plot(ax=ax)
        with pytest.raises(ParameterError, match="panels"):
            diagram.plot(panels=["verdict", "loss"])
    finally:
        plt.close(fig)


def test_heatmap_is_readable(diagram):
    """Integer ticks on the integer L and K axes, verdict and rank as categories (a tick per value),
    nothing outside the figure, no panel's labels over the next panel's."""
    fig = diagram.plot()
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    panels, bars = fig.axes[:3], fig.axes[3:]  # the colourbars' Axes are added after the panels
    for ax in panels:
        assert all(float(t).is_integer() for t in ax.get_yticks()) and all(float(t).is_integer() for t in ax.get_xticks())
    assert [t.get_text() for t in bars[0].get_yticklabels()] == ["NC suboptimal", "NC optimal", "NC best found"]
    ranks = sorted({c.rank for c in diagram})
    assert [t.get_text() for t in bars[1].get_yticklabels()] == [str(r) for r in range(ranks[0], ranks[-1] + 1)]
    page = fig.bbox
    boxes = [Bbox.union([p.get_tightbbox(renderer), b.get_tightbbox(renderer)]) for p, b in zip(panels, bars)]
    assert all(page.x0 <= b.x0 and b.x1 <= page.x1 + 1 and page.y0 <= b.y0 and b.y1 <= page.y1 + 1 for b in boxes)
    assert all(boxes[i].x1 <= boxes[i + 1].x0 for i in range(len(boxes) - 1))


def test_the_package_never_changes_the_backend_nor_leaves_figures(tmp_path):
    """In a fresh interpreter whose backend is svg: importing every layer, plotting and writing a
    claim's figure leave the backend as it was and pyplot's registry empty."""
    script = (
        "import matplotlib, matplotlib.pyplot as plt\n"
        "import implicitbias as ib, implicitbias.figures, implicitbias.atlas, implicitbias.report\n"
        "d = ib.phase_diagram(K=range(2, 5), L=range(1, 3))\n"
        "d.plot(); d.write_atlas('atlas')\n"
        "print(matplotlib.get_backend(), plt.get_fignums())\n"
    )
    env = {**os.environ, "MPLBACKEND": "svg"}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["svg", "[]"]
    assert (tmp_path / "atlas" / "phase_heatmap.png").read_bytes()[:4] == b"\x89PNG"


def test_in_process_plotting_leaves_pyplot_alone(diagram):
    before = (matplotlib.get_backend(), plt.get_fignums())
    diagram.plot()
    assert (matplotlib.get_backend(), plt.get_fignums()) == before


# -- the package's front ------------------------------------------------------------------------


def test_parameter_error_py_typed_and_one_version():
    assert ib.ParameterError is ParameterError and "ParameterError" in ib.__all__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["implicitbias"]
    assert (Path(ib.__file__).parent / "py.typed").is_file()
    assert ib.__version__ == importlib.metadata.version("implicitbias") == project["project"]["version"]
    assert project["project"]["version"] not in (ROOT / "implicitbias" / "__init__.py").read_text()
    assert any(d.startswith("pandas") for d in project["project"]["dependencies"])
