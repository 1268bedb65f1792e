"""The Python API (``implicitbias.api``, re-exported by ``implicitbias``): typed results, slugs,
no store to set up, bad input as one ParameterError."""

import types

import numpy as np
import pytest
from implicitbias.theory.params import ParameterError
from spec_b_records import SEEDS8, TINY, group, noisy

import implicitbias as ib
from implicitbias.claims import Context, Evidence, Result, Verdict, by_slug, registry, slug


@pytest.mark.parametrize(
    "claim_id, expected",
    [
        ("Theorem 3.1", "theorem-3.1"),
        ("C1", "c1"),
        ("Hadamard diagonalisation (s. 4)", "hadamard-diagonalisation-s-4"),
        ("L = 1", "l-1"),
        ("Sec. 5 (accuracy)", "sec-5-accuracy"),
        ("BEA heavy ball", "bea-heavy-ball"),
    ],
)
def test_slug(claim_id, expected):
    assert slug(claim_id) == expected


def test_every_claim_has_a_distinct_slug():
    claims = registry()
    slugs = by_slug()
    assert len(slugs) == len(claims) and set(slugs) == {slug(i) for i in claims}
    assert ib.claims() == slugs and "theorem-3.1" in slugs


def test_context_without_store_uses_the_session_store():
    ctx = Context(store=None, progress=False)
    calls = []

    def cell(config):
        calls.append(config)
        return {"twice": 2 * config["x"]}

    assert ctx.map("api-test", cell, [{"x": 1}, {"x": 2}]) == [{"twice": 2}, {"twice": 4}]
    assert Context(progress=False).map("api-test", cell, [{"x": 2}]) == [{"twice": 4}]  # cached: one store
    assert len(calls) == 2


def _schatten(Z, p):
    """S_p of Z rescaled to unit margin, computed here from numpy's SVD (an independent route);
    singular values below 1e-8 of the largest are the solver's zeros (a numerical rank cut-off)."""
    K = len(Z)
    margin = min(Z[k, k] - Z[c, k] for k in range(K) for c in range(K) if c != k)
    s = np.linalg.svd(Z / margin, compute_uv=False)
    return float(np.sum(s[s > 1e-8 * s[0]] ** p))


@pytest.fixture(scope="module")
def diagram():
    return ib.phase_diagram(K=[2, 3, 4, 5], L=[1, 2, 3])


def test_phase_diagram_cells_are_typed_and_consistent(diagram):
    assert len(diagram) == 12 and diagram.K == [2, 3, 4, 5] and diagram.L == [1, 2, 3]
    for cell in diagram:
        assert isinstance(cell, ib.PhaseCell) and cell.p == pytest.approx(2 / (cell.L + 1))
        assert cell.nc_value == cell.K - 1
        assert cell.matrix.shape == (cell.K, cell.K)
        assert cell.value == pytest.approx(_schatten(cell.matrix, cell.p), rel=1e-9)
        assert cell.rank == np.linalg.matrix_rank(cell.matrix, tol=1e-8 * np.abs(cell.matrix).max())
        assert (cell.verdict == "NC suboptimal") == (cell.value < cell.nc_value * (1 - 1e-6))
    # L = 1 (the convex problem) and K = 2, 3 (proofs): NC is optimal, certified
    assert all(c.nc_optimal for c in diagram if c.L == 1 or c.K <= 3)
    # K = 5, L = 3: the cross-polytope plus a singleton, whose closed form beats K - 1 = 4 exactly
    cell = diagram.cell(5, 3)
    assert cell.structure == "cross-polytope + singleton" and cell.certificate.kind == "exact"
    assert cell.value == pytest.approx(2 * np.sqrt(2) + np.sqrt(2) * 5**0.75 / 5, rel=1e-9)
    # the boundary: the first integer depth past the cross-polytope's exact threshold (theory.codes)
    from implicitbias.theory import codes as exact

    expected = {
        K: next((L for L in (1, 2, 3) if L > float(exact.threshold_depth("cross_polytope", K))), None) for K in (4, 5)
    }
    assert diagram.boundary() == {2: None, 3: None, **expected}


