"""K = 3: NC is optimal at every depth.  The sympy proof, against sampling and against search.

Routes: (i) every algebraic step of ``theory.three_classes`` verified exactly by sympy; (ii) the
theorem sigma_1 sigma_2 >= 1 on random feasible 3 x 3 matrices (gaps drawn from mixtures that
reach the faces of the feasible cone, and uncentred columns); (iii) the P(3, L) multi-start
search at many depths never goes below 2 = K - 1; (iv) the phase diagram certifies every K = 3
cell.  A mutant of the proof (a wrong identity) fails (i).  L counts weight matrices, p = 2/(L + 1).
"""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.maxmargin.codes import centre_columns
from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.numerics.maxmargin.phase import column_config, phase_column
from implicitbias.numerics.maxmargin.solver import polish, random_gram
from implicitbias.theory import three_classes as tc


def test_every_step_of_the_proof_holds_exactly():
    proof = tc.proof()
    assert proof.holds, proof


def test_the_identities_are_not_vacuous():
    X = tc.cross_terms()
    s, t = tc.S, tc.T
    assert sp.expand(X[0] - (1 + s[0] + t[1] + s[0] * s[1] + t[0] * t[1] - t[0] * s[1])) == 0
    assert sp.expand(X[0] - (1 + s[0] + t[1])) != 0  # the cross term is really there


def _random_feasible(rng, shift=True):
    G = -(1 + rng.exponential(size=(3, 3)) * rng.choice([0.0, 0.05, 1.0, 20.0], size=(3, 3)))
    np.fill_diagonal(G, 0.0)
    Z = centre_columns(G)
    return Z + (rng.standard_normal((1, 3)) * 5 if shift else 0)  # adding to a column keeps every margin


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_sigma1_sigma2_at_least_one_on_random_feasible_matrices(seed):
    Z = _random_feasible(np.random.default_rng(seed))
    assert margins(Z).min() >= 1 - 1e-12
    s = np.linalg.svd(Z, compute_uv=False)
    assert s[0] * s[1] >= 1 - 1e-9
    for p in (1.0, 0.5, 2 / 13, 0.01):
        assert np.sum(s[:2] ** p) >= 2 * (1 - 1e-9)


@pytest.mark.parametrize("L", [1.5, 2, 3, 6, 12, 40])
def test_multistart_search_never_beats_nc_at_k3(L):
    p = 2 / (L + 1)
    rng = np.random.default_rng(int(L * 10))
    values = [polish(random_gram(3, 2, rng), p, "gram").objective for _ in range(12)]
    values += [polish(_random_feasible(rng, shift=False), p, "random").objective for _ in range(12)]
    assert min(values) >= 2 * (1 - 1e-9)
    assert min(values) == pytest.approx(2.0, rel=1e-6)  # and NC (value 2) is reached


# the gap of a certified cell is (S_p(NC) computed by an SVD - its exact value K - 1) / S_p: zero up to
# the rounding of a 3 x 3 float64 SVD and a sum of three powers, a few ulp; 1,000 ulp leaves room for any CPU
ROUNDING = 1000 * np.finfo(float).eps


def test_phase_diagram_certifies_every_k3_cell():
    rec = phase_column(column_config(3, [1, 2, 2.5, 7, 12]))
    assert all(c["verdict"] == "NC optimal" for c in rec["cells"])
    assert all(c["certificate"]["kind"] in ("exact", "convex") for c in rec["cells"])
    assert all(abs(c["gap"]) <= ROUNDING for c in rec["cells"])
