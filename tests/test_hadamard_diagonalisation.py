"""Claim "Hadamard diagonalisation (s. 4)": softmax of a dyadic logit matrix is dyadic (exact sympy
proof for small K, float64 for large K), and its verdict rule on synthetic evidence."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.special import softmax

from implicitbias.claims import Context, Evidence
from implicitbias.claims.depth.hadamard_diagonalisation import (
    CLAIM,
    Config,
    Measured,
    NumericCell,
    ProofCell,
    numeric_cell,
    proof_cell,
)
from implicitbias.theory.hadamard import dyadic_defect


def test_proof_cell_is_exact_for_K_4():
    assert proof_cell({"K": 4}) == {"softmax_is_dyadic": True, "gradient_is_diagonal": True}


@pytest.mark.parametrize("K", [32, 128])
def test_numeric_route_is_dyadic_to_rounding_for_large_K(K):
    rec = numeric_cell({"K": K, "seed": 7})
    assert rec["softmax_defect"] < 1e-13 and rec["gradient_off_diagonal"] < 1e-13


def test_numeric_route_sees_a_non_dyadic_softmax():
    """The measurement can fail: a generic (non-dyadic) logit matrix has an O(1) defect."""
    M = np.random.default_rng(0).normal(0, 3, (16, 16))
    assert dyadic_defect(softmax(M, axis=0)) > 0.1


def _evidence(proven=(True, True), defect=1e-16):
    proofs = tuple(ProofCell(K, ok, True) for K, ok in zip((4, 8), proven))
    numeric = (NumericCell(16, 0, defect, 2e-16), NumericCell(64, 0, 3e-16, 1e-16))
    return Evidence("synthetic", Measured(proofs, numeric))


SYNTHETIC_VERDICTS = [
    ("agrees", _evidence()),
    ("disagrees", _evidence(defect=0.2)),  # a numerical counterexample
    ("disagrees", _evidence(proven=(False, True), defect=0.2)),
    ("inconclusive", _evidence(proven=(True, False))),  # sympy could not close the proof
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


@pytest.mark.parametrize("f, expected", [(1.1, "agrees"), (1 / 1.1, "disagrees")])
def test_the_rounding_bound_is_1e_12_a_defect_10_percent_either_side_decides(f, expected):
    """The bound moved by 20% (0.8e-12 or 1.2e-12) flips one of these."""
    assert CLAIM.threshold("rounding") == 1e-12
    assert CLAIM.judge(_evidence(defect=1e-12 / f)).verdict == expected



def test_a_defect_at_the_bound_exactly_is_rounding_and_the_reason_names_the_ks_beyond_it():
    assert CLAIM.judge(_evidence(defect=1e-12)).verdict == "agrees"
    ev = _evidence(defect=0.2)
    numeric = (ev.data.numeric[0], replace(ev.data.numeric[1], softmax_defect=1e-12))  # K = 64 at the bound: not named
    v = CLAIM.judge(Evidence("synthetic", replace(ev.data, numeric=numeric)))
    assert v.verdict == "disagrees" and v.reason.startswith("softmax of a dyadic matrix is not dyadic for K = [16]")


def test_a_proof_missing_either_half_is_not_closed():
    """Proved needs both the dyadic softmax and the diagonal gradient; either missing alone is inconclusive."""
    ev = _evidence()
    proofs = (ev.data.proofs[0], replace(ev.data.proofs[1], gradient_is_diagonal=False))
    ev = Evidence("synthetic", replace(ev.data, proofs=proofs))
    assert CLAIM.judge(ev).verdict == "inconclusive" and CLAIM.judge(ev).numbers["proven_K"] == [4]
    assert CLAIM.judge(_evidence(proven=(True, False))).numbers["proven_K"] == [4]



def test_claim_end_to_end_on_a_small_config(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(symbolic_Ks=(4,), numeric_Ks=(16,), seeds=1))
    v = CLAIM.judge(ev)
    assert v.verdict == "agrees" and v.numbers["proven_K"] == [4]
    assert "K" in CLAIM.render(ctx, ev, v)
