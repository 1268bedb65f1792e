"""Theorem 3.1: for L = 2, K >= 6 or L >= 3, K >= 4, NC is not a global optimum of P(K, L), yet it
stays a local optimum.  L counts weight matrices (N = L + 1, p = 2/(L + 1)).

Routes: (i) every such cell with K <= 32, L <= 12 has an explicit matrix (a closed-form code)
whose SVD objective is below K - 1 and whose exact sympy comparison agrees; (ii) the phase
columns give the verdict 'NC suboptimal' with a verified certificate (full grid: slow tier);
(iii) NC is a local optimum: finite-difference slopes along random feasible directions are
positive and equal the first-order formula p tr(D); the objective at small feasible
perturbations (centred or not) of NC exceeds K - 1.  Then the claim's verdict rule on synthetic
evidence, for every outcome it can give.
"""

import functools
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.claims import Context, Evidence
from implicitbias.claims.depth.theorem_3_1 import CLAIM, Config, LocalCell, Measured, in_region, local_cell
from implicitbias.executors import open_executor
from implicitbias.numerics.maxmargin import codes
from implicitbias.numerics.maxmargin import solver as sm
from implicitbias.numerics.maxmargin.cells import Certificate, PhaseCell
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.numerics.maxmargin.phase import cells_of, column_config, phase_column, phase_configs, phase_diagram
from implicitbias.theory import codes as exact

REGION = [(K, L) for K in range(2, 33) for L in range(1, 13) if in_region(K, L)]


def _svd_objective(Z, p):
    s = np.linalg.svd(Z, compute_uv=False)
    s = s[s > Z.shape[0] * np.finfo(float).eps * s[0]]
    return float(np.sum(s**p))


@pytest.mark.parametrize("K, L", REGION)
def test_an_explicit_code_beats_nc_in_every_cell_of_the_theorem(K, L):
    winners = []
    for name in ("cross_polytope", "kgon"):
        Z = codes.CODES[name](K)
        assert margins(Z).min() >= 1 - 1e-12
        value = _svd_objective(Z, 2 / (L + 1))
        if value < (K - 1) * (1 - 1e-9):
            assert exact.compare_with_nc(name, K, L) == -1
            winners.append(name)
    assert winners


@pytest.mark.parametrize("K", [6, 9])
def test_phase_cells_of_the_theorem_are_certified(K):
    rec = phase_column(column_config(K, [2, 3, 7]))
    for cell in rec["cells"]:
        assert cell["verdict"] == "NC suboptimal"
        best = np.array(cell["best"]["Z"])
        assert margins(best).min() >= 1 - 1e-9
        assert _svd_objective(best, cell["p"]) == pytest.approx(cell["best"]["objective"], rel=1e-9)
        assert _svd_objective(best, cell["p"]) < K - 1
        assert cell["certificate"]["kind"] in ("exact", "numerical")
        assert cell["lower_bound"]["value"] <= cell["best"]["objective"]


@pytest.mark.slow
def test_full_grid_every_theorem_cell_is_nc_suboptimal(store):
    with open_executor("process", 2) as ex:
        cells = cells_of(phase_diagram(functools.partial(store.map, executor=ex, progress=False), phase_configs(32, 12)))
    verdicts = {(c.K, c.L): c for c in cells}
    for K, L in REGION:
        cell = verdicts[(K, L)]
        assert cell.verdict == "NC suboptimal", (K, L)
        assert margins(cell.matrix).min() >= 1 - 1e-9
    assert all(c.verdict == "NC optimal" for c in cells if c.L == 1 or c.K <= 3)


