"""Basin of attraction of NC (balanced Hadamard flow): the fraction of perturbed-NC starts that
end at NC (final effective rank >= K - 1.5) shrinks as depth grows, at a fixed init scale."""

import numpy as np

from implicitbias.numerics.ufm.basin import basin_cell


def fraction_at_nc(L, K=8, scale=0.1, seeds=6):
    cells = [
        basin_cell(
            {
                "K": K,
                "L": L,
                "n": 1,
                "scale": scale,
                "eps": 0.3,
                "seed": s,
                "margin": 20.0,
                "t_end": 1e8,
                "tolerance": 0.5,
            }
        )
        for s in range(seeds)
    ]
    return np.mean([c["at_nc"] for c in cells]), cells


def test_basin_shrinks_with_depth():
    fractions = []
    for L in (1, 2, 4):
        fraction, cells = fraction_at_nc(L)
        assert all(c["margin"] >= 20.0 - 1e-6 for c in cells)
        fractions.append(fraction)
    assert fractions[0] == 1.0
    assert fractions[0] >= fractions[1] >= fractions[2]
    assert fractions[2] < fractions[0]
