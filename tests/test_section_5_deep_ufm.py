"""Claim "Section 5 (deep UFM)": after unregularised gradient descent from Gaussian init, the
effective rank (Roy-Vetterli) of the mean-logit matrix decreases with depth and increases with
width, over a grid with several seeds (a bigger grid in the slow tier); and the claim's verdict
rule on synthetic grids."""

import numpy as np
import pytest

from implicitbias.claims import Evidence
from implicitbias.claims.depth.section_5_deep_ufm import CLAIM, Measured, TrainedRun, trained_rank


def rank_grid(depths, widths, seeds, steps=1500):
    grid = np.empty((len(depths), len(widths)))
    for i, L in enumerate(depths):
        for j, d in enumerate(widths):
            cells = [
                trained_rank({"K": 10, "L": L, "d": d, "n": 1, "scale": 1.0, "lr": 0.2, "steps": steps, "seed": s})
                for s in seeds
            ]
            assert not any(c["diverged"] for c in cells)
            assert all(c["margin"] > 0 for c in cells)  # trained to separation
            grid[i, j] = np.mean([c["roy_vetterli"] for c in cells])
    return grid


def assert_trends(grid):
    assert np.all(np.diff(grid, axis=0) < 0), grid  # deeper -> lower rank
    assert np.all(np.diff(grid, axis=1) > 0), grid  # wider -> higher rank


# slow (21 s): `implicitbias verify` and the default report run this claim; its rule is tested on synthetic evidence
@pytest.mark.slow
def test_rank_falls_with_depth_and_rises_with_width():
    assert_trends(rank_grid([1, 3, 6], [16, 64], seeds=range(2)))


@pytest.mark.slow
def test_rank_trends_on_the_full_grid():
    assert_trends(rank_grid([1, 2, 3, 4, 5, 6], [16, 32, 64, 128, 256], seeds=range(3), steps=2000))


def test_a_step_too_large_is_recorded_as_diverged():
    rec = trained_rank({"K": 4, "L": 6, "d": 16, "n": 1, "scale": 3.0, "lr": 50.0, "steps": 200, "seed": 0})
    assert rec["diverged"] and "non-finite" in rec["message"]


def _evidence(grid, diverged=()):
    cells = []
    for i, L in enumerate((1, 3, 6)):
        for j, d in enumerate((16, 64)):
            for s in range(2):
                bad = (L, d, s) in diverged
                cells.append(TrainedRun(K=10, L=L, d=d, n=1, scale=1.0, seed=s, lr=0.2, steps=10, diverged=bad,
                                        **({} if bad else {"roy_vetterli": grid[i][j] + 0.01 * s, "nc1": 0.0,
                                                           "nc2": 0.1, "nc3": 0.2, "nc4_agreement": 1.0})))
    return Evidence("synthetic", Measured(tuple(cells)))


GOOD = [[8.0, 8.5], [5.0, 6.0], [3.0, 4.5]]
SYNTHETIC_VERDICTS = [
    ("agrees", _evidence(GOOD)),
    ("agrees", _evidence(GOOD, diverged={(6, 16, 1)})),  # a diverged seed is counted, the other one judged
    ("disagrees", _evidence([[8.0, 8.5], [5.0, 6.0], [5.5, 6.5]])),  # rises from L = 3 to 6
    ("disagrees", _evidence([[8.0, 7.0], [5.0, 6.0], [3.0, 4.5]])),  # falls with width at L = 1
    ("inconclusive", _evidence([[8.0, 8.5], [5.0, 6.0], [4.95, 5.8]])),  # a step within 0.1 rank units
    ("inconclusive", _evidence(GOOD, diverged={(6, 16, 0), (6, 16, 1)})),  # a cell with no converged run
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


@pytest.mark.parametrize("step, expected", [(0.11, "agrees"), (0.09, "inconclusive")])
@pytest.mark.parametrize("where", ["depth", "width"])
def test_the_trend_step_is_0_1_rank_units_a_step_10_percent_either_side_decides(step, expected, where):
    """The smallest step of the grid 0.09 or 0.11 rank units (from L = 3 to 6 at d = 16, or from d = 16 to 64
    at L = 6): a bound moved by 20% (0.08 or 0.12) flips one of these."""
    assert CLAIM.threshold("trend_step") == 0.1
    last = [5.0 - step, 5.5] if where == "depth" else [3.0, 3.0 + step]
    grid = [[8.0, 8.5], [5.0, 6.0], last]
    assert CLAIM.judge(_evidence(grid)).verdict == expected


def test_render_shows_grid_and_nc_table(tmp_path, store):
    from implicitbias.claims import Context

    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = _evidence(GOOD)
    md = CLAIM.render(ctx, ev, CLAIM.judge(ev))
    assert "nc4_agreement" in md and "8.50" in md


def test_measure_runs_the_grid_through_the_store(store, tmp_path):
    from implicitbias.claims import Context
    from implicitbias.claims.depth.section_5_deep_ufm import Config

    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(K=4, depths=(1, 4), widths=(8, 32), seeds=1, steps=300))
    assert len(ev.data.cells) == 4 and not any(c.diverged for c in ev.data.cells)
    v = CLAIM.judge(ev)
    assert v.verdict in CLAIM.outcomes and v.numbers["depths"] == [1, 4]