def test_phase_diagram_outputs(diagram, tmp_path):
    path = diagram.to_csv(tmp_path / "cells.csv")
    lines = path.read_text().splitlines()
    assert len(lines) == 13 and lines[0].startswith("K,L,p,verdict,structure")
    fig = diagram.plot(tmp_path / "heat.png")
    assert (tmp_path / "heat.png").stat().st_size > 1000 and (tmp_path / "heat.csv").is_file()
    assert len(fig.axes) >= 3
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            diagram.to_frame()
    else:
        assert diagram.to_frame().shape[0] == 12


def test_a_persistent_store_is_reused(tmp_path, monkeypatch):
    from implicitbias.numerics.maxmargin import phase

    from implicitbias.store import CellError, Store

    path = tmp_path / "results.sqlite"
    first = ib.phase_diagram(K=4, L=2, store=path)
    with Store(path) as store:
        assert store.counts("maxmargin.phase-column")["done"] == 1

    def never(*args, **kwargs):
        raise AssertionError("recomputed a cell the store holds")

    # the cells' code is fingerprinted from its source files, so patching what the cells call
    # leaves their fingerprint as it was: a second call that computed anything would raise here
    monkeypatch.setattr(phase, "_cell", never)  # what phase_column calls
    monkeypatch.setattr(phase, "search", never)  # what search_column calls
    again = ib.phase_diagram(K=4, L=2, store=path)
    assert again.cells[0].value == first.cells[0].value
    with pytest.raises(CellError, match="recomputed"):  # the patch bites where nothing is stored
        ib.phase_diagram(K=5, L=2, store=path)


def test_margin_problem():
    problem = ib.MarginProblem(4, 3)
    assert problem.p == pytest.approx(0.5) and problem.nc_value == 3.0
    etf = np.eye(4) - 1 / 4
    assert problem.objective(etf) == pytest.approx(3.0, rel=1e-12)  # NC: S_p = K - 1 at every depth
    cell = problem.solve()
    assert cell.K == 4 and cell.L == 3 and cell.value < 3.0
    with pytest.raises(ParameterError, match="Z must be a 4 x 4"):
        problem.objective(np.eye(3))


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: ib.phase_diagram(K=1, L=2), "K"),
        (lambda: ib.phase_diagram(K=[], L=2), "K"),
        (lambda: ib.phase_diagram(K=3, L=0.5), "L"),
        (lambda: ib.MarginProblem(3, 0), "L"),
        (lambda: ib.check("theorem-9.9"), "slug"),
        (lambda: ib.modified_flow("newton"), "optimizer"),
        (lambda: ib.forgetting_clocks("sgd", -1.0, batch_size=8, n_train=10, epochs=1), "lr"),
        (lambda: ib.singular_value_ode(3, 2), "K"),
        (lambda: ib.nc_metrics(np.ones(4), [0, 1, 0, 1]), "features"),
    ],
)
def test_bad_input_is_a_parameter_error_naming_it(call, name):
    with pytest.raises(ParameterError, match=name):
        call()


def test_diagram_cell_outside_the_grid(diagram):
    with pytest.raises(ParameterError, match="cell"):
        diagram.cell(9, 2)


def test_forgetting_clocks_by_hand():
    clocks = ib.forgetting_clocks("sgd", 0.05, batch_size=32, n_train=1000, epochs=10, weight_decay=1e-3)
    steps = 10 * 32  # ceil(1000 / 32) = 32 steps per epoch
    assert clocks.total["T_SGD"] == pytest.approx(steps * 0.05**2 / 32)
    assert clocks.total["T_L2"] == pytest.approx(1e-3 * steps * 0.05)
    assert clocks.governing == "T_L2"


