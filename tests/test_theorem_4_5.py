"""Theorem 4.5: under small Gaussian init the initial logit velocity dZ/dt(0) aligns with the
simplex-ETF direction S kron 1_n^T, better with width (gap ~ d^(-1/2)) and worse with depth.

dZ/dt(0) is measured by a torch Jacobian-vector product of Z(theta) along -grad l (autograd), the
ETF direction is explicit; nothing here is produced by the code under test's own prediction.
"""

import numpy as np
import pytest

from implicitbias.numerics.ufm.deep_ufm import hadamard_init, logit_velocity
from implicitbias.numerics.ufm.etf_alignment import (
    etf_direction,
    fit_exponent,
    velocity_alignment,
)

SEEDS = range(4)


def mean_alignment(**config):
    cells = [velocity_alignment({"K": 4, "n": 2, "scale": 0.1, **config, "seed": s}) for s in SEEDS]
    return np.mean([c["cosine"] for c in cells]), np.mean([c["gap"] for c in cells])


def test_cosine_rises_with_width_with_gap_exponent_near_minus_half():
    widths = [16, 64, 256, 1024]
    cos, gap = zip(*(mean_alignment(L=2, d=d) for d in widths))
    assert np.all(np.diff(cos) > 0) and cos[-1] > 0.99
    beta, _ = fit_exponent(widths, gap)
    assert -0.65 < beta < -0.35


def test_cosine_falls_with_depth():
    cos = [mean_alignment(L=L, d=64)[0] for L in (1, 2, 4, 6)]
    assert np.all(np.diff(cos) < 0)


def test_exact_etf_velocity_at_the_origin_of_an_orthogonal_model():
    # With orthogonal (rather than random) factors the velocity is exactly the ETF direction at
    # small scale: a check that the measurement itself has no bias.
    v = logit_velocity(hadamard_init(np.full((3, 4), 1e-3), n=2)).numpy()
    e = etf_direction(4, 2)
    assert np.sum(v * e) / (np.linalg.norm(v) * np.linalg.norm(e)) == pytest.approx(1.0, abs=1e-6)
