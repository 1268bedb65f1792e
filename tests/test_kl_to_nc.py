"""KL divergence to NC, KL(uniform || sigma / sum sigma): a Lyapunov function of the shallow flow
(non-increasing along every L = 1 trajectory tried), unbounded along deep flows from small init."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import entropy

from implicitbias.numerics.metrics.kl_to_nc import kl_to_nc, kl_to_nc_of_matrix
from implicitbias.numerics.ufm.spectral_flow import integrate
from implicitbias.theory.params import ParameterError
from implicitbias.theory.spectral_ode import SpectralODE


@settings(max_examples=20, deadline=None)
@given(K=st.integers(2, 64), seed=st.integers(0, 10**6))
def test_definition_against_scipy_entropy(K, seed):
    s = np.random.default_rng(seed).lognormal(0, 1, K - 1)
    assert kl_to_nc(s) == pytest.approx(entropy(np.full(K - 1, 1 / (K - 1)), s / s.sum()), rel=1e-12, abs=1e-14)
    etf = 3.7 * (np.eye(K) - 1 / K)
    assert kl_to_nc_of_matrix(etf) == pytest.approx(0.0, abs=1e-12)


@settings(max_examples=12, deadline=None)
@given(
    k=st.integers(2, 4),
    log_scale=st.floats(-4, 1),
    spread=st.floats(0.05, 2.0),
    seed=st.integers(0, 10**6),
)
def test_kl_is_non_increasing_along_shallow_trajectories(k, log_scale, spread, seed):
    K = 2**k
    S0 = 10.0**log_scale * np.exp(spread * np.random.default_rng(seed).standard_normal(K - 1))
    run = integrate(SpectralODE(K, 1), S0, 1e6, margin=15.0, t_eval=np.geomspace(1e-3, 1e6, 300))
    assume(run.margin[0] < 10.0)  # a start already past the stopping margin has no trajectory to test
    kl = run.kl
    assert np.all(np.diff(kl) <= 1e-9 * (1 + kl[:-1]))
    assert kl[-1] < kl[0]


@pytest.mark.parametrize("L", [3, 4])
def test_kl_grows_without_bound_along_deep_trajectories(L):
    K = 8
    S0 = 1e-3 * np.exp(0.3 * np.random.default_rng(L).standard_normal(K - 1))
    times = np.geomspace(1e-2, 1e12, 200)
    run = integrate(SpectralODE(K, L), S0, times[-1], t_eval=times, rtol=1e-8, atol=1e-10)
    kl = run.kl
    late = kl[len(kl) // 2 :]
    assert np.all(np.diff(late) > 0)  # still rising at the end of a very long run
    assert kl[-1] > 10 * kl[0]
    assert run.effective_rank[-1] < K - 1 - 2  # the spectrum went low rank


def test_bad_spectra_are_refused():
    with pytest.raises(ParameterError, match="^spectrum"):
        kl_to_nc([1.0, np.nan])
    with pytest.raises(ParameterError, match="^Zbar"):
        kl_to_nc_of_matrix(np.ones((2, 3)))


# -- the claim "KL to NC (s. 4)": its cell and its verdict rule -------------------------------------

from implicitbias.claims import Context, Evidence  # noqa: E402
from implicitbias.claims.depth.kl_to_nc import (  # noqa: E402
    CLAIM,
    Config,
    Measured,
    Trajectory,
    trajectory_configs,
    trajectory_record,
)


def test_trajectory_record_carries_solver_status():
    (config,) = trajectory_configs(4, [2], 1, 0.01, 0.3, 0, 8.0, 1e6)
    rec = trajectory_record(config)
    assert rec["success"] is True and isinstance(rec["message"], str) and rec["event"] == "margin"
    assert rec["margin"][-1] == pytest.approx(8.0, rel=1e-6)


def _run(L, kl, success=True):
    return Trajectory(K=4, L=L, n=1, scale=1e-3, eps=0.3, seed=0, t_end=1e8, points=len(kl), times=[], singular_values=[],
                      margin=[], effective_rank=[], kl=list(kl), event="margin", success=success,
                      message="ok" if success else "Excess work done")


def _evidence(shallow=(0.05, 0.02, 0.01, 0.001), deep=(0.05, 0.1, 1.0, 2.0, 3.0), success=True):
    runs = (_run(1, shallow), _run(2, deep), _run(3, deep, success), _run(4, deep))
    return Evidence("synthetic", Measured(runs, deep_from=3))


SYNTHETIC_VERDICTS = [
    ("agrees", _evidence()),
    ("disagrees", _evidence(shallow=(0.05, 0.02, 0.03, 0.001))),  # the shallow KL rises: not Lyapunov
    ("disagrees", _evidence(deep=(0.05, 0.1, 0.2, 0.3, 0.4))),  # deep runs do not diverge (8-fold)
    ("disagrees", _evidence(deep=(0.05, 0.1, 2.0, 3.0, 2.9))),  # no longer rising at the end
    ("inconclusive", _evidence(success=False)),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


@pytest.mark.parametrize("f, expected", [(1.1, "agrees"), (1 / 1.1, "disagrees")])
def test_each_bound_10_percent_either_side_decides(f, expected):
    """The bound moved by 20% flips one of these: the L = 1 KL rising by 1e-9 / f (lyapunov); a deep
    run growing 10 f-fold (diverges), from a start above the floor and from one below it, measured from
    the floor 1e-3 (kl_floor)."""
    assert (CLAIM.threshold("lyapunov"), CLAIM.threshold("diverges"), CLAIM.threshold("kl_floor")) == (1e-9, 10, 1e-3)
    assert CLAIM.judge(_evidence(shallow=(0.05, 0.02, 0.02 + 1e-9 / f, 0.001))).verdict == expected
    assert CLAIM.judge(_evidence(deep=(0.05, 0.1, 0.2, 0.3, 0.5 * f))).verdict == expected
    assert CLAIM.judge(_evidence(deep=(1e-5, 1e-4, 1e-3, 2e-3, 1e-2 * f))).verdict == expected


@pytest.mark.parametrize("dip, expected", [(-12, "agrees"), (-9, "disagrees")])
def test_the_rising_tail_is_the_last_third_of_the_samples(dip, expected):
    """30 samples: the last 10 must rise.  A dip after sample ``dip`` lies outside them (-12: a tail of
    0.4, 12 samples, would see it) or inside (-9: a tail of 0.27, 8 samples, would not)."""
    assert CLAIM.threshold("rising_tail") == pytest.approx(1 / 3)
    kl = list(np.geomspace(0.05, 5.0, 30))
    kl[dip + 1] = kl[dip] * 0.99
    assert CLAIM.judge(_evidence(deep=kl)).verdict == expected


def test_deep_means_from_deep_from_on():
    """deep_from = 3: an L = 2 run that does not diverge is not judged, the L = 3 run is."""
    ev = Evidence("synthetic", Measured((_run(1, (0.05, 0.02, 0.01)), _run(2, (0.05, 0.05, 0.05)),
                                         _run(3, (0.05, 0.1, 1.0, 2.0))), deep_from=3))
    assert CLAIM.judge(ev).verdict == "agrees"



def test_each_bound_exactly_is_on_the_claim_s_side_of_lyapunov_and_against_divergence():
    """A shallow rise of exactly 1e-9 (from 0 to 1e-9: exact) is no rise; a deep growth of exactly 10-fold
    (0.5 to 5.0: exact) is no divergence (the claim says over 10-fold)."""
    assert CLAIM.judge(_evidence(shallow=(0.05, 0.02, 0.0, 1e-9))).verdict == "agrees"
    v = CLAIM.judge(_evidence(deep=(0.5, 1.0, 2.0, 3.0, 5.0)))
    assert v.verdict == "disagrees" and v.reason == "no divergence for L = [3, 4]"


def test_a_flat_step_at_the_end_is_not_rising():
    v = CLAIM.judge(_evidence(deep=(0.05, 0.1, 1.0, 3.0, 3.0)))
    assert v.verdict == "disagrees" and v.reason == "no divergence for L = [3, 4]"


def test_without_a_shallow_or_a_deep_run_or_with_a_failed_one_it_is_inconclusive_and_says_why():
    ev = _evidence()
    for keep in (lambda r: r.L != 1, lambda r: r.L < 3):
        v = CLAIM.judge(Evidence("synthetic", Measured(tuple(filter(keep, ev.data.runs)), deep_from=3)))
        assert v.verdict == "inconclusive" and v.reason == "needs an L = 1 run and one with L >= 3"
    assert CLAIM.judge(_evidence(success=False)).reason == "L = 3: Excess work done"


def test_claim_end_to_end_on_a_small_config(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(K=4, depths=(1, 3), scale=1e-3, margin=12.0, t_end=1e10))
    v = CLAIM.judge(ev)
    assert v.verdict == "agrees", v
    assert "trajectories" in CLAIM.render(ctx, ev, v)
    assert (tmp_path / "figures" / "dynamics_trajectory.csv").exists()


@pytest.mark.parametrize("bad", [[], [1.0, -0.5], [0.0, 0.0], [1.0, np.inf]])
def test_every_bad_spectrum_is_refused(bad):
    with pytest.raises(ParameterError, match="^spectrum"):
        kl_to_nc(bad)


def test_a_single_mode_and_a_vanishing_mode():
    assert kl_to_nc([2.5]) == 0.0  # K = 2: one active mode, always at NC
    assert kl_to_nc([1.0, 0.0]) == np.inf


@pytest.mark.parametrize("shape", [(2, 3), (1, 1), (2, 2, 2)])
def test_every_bad_mean_logit_matrix_is_refused(shape):
    with pytest.raises(ParameterError, match="^Zbar"):
        kl_to_nc_of_matrix(np.ones(shape))


def test_kl_of_a_generic_matrix_uses_its_top_k_minus_1_singular_values():
    rng = np.random.default_rng(2)
    U, V = np.linalg.qr(rng.normal(size=(3, 3)))[0], np.linalg.qr(rng.normal(size=(3, 3)))[0]
    Zbar = U @ np.diag([3.0, 1.0, 0.2]) @ V.T
    q = np.array([0.75, 0.25])
    assert kl_to_nc_of_matrix(Zbar) == pytest.approx(np.mean(np.log(0.5 / q)), rel=1e-12)