def test_modified_flow_of_gd():
    import sympy as sp

    flow = ib.modified_flow("gd", order=1)
    theta = flow.X[0]
    loss = flow.losses[0]
    # d theta/dt = -L' - (h/2) L'' L'  (Barrett & Dherin 2021)
    assert sp.simplify(flow.terms[0][0] + sp.diff(loss, theta)) == 0
    assert sp.simplify(flow.terms[1][0] + sp.diff(loss, theta, 2) * sp.diff(loss, theta) / 2) == 0


def test_singular_value_ode():
    ode = ib.singular_value_ode(4, 2)
    assert ode.K == 4 and ode.L == 2 and ode.shape == (3,)


def test_nc_metrics_without_classifier_uses_the_class_means():
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(4), 25)
    H = 3 * np.eye(4)[y] + 0.2 * rng.normal(size=(100, 4))
    plain = ib.nc_metrics(H, y)
    means = np.stack([H[y == c].mean(0) for c in range(4)])
    explicit = ib.nc_metrics(H, y, means - means.mean(0))
    assert plain == explicit and plain.nc3 < 1e-12
    within = sum(np.sum((H[y == c] - means[c]) ** 2) for c in range(4))
    assert 0 < plain.nc1 < within  # finite, positive variability


def _result(verdict, label=""):
    return Result(types.SimpleNamespace(id="x"), Evidence("c", {}, label=label), Verdict(verdict, "why", "1"))


@pytest.mark.parametrize(
    "verdicts, combined, agrees",
    [
        (["agrees"], "agrees", True),
        (["agrees", "agrees"], "agrees", True),
        (["agrees", "not run"], "not run", False),
        (["inconclusive", "not run"], "inconclusive", False),
        (["agrees", "disagrees", "inconclusive"], "disagrees", False),
    ],
)
def test_check_combines_its_verdicts(verdicts, combined, agrees):
    check = ib.Check("x", None, tuple(_result(v, label=str(i)) for i, v in enumerate(verdicts)))
    assert check.verdict == combined and check.agrees is agrees
    assert check.reason.count("why") == len(verdicts)


def test_check_runs_a_claim():
    result = ib.check("hadamard-diagonalisation-s-4")
    assert result.verdict in ("agrees", "disagrees") and result.results[0].claim.slug == result.slug


@pytest.mark.parametrize(
    "accuracy, verdict",
    [
        (noisy(0.04), "agrees"),
        pytest.param(noisy(0.0, 0.01), "disagrees", marks=pytest.mark.slow),  # the rule's outcomes: test_claims_layer
    ],
)
def test_analyse_judges_a_sweep(accuracy, verdict, tmp_path):
    """Memory 4 points over 0.5 points of seed noise (s = 8), and none over 1 point, 16 seeds: the
    cases C1's own tests decide (tests/test_c1_low_lr_sgd_remembers.py)."""
    runs = group(accuracy=accuracy, seeds=SEEDS8 + tuple(range(8, 16)))
    spec = types.SimpleNamespace(name="synthetic", configs=[c for c, _ in runs])
    analysis = ib.analyse(ib.SweepResult(spec, tuple(r for _, r in runs)), out=tmp_path)
    assert analysis.verdicts()["c1"] == verdict
    assert "# Analysis: sweep synthetic" in analysis.markdown and len(analysis.groups) == 1


def test_sweep_then_analyse_from_a_persistent_store(tmp_path):
    path = tmp_path / "runs.sqlite"
    run = ib.sweep(TINY, store=path)
    assert len(run.records) == 2 and run.diverged == 0 and [c["sigma_w"] for c, _ in run.runs] == [0.5, 1.0]
    again = ib.sweep(TINY, store=path)  # served from the store: the same records
    assert again.records == run.records
    analysis = ib.analyse(TINY, store=path, out=tmp_path / "analysis")
    assert len(analysis.groups) == 1 and len(analysis.groups[0].runs) == 2
    assert set(analysis.verdicts()) <= set(ib.claims()) and "2 of 2 runs finished" in analysis.markdown
