"""Hadamard structure: column-softmax of a dyadic logit matrix is dyadic (exact for K = 4, 8;
numeric for larger K), so the cross-entropy gradient is diagonal in the Hadamard basis."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import softmax

from implicitbias.numerics.ufm.deep_ufm import hadamard_init
from implicitbias.theory.hadamard import (
    DyadicProof,
    dyadic_defect,
    dyadic_matrix,
    softmax_dyadic_proof,
    sylvester,
    walsh_character,
)
from implicitbias.theory.params import ParameterError


@pytest.mark.parametrize("K", [2, 4, 8])
def test_symbolic_softmax_of_dyadic_is_dyadic(K):
    proof = softmax_dyadic_proof(K)
    assert proof.softmax_is_dyadic and proof.gradient_is_diagonal
    assert proof.eigenvalues[0] == 0  # the j = 0 mode gets no gradient


@settings(max_examples=15, deadline=None)
@given(k=st.integers(4, 8), seed=st.integers(0, 2**31 - 1), spread=st.floats(0.1, 20.0))
def test_numeric_softmax_of_dyadic_is_dyadic_large_K(k, seed, spread):
    K = 2**k
    f = np.random.default_rng(seed).normal(0, spread, K)
    M = dyadic_matrix(f)
    P = softmax(M, axis=0)
    assert dyadic_defect(P) < 1e-12
    Q = sylvester(K) / np.sqrt(K)
    D = Q @ (P - np.eye(K)) @ Q
    assert np.linalg.norm(D - np.diag(np.diag(D))) <= 1e-13 * K  # entries of P - I are O(1)


@pytest.mark.parametrize("K", [2, 8, 64])
def test_walsh_characters_are_the_sylvester_columns(K):
    H = sylvester(K)
    m = np.arange(K)
    for j in range(K):
        assert np.array_equal(walsh_character(j, m), H[:, j])
    assert np.allclose(H @ H.T, K * np.eye(K))
    a, b = np.meshgrid(m, m)
    assert np.array_equal(walsh_character(5 % K, a) * walsh_character(5 % K, b), walsh_character(5 % K, a ^ b))


@settings(max_examples=10, deadline=None)
@given(K=st.integers(3, 100).filter(lambda k: k & (k - 1)))
def test_non_power_of_two_is_a_clear_error(K):
    with pytest.raises(ParameterError, match="^K must be a power of two"):
        sylvester(K)
    with pytest.raises(ParameterError, match="^K must be a power of two"):
        hadamard_init(np.ones((2, K)))


def test_sizes_are_checked_at_both_ends():
    assert sylvester(2).tolist() == [[1, 1], [1, -1]]  # K = 2 is allowed everywhere
    assert dyadic_matrix([1.0, 2.0]).tolist() == [[1.0, 2.0], [2.0, 1.0]]
    assert dyadic_defect(np.eye(2)) == 0.0
    for call in (lambda: sylvester(2**15), lambda: dyadic_matrix(np.zeros(2**15)),
                 lambda: dyadic_defect(np.zeros((2**15, 1))), lambda: softmax_dyadic_proof(32)):
        with pytest.raises(ParameterError, match="^K"):
            call()
    assert not DyadicProof(4, True, False, []).holds and not DyadicProof(4, False, True, []).holds


def test_dyadic_defect_at_a_generic_matrix():
    """M = [[1, 2], [3, 4]]: M - M[a XOR b, 0] = [[0, -1], [0, 3]], normalised by max |M| = 4."""
    assert dyadic_defect(np.array([[1.0, 2.0], [3.0, 4.0]])) == pytest.approx(0.75)
    assert dyadic_defect(7.0 * np.array([[1.0, 2.0], [3.0, 4.0]])) == pytest.approx(0.75)


def test_proof_reports_the_walsh_eigenvalues_of_the_gradient():
    """K = 2: P - I has Walsh eigenvalues 0 and -2 e^{f_1} / (e^{f_0} + e^{f_1})."""
    import sympy as sp

    proof = softmax_dyadic_proof(2)
    f0, f1 = sp.symbols("f0 f1", real=True)
    assert proof.holds
    assert sp.simplify(proof.eigenvalues[0]) == 0
    assert sp.simplify(proof.eigenvalues[1] + 2 * sp.exp(f1) / (sp.exp(f0) + sp.exp(f1))) == 0