@settings(max_examples=15, deadline=None)
@given(st.integers(3, 16), st.floats(1.0, 20.0), st.integers(0, 2**31 - 1))
def test_nc_is_a_first_order_local_optimum(K, L, seed):
    p = 2 / (L + 1)
    D = sm.feasible_directions(K, 40, seed)
    gaps = np.diagonal(D, axis1=1, axis2=2)[:, None, :] - D
    assert gaps.min() >= -1e-12  # feasible at NC to first order
    slopes = sm.nc_directional_slopes(K, p, D)
    assert slopes.min() > 0
    assert np.allclose(slopes, p * np.trace(D, axis1=1, axis2=2), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("K, L", [(6, 2), (6, 4), (8, 3), (8, 8), (12, 12)])
def test_nc_beats_every_small_feasible_perturbation_while_a_better_code_exists(K, L):
    p = 2 / (L + 1)
    rng = np.random.default_rng(K * 100 + L)
    centred = sm.feasible_directions(K, 20, seed=K + L)
    shifted = centred + rng.standard_normal((20, 1, K))  # column shifts keep feasibility
    for D in np.concatenate([centred, shifted]):
        for t in np.geomspace(1e-6, 1e-2, 5):
            Z = codes.simplex_etf(K) + t * D
            assert margins(Z).min() >= 1 - 1e-12
            assert _svd_objective(Z, p) > K - 1
    assert _svd_objective(codes.cross_polytope_code(K), p) < K - 1


def test_local_cell_reports_slopes_formula_and_radius():
    rec = local_cell({"K": 6, "L": 3, "directions": 20, "seed": 1})
    assert rec["min_slope"] > 0 and rec["max_formula_error"] < 1e-4 and rec["radius"] > 0


# -- the claim's verdict rule, on synthetic evidence ------------------------------------------------

def _phase_cell(K, L, verdict):
    """A synthetic cell (only K, L, the verdict and the certificate's kind enter the rule)."""
    return PhaseCell(
        K=K, L=L, p=2 / (L + 1), verdict=verdict, structure="x", key="", rank=2, value=K - 2.0, nc_value=K - 1.0,
        lower_bound=0.0, gap=1.0, certificate=Certificate("exact", "x", {}), closed_form=None, matrix=np.eye(K),
        lower_bound_kind="none", symmetry_order=0, vertex_transitive=False, start="x", solver_success=True,
        solver_message="", effort=1, seed=0, margin=1.0, singular_values=(), iterations=0, orbit_sizes=(),
        equal_spectrum=False, symmetric=False, cosines=(), closed_form_value=None, named=(),
    )


def _evidence(verdict=lambda K, L: "NC suboptimal", slope=0.3, radius=0.4, formula=1e-7, region=True):
    cells = tuple(_phase_cell(K, L, verdict(K, L)) for K in range(4, 9) for L in range(2, 5)
                  if in_region(K, L)) if region else ()
    local = tuple(LocalCell(K, L, slope, formula, radius) for K in (4, 6) for L in (2, 3))
    return Evidence("synthetic", Measured(cells, local))


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", _evidence()),
    ("disagrees", _evidence(verdict=lambda K, L: "NC best found" if (K, L) == (6, 2) else "NC suboptimal")),
    ("disagrees", _evidence(slope=-0.01)),
    ("disagrees", _evidence(radius=0.0)),
    ("inconclusive", _evidence(region=False)),
    ("inconclusive", _evidence(formula=1e-2)),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    """Every outcome of the rule, each case with one condition failing (the claim's own test module)."""
    assert CLAIM.judge(evidence).verdict == expected



@pytest.mark.parametrize("formula, expected", [(0.9e-4, "agrees"), (1e-4, "agrees"), (1.1e-4, "inconclusive")])
def test_the_formula_agreement_bound_is_1e_4_an_error_10_percent_either_side_decides(formula, expected):
    """The bound moved by 20% (0.8e-4 or 1.2e-4) flips one of these."""
    assert CLAIM.threshold("formula_agreement") == 1e-4
    assert CLAIM.judge(_evidence(formula=formula)).verdict == expected


def test_a_zero_slope_is_no_strict_local_minimum():
    assert CLAIM.judge(_evidence(slope=0.0)).verdict == "disagrees"



def test_the_numbers_count_the_exact_certificates_and_name_the_failed_cells():
    ev = _evidence(verdict=lambda K, L: "NC best found" if (K, L) == (6, 2) else "NC suboptimal")
    region = (replace(ev.data.region[0], certificate=Certificate("numerical", "x", {})), *ev.data.region[1:])
    ev = Evidence("synthetic", replace(ev.data, region=region))
    n = CLAIM.judge(ev).numbers
    assert (n["region_cells"], n["exact"], n["failed"]) == (len(region), len(region) - 1, [(6, 2)])


def test_claim_runs_end_to_end_on_a_small_config(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    evidence = CLAIM.measure(ctx, Config(kmax=6, lmax=3, local_Ks=(4,), local_Ls=(2, 3), directions=10))
    verdict = CLAIM.judge(evidence)
    assert verdict.verdict == "agrees", verdict
    assert {(c.K, c.L) for c in evidence.data.region} == {(4, 3), (5, 3), (6, 2), (6, 3)}
    assert "radius" in CLAIM.render(ctx, evidence, verdict)
