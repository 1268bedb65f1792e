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


def test_nc3_at_a_generic_point_is_the_unsquared_distance_of_normalised_matrices():
    """W = 3.7 (cos phi M + sin phi N), N orthogonal to M with |N| = |M|: NC3 = sqrt(2 - 2 cos phi)
    (the reference code's convention: its square).  A generic scale of W and angle phi."""
    rng = np.random.default_rng(1)
    K, d, phi = 4, 6, 0.7
    means = rng.standard_normal((K, d))
    H, y = np.repeat(means, 3, axis=0), np.repeat(np.arange(K), 3)
    M = means - means.mean(axis=0)
    N = rng.standard_normal((K, d))
    N -= np.sum(N * M) / np.sum(M * M) * M
    N *= np.linalg.norm(M) / np.linalg.norm(N)
    W = 3.7 * (np.cos(phi) * M + np.sin(phi) * N)
    assert nc_metrics(H, y, W).nc3 == pytest.approx(np.sqrt(2 - 2 * np.cos(phi)), rel=1e-12)
    assert nc_metrics(H, y, W, convention="papyan").nc3 == pytest.approx(2 - 2 * np.cos(phi), rel=1e-12)


def _unbalanced(a=2.0, b=0.5, delta=0.3):
    """Class means +-a e_1, +-b e_2 (K = 4, d = 4); class 0 has 4 samples, the others 2, spread
    symmetrically along e_3, e_4 so the class means are exact."""
    e = np.eye(4)
    means = [a * e[0], -a * e[0], b * e[1], -b * e[1]]
    H = [means[0] + s * delta * e[k] for k in (2, 3) for s in (1, -1)]
    H += [m + s * delta * e[2] for m in means[1:] for s in (1, -1)]
    y = [0] * 4 + [1, 1, 2, 2, 3, 3]
    return np.array(H), np.array(y), np.array(means)


def test_equinorm_at_unbalanced_classes_and_both_global_means():
    a, b = 2.0, 0.5
    H, y, means = _unbalanced(a, b)
    # centred on the mean of the class means (0): norms (a, a, b, b)
    m = nc_metrics(H, y, means)
    assert m.nc2_equinorm == pytest.approx(abs(a - b) / (a + b), rel=1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):  # the reference's NC1 inverts a zero eigenvalue here
        reference = nc_metrics(H, y, means, convention="papyan")
    assert reference.nc2_equinorm == pytest.approx(abs(a - b) / (a + b) * np.sqrt(4 / 3), rel=1e-12)
    # centred on the sample mean (4 a - 2 a) / 10 e_1 = 0.2 a e_1: norms 0.8 a, 1.2 a, sqrt(b^2 + 0.04 a^2) twice
    norms = np.array([0.8 * a, 1.2 * a, np.hypot(b, 0.2 * a), np.hypot(b, 0.2 * a)])
    expected = np.sqrt(np.mean((norms - norms.mean()) ** 2)) / norms.mean()
    assert nc_metrics(H, y, means, global_mean="samples").nc2_equinorm == pytest.approx(expected, rel=1e-12)


def test_nc1_at_unbalanced_classes_with_rank_deficient_between_class_spread():
    """Sigma_B has rank 2 < K - 1 = 3 (means in span(e_1, e_2)) and the within-class spread lies along
    e_3, e_4: the package's pseudo-inverse drops the null eigenvalue and sees NC1 = 0; the reference
    code inverts it (rounding noise) and reports an enormous or non-finite value."""
    H, y, means = _unbalanced()
    assert nc_metrics(H, y, means).nc1 == pytest.approx(0.0, abs=1e-20)
    with np.errstate(divide="ignore", invalid="ignore"):
        reference = nc_metrics(H, y, means, convention="papyan").nc1
    assert not np.isfinite(reference) or abs(reference) > 1e6


def test_nc1_at_a_generic_full_rank_point():
    """Sigma_B = diag(a^2/2, b^2/2, 0, 0) restricted to rank 2; within-class spread along e_1 and e_2
    with class-size weights: NC1 = (w_1 / (a^2 / 2) + w_2 / (b^2 / 2)) / K, w the Sigma_W diagonal."""
    a, b, delta = 2.0, 0.5, 0.1
    e = np.eye(3)
    means = [a * e[0], -a * e[0], b * e[1], -b * e[1]]
    H = [m + s * delta * e[k] for m, reps in zip(means, (2, 1, 1, 1)) for _ in range(reps) for k in (0, 1) for s in (1, -1)]
    y = [c for c, reps in enumerate((2, 1, 1, 1)) for _ in range(reps * 4)]
    H, y = np.array(H), np.array(y)
    w = delta**2 / 2  # each sample moves along one of e_1, e_2 with probability 1/2: variance delta^2 / 2 per axis
    K = 4
    expected = (w / (a**2 / 2) + w / (b**2 / 2)) / K
    assert nc_metrics(H, y, np.array(means)).nc1 == pytest.approx(expected, rel=1e-12)


def test_unknown_convention_is_a_clear_error():
    H, y, means = _unbalanced()
    with pytest.raises(ParameterError, match="^convention"):
        nc_metrics(H, y, means, convention="zhu")
    with pytest.raises(ParameterError, match="^global_mean"):
        nc_metrics(H, y, means, global_mean="median")


def test_a_label_equal_to_K_is_out_of_range():
    with pytest.raises(ParameterError, match=r"^y must hold one integer label in 0\.\.1 per row"):
        nc_metrics(np.ones((4, 2)), np.array([0, 1, 0, 2]), np.eye(2))
