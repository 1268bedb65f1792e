"""Theorem 3.2: as L -> infinity the global optimum of P(K, L) has rank 2 and is the regular K-gon.

Checked at L = 30, 100 and for the p -> 0 objective ordered by (rank, sum log sigma), with the
multi-start solver run WITHOUT the K-gon start.  The best solution is recognised here from its
invariants, computed in this test: spectrum (two equal non-zero singular values) and the sorted
angles of its class vectors (equally spaced by 2 pi/K); its value is compared with the exact
K-gon value of ``theory.codes`` (sympy).  L counts weight matrices (N = L + 1).
"""

import math

import numpy as np
import pytest

from implicitbias.numerics.maxmargin.margin import margins
from implicitbias.numerics.maxmargin.phase import depth_limit_cell


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


def _check(K, L):
    rec = depth_limit_cell({"K": K, "L": L, "effort": 2, "seed": 0})
    assert all(not s.startswith("kgon") for s in rec["starts"])
    Z = np.array(rec["best"]["Z"])
    assert margins(Z).min() >= 1 - 1e-9
    _assert_regular_kgon(Z, K)
    assert rec["best"]["objective"] == pytest.approx(rec["kgon_exact"], rel=1e-7)


@pytest.mark.parametrize("L", [30, "inf"])
@pytest.mark.parametrize("K", [4, 5, 6, 7])
def test_large_depth_optimum_is_the_regular_kgon(K, L):
    _check(K, L)


@pytest.mark.slow
@pytest.mark.parametrize("L", [30, 100, "inf"])
@pytest.mark.parametrize("K", range(4, 13))
def test_large_depth_optimum_is_the_regular_kgon_up_to_12_classes(K, L):
    _check(K, L)


def test_p_to_zero_orders_by_rank_first():
    rec = depth_limit_cell({"K": 6, "L": "inf", "effort": 2, "seed": 1})
    assert rec["best"]["rank"] == 2
    assert rec["runner_up"]["rank"] >= 2
    assert rec["best"]["objective"] == pytest.approx(2 * math.log(6 / (4 * math.sin(math.pi / 6) ** 2)), rel=1e-9)
