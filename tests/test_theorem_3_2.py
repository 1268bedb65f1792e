"""Theorem 3.2: as L -> infinity the global optimum of P(K, L) has rank 2 and is the regular K-gon.

Checked at L = 30 and for the p -> 0 objective ordered by (rank, sum log sigma), with the search
run WITHOUT any start that is or contains the K-gon (at K = 4 the cross-polytope start is the
square: it must be left out too).  The best matrix is recognised here from its invariants,
computed in this test: spectrum (two equal non-zero singular values) and the sorted angles of its
class vectors (equally spaced by 2 pi/K); its value is compared with the exact K-gon value of
``theory.codes`` (sympy).  Then the claim's verdict rule on synthetic evidence.  L counts weight
matrices (N = L + 1).
"""

import math

import numpy as np
import pytest

from implicitbias.claims import Evidence
from implicitbias.claims.depth.theorem_3_2 import CLAIM, depth_limit_cell
from implicitbias.numerics.maxmargin.naming import identify
from implicitbias.numerics.maxmargin.search import search, starts


def _assert_regular_kgon(Z, K):
    _, s, Vt = np.linalg.svd(Z)
    assert s[2] < 1e-6 * s[0]  # rank 2
    assert s[1] == pytest.approx(s[0], rel=1e-6)  # equal singular values
    H = Vt[:2].T * np.sqrt(s[:2])  # class vectors (balanced factor)
    norms = np.linalg.norm(H, axis=1)
    assert np.ptp(norms) < 1e-6 * norms.max()
    angles = np.sort(np.arctan2(H[:, 1], H[:, 0]))
    gaps = np.diff(np.append(angles, angles[0] + 2 * np.pi))
    assert np.allclose(gaps, 2 * np.pi / K, atol=1e-5)


@pytest.mark.parametrize("K", [4, 6])
def test_no_start_is_or_contains_the_kgon(K):
    given = starts(K, effort=2, seed=0, exclude_kgon=True)
    assert all(identify(Z).key != "kgon" for _, Z in given)
    ranks = [np.linalg.matrix_rank(Z, tol=1e-8) for _, Z in given]
    assert any(r == 2 for r in ranks)  # random rank-2 Gram starts remain: not polygons
    if K == 4:  # the square cross-polytope start is the 4-gon: it is gone
        assert not any(label == "cross_polytope" for label, _ in given)


@pytest.mark.parametrize("K, L", [(4, 30), (4, math.inf), (6, 30), (5, math.inf)])
def test_large_depth_optimum_is_the_regular_kgon_found_without_it(K, L):
    res = search(K, [L], effort=2, seed=0, exclude_kgon=True)
    best = res.best[L]
    _assert_regular_kgon(best.Z, K)
    from implicitbias.theory import codes as exact
    value = float(exact.limit_objective_at("kgon", K)[1]) if L == math.inf else float(exact.objective_at("kgon", K, L))
    assert best.objective == pytest.approx(value, rel=1e-8)
    if L == math.inf:
        assert best.rank == 2 and best.key[0] == 2


def test_depth_limit_cell_records_the_check():
    rec = depth_limit_cell({"K": 5, "L": "inf", "effort": 2, "seed": 1})
    assert rec["key"] == "kgon" and rec["kgon_starts"] == 0 and rec["starts"] > 10
    assert rec["best"] == pytest.approx(rec["kgon_exact"], rel=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("L", [30, 100, "inf"])
@pytest.mark.parametrize("K", [4, 5, 6, 7, 8, 10, 12])
def test_large_depth_optimum_is_the_regular_kgon_up_to_12_classes(K, L):
    """Found without K-gon starts.  Not at K = 9 and 11: there the unaided search (efforts 2-3, seeds
    0-2) stops on non-regular polygons 1-34% above the 9- and 11-gon, or on rank-3 codes; the atlas
    reaches them only from its named starts (benchmarks/RESULTS.md)."""
    rec = depth_limit_cell({"K": K, "L": L, "effort": CLAIM.config("default").effort, "seed": 0})
    assert rec["key"] == "kgon" and rec["kgon_starts"] == 0
    assert rec["best"] == pytest.approx(rec["kgon_exact"], rel=1e-7)


# -- the claim's verdict rule, on synthetic evidence ------------------------------------------------

def _cell(K=5, L=30, best=None, key="kgon", rank=2, handed=0):
    kgon = 3.0
    return {"K": K, "L": L, "best": kgon if best is None else best, "rank": rank, "name": key or "rank-3 code",
            "key": key, "start": "random:gram-r2#0", "kgon_exact": kgon, "starts": 20, "kgon_starts": handed,
            "success": True, "message": ""}


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", Evidence("s", {"cells": [_cell(), _cell(K=6), _cell(L="inf")]})),
    ("disagrees", Evidence("s", {"cells": [_cell(), _cell(K=6, best=2.9, key="", rank=3)]})),
    ("inconclusive", Evidence("s", {"cells": [_cell(K=6), _cell(best=3.2, key="", rank=3)]})),
    ("inconclusive", Evidence("s", {"cells": [_cell(K=6), _cell(handed=1)]})),
]


def test_verdict_disagrees_when_something_beats_the_kgon():
    v = CLAIM.judge(Evidence("s", {"cells": [_cell(), _cell(K=6, best=2.9, key="", rank=3)]}))
    assert v.verdict == "disagrees" and "(6, 30)" in v.reason
