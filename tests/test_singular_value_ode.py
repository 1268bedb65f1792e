"""Claim "Singular-value ODE (s. 4)": the full-matrix gradient flow from a Hadamard initialisation
keeps every singular vector and its singular values follow the derived ODE (two integrators, two
codes), and the claim's verdict rule on synthetic evidence (solver status included)."""

from dataclasses import replace

import numpy as np
import pytest

from implicitbias.claims import Context, Evidence
from implicitbias.claims.depth.singular_value_ode import CLAIM, Config, FlowRun, Measured, SymbolicCell, flow_cell
from implicitbias.numerics.ufm import deep_ufm as du
from implicitbias.numerics.ufm.spectral_agreement import off_diagonal_mass, rotated_blocks


@pytest.mark.parametrize("K", [4, 8, 16])
@pytest.mark.parametrize("L", [1, 2, 4])
def test_full_matrix_flow_follows_the_derived_ode(K, L):
    d = K + 2 if K == 4 else K  # one case wider than K: the extra directions stay untouched
    rec = flow_cell({"K": K, "L": L, "d": d, "n": 2, "seed": K * 10 + L, "log_scale": 0.3, "margin": 5.0,
                     "points": 12, "rtol": 1e-11})
    assert rec["reached_margin"] and rec["full_success"] and rec["spectral_success"]
    assert rec["final_margin"] > 5.0 - 1e-6
    assert rec["max_off_diagonal_logits"] < 1e-10 and rec["max_off_diagonal_factors"] < 1e-10
    assert rec["max_rel_error"] < 1e-6 and rec["max_layer_rel_error"] < 1e-6


def test_rotated_blocks_of_a_hadamard_init_are_its_singular_values():
    s = np.exp(np.random.default_rng(1).normal(0, 0.3, (3, 4)))
    factors = [f.numpy() for f in du.hadamard_init(s, d=6, n=3, seed=5)]
    Q, R = du.hadamard_bases(4, 2, 6, seed=5)
    blocks = rotated_blocks(factors, Q, R, 3)
    for row, B in zip(s, blocks):
        assert off_diagonal_mass(B) < 1e-12
        assert np.allclose(np.diag(B)[:4], row)


def test_rotated_blocks_see_a_generic_init():
    factors = [f.numpy() for f in du.gaussian_init(4, 2, 6, n=3, seed=0)]
    Q, R = du.hadamard_bases(4, 2, 6, seed=0)
    assert min(off_diagonal_mass(B) for B in rotated_blocks(factors, Q, R, 3)) > 0.1


def _evidence(error=1e-9, off=1e-14, holds=True, full_success=True):
    flow = FlowRun(K=8, L=2, d=8, n=2, seed=0, log_scale=0.3, margin=5.0, points=12, rtol=1e-11, T=40.0,
                   reached_margin=True, final_margin=5.0, spectral_success=True, spectral_message="ok",
                   full_success=full_success,
                   full_message="Required step size is less than spacing between numbers." if not full_success else "ok",
                   max_rel_error=error, max_layer_rel_error=error / 2, max_off_diagonal_logits=off,
                   max_off_diagonal_factors=off, spectral_seconds=0.1, full_seconds=2.0)
    return Evidence("synthetic", Measured((SymbolicCell(4, 2, holds),), (flow,)))


SYNTHETIC_VERDICTS = [
    ("agrees", _evidence()),
    ("disagrees", _evidence(error=1e-3)),  # the ODE does not track the flow
    ("disagrees", _evidence(off=1e-4)),  # singular vectors moved
    ("disagrees", _evidence(holds=False)),  # the ODE is not the loss's derivative
    ("inconclusive", _evidence(full_success=False, error=1e-3)),  # a solver failed: nothing can be concluded
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    v = CLAIM.judge(evidence)
    assert v.verdict == expected
    if expected == "inconclusive":
        assert "spacing" in v.reason  # the solver's own message is carried to the reader


@pytest.mark.parametrize("f, expected", [(1.1, "agrees"), (1 / 1.1, "disagrees")])
def test_each_bound_10_percent_either_side_decides(f, expected):
    """The bound moved by 20% flips one of these: the routes differing by 1e-6 / f, the off-diagonal
    mass 1e-10 / f."""
    assert (CLAIM.threshold("routes_agree"), CLAIM.threshold("diagonal")) == (1e-6, 1e-10)
    assert CLAIM.judge(_evidence(error=1e-6 / f)).verdict == expected
    assert CLAIM.judge(_evidence(off=1e-10 / f)).verdict == expected


def test_a_difference_or_mass_at_the_bound_exactly_agrees():
    assert CLAIM.judge(_evidence(error=1e-6)).verdict == "agrees"
    assert CLAIM.judge(_evidence(off=1e-10)).verdict == "agrees"


@pytest.mark.parametrize("field", ["spectral_success", "full_success", "reached_margin"])
def test_each_integration_condition_failing_alone_is_inconclusive(field):
    ev = _evidence()
    ev = Evidence("synthetic", replace(ev.data, flows=(replace(ev.data.flows[0], **{field: False}),)))
    assert CLAIM.judge(ev).verdict == "inconclusive"



def test_claim_end_to_end_on_a_small_config(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(symbolic_cases=((4, 1),), flow_cases=((4, 1),)))
    v = CLAIM.judge(ev)
    assert v.verdict == "agrees", v
    assert "$$" in CLAIM.render(ctx, ev, v)
