"""Section 5 on the deep UFM: after unregularised gradient descent from Gaussian init, the
effective rank (Roy-Vetterli) of the mean-logit matrix decreases with depth and increases with
width, over a grid with several seeds (a bigger grid in the slow tier)."""

import numpy as np
import pytest

from implicitbias.numerics.ufm.depth_rank import trained_rank


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


def test_rank_falls_with_depth_and_rises_with_width():
    assert_trends(rank_grid([1, 3, 6], [16, 64], seeds=range(2)))


@pytest.mark.slow
def test_rank_trends_on_the_full_grid():
    assert_trends(rank_grid([1, 2, 3, 4, 5, 6], [16, 32, 64, 128, 256], seeds=range(3), steps=2000))
