"""The solvers' SVD (``numerics.metrics.rank.svd``) decides every finite matrix, also where LAPACK's gesdd
does not converge, and the polish goes through such a matrix instead of stopping.

The recorded matrix is the 28 x 28 gap matrix on which numpy's SVD (gesdd, OpenBLAS 0.3.31) raised
"SVD did not converge" inside ``solver.polish`` in the K = 28, effort 6, seed 3 search of the
self-consistency sweep; whether gesdd fails on it depends on the LAPACK build, so the tests also force
the failure.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.numerics.maxmargin.codes import kgon_code
from implicitbias.numerics.maxmargin.solver import polish
from implicitbias.numerics.metrics import rank
from implicitbias.numerics.metrics.rank import svd

RECORDED = Path(__file__).with_name("data") / "gesdd_nonconvergent_k28.npy"


def _check_decomposition(A, U, s, Vt):
    n = A.shape[0]
    assert np.all(np.diff(s) <= 0) and s[-1] >= 0
    assert np.abs(U.T @ U - np.eye(n)).max() < 1e-12
    assert np.abs(Vt @ Vt.T - np.eye(n)).max() < 1e-12
    assert np.abs((U * s) @ Vt - A).max() < 1e-12 * max(1.0, s[0])
    # the singular values against the values-only route (another LAPACK path) and the eigenvalues of A^T A
    assert np.allclose(s, np.linalg.svd(A, compute_uv=False), rtol=0, atol=1e-12 * s[0])
    assert np.allclose(s**2, np.sort(np.linalg.eigvalsh(A.T @ A))[::-1], rtol=0, atol=1e-10 * s[0] ** 2)


def test_the_recorded_matrix_is_decomposed():
    A = np.load(RECORDED)
    assert A.shape == (28, 28) and np.isfinite(A).all()
    _check_decomposition(A, *svd(A))


class _FailingGesdd:
    """LAPACK's gesdd (``rank._GESDD``) reporting non-convergence (info > 0) for its first ``failures`` calls."""

    def __init__(self, failures):
        self.failures, self.real, self.calls = failures, rank._GESDD, 0

    def __call__(self, A, *args, **kwargs):
        if self.failures > 0:
            self.failures -= 1
            self.calls += 1
            U, s, Vt, _ = self.real(A, *args, **kwargs)
            return np.full_like(U, np.nan), np.full_like(s, np.nan), np.full_like(Vt, np.nan), 1
        return self.real(A, *args, **kwargs)


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 30), st.integers(0, 2**31 - 1))
def test_a_gesdd_failure_falls_back_to_gesvd(n, seed):
    A = np.random.default_rng(seed).standard_normal((n, n))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rank, "_GESDD", _FailingGesdd(1))
        U, s, Vt = svd(A)
    _check_decomposition(A, U, s, Vt)


def test_a_non_finite_matrix_still_raises():
    A = np.eye(3)
    A[0, 1] = np.nan
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rank, "_GESDD", _FailingGesdd(1))
        with pytest.raises(np.linalg.LinAlgError):
            svd(A)


def test_the_polish_goes_through_gesdd_failures():
    Z0 = kgon_code(7) + 0.05 * np.random.default_rng(5).standard_normal((7, 7))
    p = 2 / 5
    plain = polish(Z0, p)
    failing = _FailingGesdd(3)  # its first three objective evaluations
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rank, "_GESDD", failing)
        rescued = polish(Z0, p)
    assert failing.calls == 3
    assert rescued.objective == pytest.approx(plain.objective, rel=1e-8)
    assert rescued.rank == plain.rank
