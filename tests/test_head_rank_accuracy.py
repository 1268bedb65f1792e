"""Claim "Sec. 5 (accuracy)": lower rank goes with worse test accuracy, judged by Spearman's rho with
an exact permutation p-value over the n cells (n stated); the rule on synthetic grids, and the
exact p-values against a brute-force enumeration."""

import itertools

import numpy as np
import pytest
from head_rank_rows import GOOD, MISSING, grid
from scipy.stats import spearmanr

from implicitbias.claims import Context
from implicitbias.claims.depth.head_rank_accuracy import CLAIM, spearman

CELLS = list(GOOD)
RISING = {c: 0.80 + 0.02 * GOOD[c] for c in CELLS}  # accuracy a monotone function of rank: rho = 1
FALLING = {c: 1.0 - 0.02 * GOOD[c] for c in CELLS}  # rho = -1
WEAK = dict(zip(CELLS, [0.80 + 0.01 * k for k in (2, 5, 7, 4, 6, 1, 3)]))  # rho = 0.39: what used to "agree"

SYNTHETIC_VERDICTS = [
    ("agrees", grid(GOOD, RISING)),
    ("disagrees", grid(GOOD, FALLING)),
    ("inconclusive", grid(GOOD, WEAK)),
    ("not run", MISSING),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


def test_weak_positive_correlation_over_seven_cells_is_not_enough():
    v = CLAIM.judge(grid(GOOD, WEAK))
    assert 0.3 < v.numbers["rho"] < 0.5 and v.numbers["n"] == 7 and v.numbers["p_greater"] > 0.05
    assert "n = 7" in v.measured


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_p_value_is_the_fraction_of_pairings(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=6), rng.normal(size=6)
    rho = spearmanr(x, y).statistic
    null = [spearmanr(np.array(p), y).statistic for p in itertools.permutations(x)]
    got = spearman(x, y)
    assert got.exact and got.rho == pytest.approx(rho)
    assert got.p_greater == pytest.approx(np.mean(np.array(null) >= rho - 1e-12))
    assert got.p_less == pytest.approx(np.mean(np.array(null) <= rho + 1e-12))


def test_render_draws_the_scatter(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    assert "accuracy vs rank" in CLAIM.render(ctx, grid(GOOD, RISING), CLAIM.judge(grid(GOOD, RISING)))
    assert CLAIM.render(ctx, MISSING, CLAIM.judge(MISSING)) == ""


NEAR_5_PERCENT = [((3, 4, 6, 0, 5, 1, 2), "agrees"), ((3, 4, 5, 1, 6, 0, 2), "inconclusive")]  # p 0.044, 0.055


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("order, expected", NEAR_5_PERCENT)
def test_the_significance_is_5_percent_a_p_value_10_percent_either_side_decides(order, expected, sign):
    """The bound moved by 20% (0.04 or 0.06) flips one of these: accuracies ordered so that the exact
    one-sided p (all 5040 pairings enumerated here, rho = 1 - 6 sum d^2 / (n (n^2 - 1)) without ties) is
    0.044 or 0.055, rising with the rank (sign 1) or falling (sign -1: disagrees where it agreed)."""
    assert CLAIM.threshold("significance") == 0.05
    acc = dict(zip(CELLS, [0.85 + sign * 0.01 * k for k in order]))
    x = np.argsort(np.argsort([GOOD[c] for c in CELLS]))
    y = np.argsort(np.argsort(list(acc.values())))
    pairings = np.array(list(itertools.permutations(y)))
    null = 1 - 6 * ((pairings - x) ** 2).sum(1) / (7 * 48)
    rho = 1 - 6 * ((y - x) ** 2).sum() / (7 * 48)
    p = np.mean(sign * null >= sign * rho - 1e-12)
    assert (0.04 < p < 0.05) if expected == "agrees" else (0.05 < p < 0.06)
    wanted = {"agrees": "agrees" if sign > 0 else "disagrees", "inconclusive": "inconclusive"}[expected]
    assert CLAIM.judge(grid(GOOD, acc)).verdict == wanted


def test_fewer_than_three_cells_have_no_rho_and_three_are_enumerated():
    """Two points: no rho, p = 1 (exact, nothing to permute); three in the same order: rho = 1, reached
    by one pairing of the 3! = 6 (p_greater 1/6), and every pairing has rho <= 1 (p_less 1)."""
    two = spearman([1.0, 2.0], [3.0, 4.0])
    assert np.isnan(two.rho) and (two.p_greater, two.p_less, two.n, two.exact) == (1.0, 1.0, 2, True)
    three = spearman([1.0, 2.0, 3.0], [3.0, 4.0, 5.0])
    assert three.rho == pytest.approx(1.0) and three.p_greater == pytest.approx(1 / 6) and three.p_less == 1.0


def test_measured_says_the_p_value_is_exact():
    assert "exact permutation p = " in CLAIM.judge(grid(GOOD, RISING)).measured
