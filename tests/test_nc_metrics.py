"""NC1-NC4 against closed forms: exact simplex ETF (all zero, agreement 1), regular K-gon
(NC2 = sqrt(2 - 2 sqrt(2/(K-1)))), the rank-(K-1) pseudo-inverse, and argmax-vs-argmin in NC4."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ortho_group

from implicitbias.numerics.metrics.nc_metrics import nc_metrics
from implicitbias.theory.params import ParameterError


def collapsed(means, n, rotation):
    """n copies of each class mean (rows), embedded in R^d by ``rotation`` (d x r)."""
    M = means @ rotation.T
    return np.repeat(M, n, axis=0), np.repeat(np.arange(len(means)), n), M


@settings(max_examples=15, deadline=None)
@given(
    K=st.integers(3, 12),
    n=st.integers(1, 4),
    extra=st.integers(0, 5),
    scale=st.floats(0.1, 10),
    seed=st.integers(0, 10**6),
)
def test_simplex_etf_is_perfect_collapse(K, n, extra, scale, seed):
    d = K + extra
    rot = ortho_group.rvs(d, random_state=seed)[:, :K]
    H, y, M = collapsed(scale * (np.eye(K) - 1 / K), n, rot)
    shift = np.random.default_rng(seed).standard_normal(d)  # a global mean does not matter
    m = nc_metrics(H + shift, y, M, b=-M @ shift)
    assert m.nc1 == pytest.approx(0, abs=1e-20)
    assert m.nc2 == pytest.approx(0, abs=1e-7)
    assert m.nc2_equinorm == pytest.approx(0, abs=1e-7) and m.nc2_equiangularity == pytest.approx(0, abs=1e-7)
    assert m.nc3 == pytest.approx(0, abs=1e-7)
    assert m.nc4_agreement == 1.0


@pytest.mark.parametrize("K", [3, 5, 8, 10])
def test_regular_k_gon_has_the_closed_form_nc2(K):
    angles = 2 * np.pi * np.arange(K) / K
    gon = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    H, y, M = collapsed(gon, 3, ortho_group.rvs(6, random_state=K)[:, :2])
    m = nc_metrics(H, y, M)
    assert m.nc1 == pytest.approx(0, abs=1e-20)
    assert m.nc2 == pytest.approx(np.sqrt(2 - 2 * np.sqrt(2 / (K - 1))), abs=1e-7)
    assert m.nc3 == pytest.approx(0, abs=1e-7)
    assert m.nc4_agreement == 1.0


def test_nc1_uses_the_rank_k_minus_1_pseudo_inverse():
    K, n, d = 5, 200, 8
    rng = np.random.default_rng(0)
    means = np.eye(K, d) * 3.0
    y = np.repeat(np.arange(K), n)
    sigma = 0.1
    H = means[y] + sigma * rng.standard_normal((K * n, d))
    # Sigma_B has K-1 = 4 non-zero eigenvalues 9/K (centred I_K means); NC1 = tr(Sigma_W Sigma_B^+)/K
    # restricted to the 4-dim between-class span: about sigma^2 * 4 * K / 9 / K.
    expected = sigma**2 * (K - 1) / (9.0 / K) / K
    assert nc_metrics(H, y, means).nc1 == pytest.approx(expected, rel=0.15)


def test_nc4_compares_argmax_of_classifier_with_nearest_mean():
    H = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1], [0.1, 0.9]])
    y = np.array([0, 1, 0, 1])
    assert nc_metrics(H, y, np.eye(2)).nc4_agreement == 1.0  # argmax of W h agrees everywhere
    assert nc_metrics(H, y, -np.eye(2)).nc4_agreement == 0.0  # an argmin classifier would score 1
    assert nc_metrics(H, y, np.eye(2), b=np.array([5.0, 0.0])).nc4_agreement == 0.5


@pytest.mark.parametrize(
    "H, y, W, name",
    [
        (np.full((4, 2), np.nan), [0, 1, 0, 1], np.eye(2), "H"),
        (np.ones((4, 2)), [0, 1, 0, 1], np.ones((2, 3)), "H must be"),
        (np.ones((4, 2)), [0, 0, 0, 0], np.eye(2), "y must contain"),
        (np.ones((4, 2)), [0, 1, 0, 7], np.eye(2), "y must hold"),
    ],
)
def test_bad_input(H, y, W, name):
    with pytest.raises(ParameterError, match=f"^{name}"):
        nc_metrics(H, np.array(y), W)
