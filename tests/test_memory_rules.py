"""The pieces of Spec B's memory rules (``claims.forgetting.memory_rules``): sides of a bound, every part
against any part, the operating characteristics against closed forms, the underpowered gate."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import f as central_f
from scipy.stats import ncf

from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.numerics.metrics import memory_stats as ms
from implicitbias.theory.params import ParameterError

SHAPE = (2.0, 1.0, 0.0, -0.5, -2.5)


def interval(lo, hi):
    return ms.Interval((lo + hi) / 2, lo, hi)


def test_the_paper_numbers_give_the_bounds():
    assert float(mr.FORGOTTEN) == pytest.approx(math.sqrt(4.0 / 26.5)) == pytest.approx(0.3885, abs=1e-4)
    assert float(mr.ALMOST_ZERO) == pytest.approx(0.1509, abs=1e-4)
    assert mr.WORLD == pytest.approx(1 / math.sqrt(4.0 / 26.5))


@pytest.mark.parametrize("lo, hi, below, expected", [
    (0.1, 0.3, True, "agrees"), (0.5, 0.7, True, "disagrees"), (0.3, 0.5, True, "inconclusive"),
    (0.5, 0.7, False, "agrees"), (0.1, 0.3, False, "disagrees"), (0.3, 0.5, False, "inconclusive"),
    (math.nan, 0.3, True, "inconclusive"),
])
def test_side_of_a_bound(lo, hi, below, expected):
    assert mr.side(interval(lo, hi), 0.4, below) == expected


def test_every_part_must_agree_and_any_part_disagreeing_disagrees():
    assert mr.combine(["agrees", "agrees"]) == "agrees"
    assert mr.combine(["agrees", "inconclusive"]) == "inconclusive"
    assert mr.combine(["agrees", "disagrees"]) == "disagrees"
    assert mr.combine(["inconclusive", "disagrees"]) == "disagrees"
    assert mr.combine([]) == "inconclusive"


def _memory(n=6, sigma=1.0, m=2.0):
    y = ms.simulate_tables(SHAPE, m, sigma, n, 1, np.random.default_rng(1))[0].astype(float)
    return ms.memory(y, permute=False)


@pytest.mark.parametrize("world", [mr.WORLD, 1.25])
def test_oc_of_the_exact_interval_matches_the_noncentral_f_closed_form(world):
    """side(s interval, 1) agrees iff F exceeds the 97.5% point of the noncentral F at the bound;
    so P(agrees | s) = 1 - ncf.cdf(F_crit; lambda(s)); likewise for disagreeing; worlds a factor
    ``world`` from the bound (the default, and 1.25 close to it)."""
    mem = _memory()
    n, k = 6, 5
    df1, df2 = k - 1, (n - 1) * (k - 1)
    oc = mr.oc_snr(mem, 1.0, sims=20000, seed=2, n=n, world=world)
    lam = lambda s: n * df1 * s**2  # noqa: E731
    f_agree = ncf.ppf(0.975, df1, df2, lam(1.0))  # lower end above 1
    f_disagree = ncf.ppf(0.025, df1, df2, lam(1.0))  # upper end below 1
    true_s, false_s = world, 1 / world
    agree_false = 1 - ncf.cdf(f_agree, df1, df2, lam(false_s))
    disagree_true = ncf.cdf(f_disagree, df1, df2, lam(true_s))
    sd = math.sqrt(0.05 * 0.95 / 20000)
    assert abs(oc.agree_false - agree_false) < 4 * sd + 1e-4
    assert abs(oc.disagree_true - disagree_true) < 4 * sd + 1e-4
    inconclusive_true = ncf.cdf(f_agree, df1, df2, lam(true_s)) - ncf.cdf(f_disagree, df1, df2, lam(true_s))
    assert abs(oc.inconclusive_true - inconclusive_true) < 4 * math.sqrt(0.25 / 20000)
    assert central_f.cdf(f_agree, df1, df2) > 0.975  # the bound is above 0: F_crit beyond the central point


def test_oc_of_the_robust_interval_matches_an_independent_simulation_of_its_tables():
    """``oc_snr(robust=True)`` at 1.25x the bound: tables drawn here by hand at the memory's components
    (effects rescaled to s x sigma, normal noise), each interval from ``robust_snr_ends``; the rates agree
    within Monte Carlo error, and the exact interval's P(inconclusive | true) differs from them."""
    mem, sims, n, world = _memory(n=8, m=1.6), 800, 8, 1.25
    rng = np.random.default_rng(9)
    a = np.asarray(mem.shape) - np.mean(mem.shape)
    unit = a / math.sqrt((a**2).sum() / (len(a) - 1))

    def ends(s):
        y = s * mem.sigma * unit + mem.sigma * rng.standard_normal((sims, n, len(a)))
        return ms.robust_snr_ends(y, resamples=mr.ROBUST_RESAMPLES, seed=int(rng.integers(1000)))

    (lo_t, hi_t), (lo_f, _) = ends(world), ends(1 / world)
    expected = ((lo_f > 1).mean(), (hi_t < 1).mean(), ((lo_t <= 1) & (hi_t >= 1)).mean())
    oc = mr.oc_snr(mem, 1.0, sims=sims, seed=2, n=n, world=world, robust=True)
    tol = 4 * math.sqrt(0.25 / sims * 2)
    assert (oc.agree_false, oc.disagree_true, oc.inconclusive_true) == pytest.approx(expected, abs=tol)
    exact = mr.oc_snr(mem, 1.0, sims=sims, seed=2, n=n, world=world)
    assert exact.inconclusive_true < oc.inconclusive_true - tol  # the robust interval is the wider one


# a generic log-norm table: 6 seeds x 5 sigma_w, curved in x, seed effects, uneven residuals
X = tuple(np.log([0.25, 0.5, 1.0, 1.5, 2.5]))
NORMS = ms.SlopeTable(X, tuple(tuple(0.45 * x + 0.08 * x**2 + b + 3 * e for x, e in zip(X, row)) for b, row in zip(
    (2.1, 1.7, 2.4, 1.9, 2.0, 2.2),
    ((0.02, -0.05, 0.01, 0.03, -0.04), (-0.06, 0.02, 0.04, -0.01, 0.05), (0.03, 0.03, -0.08, 0.02, 0.01),
     (0.0, -0.02, 0.02, 0.05, -0.07), (0.05, 0.01, -0.03, -0.06, 0.04), (-0.04, 0.06, 0.0, -0.02, 0.03)))))


def _reference_slopes(table: ms.SlopeTable) -> np.ndarray:
    """Per-seed slopes by scipy's linregress (independent of the package's polyfit and its vectorised sum)."""
    from scipy.stats import linregress

    return np.array([linregress(table.x, row).slope for row in table.y])


def _t_sides(x: np.ndarray, bound: float):
    """(agrees, disagrees) of scipy's one-sample t interval of each row of x against bound (claim: above)."""
    from scipy.stats import ttest_1samp

    ci = ttest_1samp(x, 0.0, axis=-1).confidence_interval(0.95)
    return ci.low > bound, ci.high < bound


@pytest.mark.parametrize("world", [mr.WORLD, 1.25])
def test_oc_of_the_mean_part_on_drawn_normal_tables_matches_the_noncentral_t_distribution(world):
    """Normal seed rows at the table's residual covariance make each recomputed per-seed slope normal with
    the measured sd of the slopes: P(agrees | false) and P(disagrees | true) are noncentral t tails."""
    from scipy.stats import nct, t

    oc = mr.oc_mean(NORMS, 0.389, below=False, sims=20000, seed=3, world=world)
    slopes = _reference_slopes(NORMS)
    sd, n = np.std(slopes, ddof=1), len(slopes)
    crit = t.ppf(0.975, n - 1)
    # agrees when (mean - bound) / (s / sqrt n) > crit; in the false world mean = bound / world;
    # disagrees when (mean - bound) / (s / sqrt n) < -crit; in the true world mean = bound x world
    delta_false = (0.389 / world - 0.389) / (sd / math.sqrt(n))
    delta_true = (0.389 * world - 0.389) / (sd / math.sqrt(n))
    tol = 4 * math.sqrt(0.25 / 20000) + 1e-4
    assert oc.agree_false == pytest.approx(1 - nct.cdf(crit, n - 1, delta_false), abs=tol)
    assert oc.disagree_true == pytest.approx(nct.cdf(-crit, n - 1, delta_true), abs=tol)
    assert oc.inconclusive_true == pytest.approx(nct.cdf(crit, n - 1, delta_true) - nct.cdf(-crit, n - 1, delta_true),
                                                 abs=tol)
    assert 0.05 < oc.inconclusive_true < 0.95 or world != 1.25  # a generic point: no rate trivially 0 or 1


def _rates(x_true: np.ndarray, x_false: np.ndarray, bound: float) -> tuple[float, float, float]:
    """P(agrees | false), P(disagrees | true), P(inconclusive | true) of scipy's t intervals of the rows."""
    agree_t, disagree_t = _t_sides(x_true, bound)
    return _t_sides(x_false, bound)[0].mean(), disagree_t.mean(), 1 - agree_t.mean() - disagree_t.mean()


def test_oc_of_the_mean_part_on_resampled_rows_matches_the_exact_bootstrap_enumeration():
    """Resampled residual rows make the per-seed slopes the world's mean plus the measured slopes'
    deviations x sqrt(n / (n - 1)), drawn with replacement: every one of the 6^6 ordered draws enumerated."""
    world, bound = 1.1, 0.389
    slopes = _reference_slopes(NORMS)
    n = len(slopes)
    dev = (slopes - slopes.mean()) * math.sqrt(n / (n - 1))
    draws = dev[np.array(list(itertools.product(range(n), repeat=n)))]
    expected = _rates(bound * world + draws, bound / world + draws, bound)
    oc = mr.oc_mean(NORMS, bound, below=False, sims=20000, seed=4, world=world, noise="resampled")
    tol = 4 * math.sqrt(0.25 / 20000)
    assert (oc.agree_false, oc.disagree_true, oc.inconclusive_true) == pytest.approx(expected, abs=tol)
    assert 0.05 < expected[2] < 0.95  # a generic point: no rate trivially 0 or 1


def test_oc_of_the_mean_part_with_student_t_rows_matches_an_independent_monte_carlo():
    """Multivariate t rows (3 df) at the residual covariance make each per-seed slope the world's mean plus
    sd x t_3 / sqrt(3) (sd the measured slopes' sd): checked against 40,000 tiers drawn with scipy's t."""
    from scipy.stats import t

    world, bound = 1.1, 0.389
    slopes = _reference_slopes(NORMS)
    sd, n = np.std(slopes, ddof=1), len(slopes)
    e = sd * t.rvs(3, size=(40000, n), random_state=np.random.default_rng(11)) / math.sqrt(3)
    expected = _rates(bound * world + e, bound / world + e, bound)
    oc = mr.oc_mean(NORMS, bound, below=False, sims=20000, seed=5, world=world, noise="student-t")
    tol = 4 * math.sqrt(0.25 / 20000 + 0.25 / 40000)
    assert (oc.agree_false, oc.disagree_true, oc.inconclusive_true) == pytest.approx(expected, abs=tol)
    normal = mr.oc_mean(NORMS, bound, below=False, sims=20000, seed=5, world=world)
    assert abs(oc.inconclusive_true - normal.inconclusive_true) > tol  # heavy-tailed seeds: t_3 is not normal


def test_drawn_tables_keep_the_fitted_sigma_w_shape_with_the_worlds_slope():
    """The mean of many drawn tables is the table's column means plus a multiple of x - mean(x) that sets
    their least-squares slope to the world's (the curvature kept); n and the kept columns follow the data."""
    rng = np.random.default_rng(6)
    y = np.array(NORMS.y)
    means = y.mean(0)
    c = np.array(X) - np.mean(X)
    fitted = np.polyfit(X, means, 1)[0]
    for noise in ms.NOISES:
        drawn = NORMS.draw(0.7, 9, 4000, noise, rng)
        assert drawn.shape == (4000, 9, 5)
        assert drawn.mean((0, 1)) == pytest.approx(means + (0.7 - fitted) * c, abs=0.01)
    missing = ms.SlopeTable(X, tuple((*row[:4], math.nan) if i < 4 else row for i, row in enumerate(NORMS.y)))
    assert missing.draw(0.5, 3, 2, "normal", rng).shape == (2, 3, 4)  # sigma_w missing in 4 of 6 seeds dropped
    with pytest.raises(ParameterError, match="noise"):
        NORMS.draw(0.5, 3, 2, "cauchy", rng)


def test_oc_of_the_ratio_part_close_to_the_bound_reads_its_worlds():
    """At 1.25x the bound the ratio's worlds are close to it: more tiers are inconclusive than at 2.57x,
    the wrong-direction rates stay at most the interval's per-tail level (plus Monte Carlo error), and
    a world factor not above 1 is refused."""
    g, ref = _memory(m=0.9), _memory(m=2.0, sigma=1.2)
    interval = ms.ratio_interval(g, ref)
    near = mr.oc_ratio(g, ref, interval, 0.389, sims=400, seed=5, world=1.25)
    far = mr.oc_ratio(g, ref, interval, 0.389, sims=400, seed=5)
    assert near.inconclusive_true > far.inconclusive_true + 0.1 and near.inconclusive_false > far.inconclusive_false
    assert near.wrong <= 0.025 + 4 * math.sqrt(0.025 / 400)
    with pytest.raises(mr.ParameterError, match="world"):
        mr.oc_mean(NORMS, 0.389, below=False, world=1.0)


def test_claim_oc_bounds_from_its_parts():
    parts = [mr.Part("a", interval(0, 1), 1, True, "agrees", mr.OC(0.01, 0.02, 0.1, 0.2, 100, 8)),
             mr.Part("b", interval(0, 1), 1, True, "agrees", mr.OC(0.03, 0.01, 0.3, 0.1, 100, 6))]
    oc = mr.claim_oc(parts)
    assert oc.agree_false == 0.03 and oc.disagree_true == pytest.approx(0.03) and oc.n == 6
    assert oc.inconclusive_true == pytest.approx(1 - (1 - 0.02 - 0.1) * (1 - 0.01 - 0.3) - 0.03)
    assert mr.claim_oc(parts[:1] + [mr.Part("c", interval(0, 1), 1, True, "agrees")]) is None


def _part(rate):
    oc = lambda n: mr.OC(rate(n), 0.0, 0.0, 0.0, 100, n)  # noqa: E731
    return mr.Part("x", interval(0.1, 0.2), 0.3, True, "agrees", oc(4), oc, 4)


def test_decide_gates_on_the_wrong_direction_rate_and_finds_the_seeds_needed():
    ok = mr.decide([_part(lambda n: 0.01)])
    assert ok.verdict == "agrees" and ok.needed is None
    under = mr.decide([_part(lambda n: 0.5 if n < 11 else 0.01)])
    assert under.verdict == "inconclusive" and under.reason.startswith("underpowered") and under.needed == 11
    never = mr.decide([_part(lambda n: 0.5)])
    assert never.needed is None and "> 64" in never.reason


def test_a_failed_premise_or_a_missing_interval_is_inconclusive():
    assert mr.decide([_part(lambda n: 0.0)], premise="no baseline").verdict == "inconclusive"
    missing = mr.Part("x", interval(math.nan, math.nan), 0.3, True, "inconclusive")
    assert mr.decide([missing]).reason.startswith("no interval")


def test_a_failed_premise_still_states_the_rules_simulated_rates_but_they_decide_nothing():
    """Issue 27: every verdict states its wrong-direction rates, a regime miss included."""
    risky = mr.decide([_part(lambda n: 0.5)], premise="regime: clocks not matched")
    assert (risky.verdict, risky.reason, risky.premise) == ("inconclusive", "regime: clocks not matched",
                                                            "regime: clocks not matched")
    assert risky.oc is not None and risky.oc.agree_false == 0.5 and risky.needed is None
    safe = mr.decide([_part(lambda n: 0.01)], premise="no baseline")
    assert safe.verdict == "inconclusive" and safe.oc.agree_false == 0.01
    assert mr.decide([_part(lambda n: 0.01)], premise="no baseline", simulate=False).oc is None
    assert mr.decide([_part(lambda n: 0.01)]).premise == ""


# -- the rules' conditions one at a time and their bounds (issue 29 item 7) --------------------------


def test_the_pre_registered_gates_are_the_registered_numbers():
    """RESULTS.md "Spec B pre-registration": seed noise 1, growth 1, wrong-direction rate 0.05."""
    assert (float(mr.NOISE), float(mr.GROWS), float(mr.MAX_WRONG)) == (1.0, 1.0, 0.05)


@pytest.mark.parametrize("lo, hi, below, expected", [
    (0.2, 0.4, True, "inconclusive"), (0.4, 0.6, True, "inconclusive"),  # touching the bound decides nothing
    (0.4, 0.6, False, "inconclusive"), (0.2, 0.4, False, "inconclusive"),
    (0.1, math.nan, True, "inconclusive"), (0.5, math.nan, False, "inconclusive"),
])
def test_an_interval_touching_the_bound_or_without_an_end_is_inconclusive(lo, hi, below, expected):
    assert mr.side(interval(lo, hi), 0.4, below) == expected


@pytest.mark.parametrize("below", [True, False])
def test_the_vectorised_sides_are_side_elementwise(below):
    """``_sides`` (the simulations' rule) against ``side`` at generic points and on the bound itself."""
    ends = [(0.1, 0.3), (0.5, 0.7), (0.3, 0.5), (0.2, 0.4), (0.4, 0.6)]
    agree, disagree = mr._sides(np.array([lo for lo, _ in ends]), np.array([hi for _, hi in ends]), 0.4, below)
    expected = [mr.side(interval(lo, hi), 0.4, below) for lo, hi in ends]
    assert [("agrees" if a else "disagrees" if d else "inconclusive") for a, d in zip(agree, disagree)] == expected


def test_the_worlds_sit_a_factor_either_side_of_the_bound():
    assert mr._worlds(0.4, True, 2.0) == (0.2, 0.8) and mr._worlds(0.4, False, 2.0) == (0.8, 0.2)
    for world in (1.0, 0.9):
        with pytest.raises(ParameterError, match="world"):
            mr._worlds(0.4, True, world)


def test_claim_oc_caps_the_union_bound_at_one_and_the_inconclusive_rate_at_zero():
    """P(disagrees | true) 0.6 + 0.5 capped at 1; P(inconclusive | true) 1 - 0.1 x 0.1 - 1 < 0 floored at 0."""
    parts = [mr.Part("a", interval(0, 1), 1, True, "agrees", mr.OC(0.01, 0.6, 0.3, 0.2, 100, 8)),
             mr.Part("b", interval(0, 1), 1, True, "agrees", mr.OC(0.02, 0.5, 0.4, 0.1, 100, 8))]
    oc = mr.claim_oc(parts)
    assert (oc.disagree_true, oc.inconclusive_true) == (1.0, 0.0)
    assert mr.claim_oc([]) is None


def _calls(threshold: int, flat: dict | None = None, first: float = 0.5, sims: int = 100, passing: float = 0.0):
    """A ``rates`` whose wrong-direction rate is ``first`` below ``threshold`` seeds (``flat`` overrides
    it at given n) and ``passing`` from it, recording the n it is asked at."""
    asked = []

    def rates(n):
        asked.append(n)
        return mr.OC((flat or {}).get(n, first if n < threshold else passing), 0.0, 0.0, 0.0, sims, n)

    return rates, asked


def test_seeds_needed_doubles_then_bisects_between_the_last_failing_and_the_first_passing_n():
    rates, asked = _calls(11)
    assert mr.seeds_needed(rates, 4) == 11 and asked == [4, 8, 16, 12, 10, 11]
    assert mr.seeds_needed(_calls(11, passing=0.05)[0], 4) == 11  # a rate of exactly 0.05 passes while bisecting
    assert mr.seeds_needed(_calls(64)[0], 4) == 64  # the default ceiling, 64 seeds, is reached
    assert mr.seeds_needed(_calls(70)[0], 4) is None  # beyond it: None


@pytest.mark.parametrize("rate, needed", [(0.05, 4), (0.045, 4), (0.055, None)])
def test_a_wrong_direction_rate_at_most_0_05_needs_no_more_seeds(rate, needed):
    """0.05 exactly passes; 0.045 and 0.055 (10% either side) put a gate moved by 20% on the other side."""
    rates = lambda n: mr.OC(rate, 0.0, 0.0, 0.0, 100, n)  # noqa: E731
    assert mr.seeds_needed(rates, 4) == needed


@pytest.mark.parametrize("flat_after, at_8, expected", [
    (2, 0.4, "not reachable by seeds"),  # at 2 x start, exactly first - 2 se (0.5 - 2 x 0.05): flat
    (2, 0.38, 16),  # 0.38 < 0.4: it falls, more seeds are tried
    (4, 0.5, 16),  # flat at 8 seeds, but 8 < 4 x start: not yet judged flat
    (2, 0.03, 8),  # passes at 8: never flat
    (2, 0.05, 8),  # passes exactly at the gate
])
def test_not_reachable_by_seeds_needs_each_condition(flat_after, at_8, expected):
    """first rate 0.5 at 100 simulations: se = sqrt(0.5 x 0.5 / 100) = 0.05 exactly, 0.5 - 2 se = 0.4."""
    rates, _ = _calls(16, flat={4: 0.5, 8: at_8})
    assert mr.seeds_needed(rates, 4, flat_after=flat_after) == expected


def test_not_reachable_reads_the_rate_at_start_less_two_standard_errors():
    """first rate 0.06 at 100 simulations (se 0.0237): 0.03 or 0.05 at 8 seeds passes the gate, it is not flat."""
    for at_8 in (0.03, 0.05):  # below the gate, and on it: passing, not flat
        rates, _ = _calls(8, flat={4: 0.06, 8: at_8}, first=0.06)
        assert mr.seeds_needed(rates, 4, flat_after=2) == 8


def _gate_part(n=4, sims=100, rates=lambda n: mr.OC(0.01, 0.0, 0.0, 0.0, 100, n), oc=None, lo=0.1, outcome="agrees"):
    return mr.Part("x", interval(lo, 0.2), 0.3, True, outcome, oc, rates, n, math.nan, sims)


@pytest.mark.parametrize("part, simulated", [
    (_gate_part(n=2), True),
    (_gate_part(oc=mr.OC(0.2, 0.0, 0.0, 0.0, 10, 4)), False),  # simulated once
    (_gate_part(sims=0), False),
    (_gate_part(rates=None), False),
    (_gate_part(n=1), False),
    (_gate_part(lo=math.nan), False),
])
def test_a_part_is_simulated_only_with_an_interval_sims_rates_and_two_seeds(part, simulated):
    out = mr._simulated(part)
    assert (out.oc == part.rates(part.n)) if simulated else (out.oc == part.oc)


def test_the_primary_part_is_the_first_disagreeing_else_the_first_not_agreeing():
    a, i, d = (mr.Part(w, interval(0, 1), 1, True, w) for w in ("agrees", "inconclusive", "disagrees"))
    assert mr.Decision("x", "", (a, i, d), None).primary is d
    assert mr.Decision("x", "", (a, i), None).primary is i
    assert mr.Decision("x", "", (a, a), None).primary is a
    assert mr.Decision("x", "", (), None).primary is None


def test_decide_names_what_decided():
    d = mr.Part("d", interval(0.5, 0.7), 0.3, True, "disagrees", mr.OC(0.0, 0.0, 0.0, 0.0, 100, 4))
    a = mr.Part("a", interval(0.1, 0.2), 0.3, True, "agrees", mr.OC(0.0, 0.0, 0.0, 0.0, 100, 4))
    assert mr.decide([a, d]).reason == "a part disagrees: d"
    assert mr.decide([a]).reason == "every part agrees"
    assert mr.decide([]).reason == "no interval for any part"
    no_hi = mr.Part("h", ms.Interval(0.15, 0.1, math.nan), 0.3, True, "inconclusive")
    no_lo = mr.Part("l", ms.Interval(0.15, math.nan, 0.2), 0.3, True, "inconclusive")
    assert mr.decide([no_hi]).reason == "no interval for h" and mr.decide([no_lo]).reason == "no interval for l"


def test_a_claim_level_wrong_direction_rate_of_exactly_0_05_is_not_underpowered():
    assert mr.decide([_gate_part(rates=lambda n: mr.OC(0.05, 0.0, 0.0, 0.0, 100, n))]).verdict == "agrees"


def test_decide_without_simulation_keeps_the_rule_and_states_no_rates():
    part = _gate_part(rates=lambda n: mr.OC(0.5, 0.0, 0.0, 0.0, 100, n))
    d = mr.decide([part], simulate=False)
    assert d.verdict == "agrees" and d.oc is None and d.parts[0].oc is None
    preset = _gate_part(oc=mr.OC(0.5, 0.0, 0.0, 0.0, 100, 4))
    assert mr.decide([preset], simulate=False).oc is None


@pytest.mark.parametrize("part, needed, said", [
    (_gate_part(n=2, rates=lambda n: mr.OC(0.5 if n < 4 else 0.0, 0.0, 0.0, 0.0, 100, n)), 4, "P(agrees | false) 0.500"),
    (_gate_part(n=1, oc=mr.OC(0.5, 0.0, 0.0, 0.0, 100, 1)), None, "P(agrees | false) 0.500"),  # one seed: none named
    (_gate_part(rates=None, oc=mr.OC(0.5, 0.0, 0.0, 0.0, 100, 4)), None, "> 64"),  # no simulation to ask
    (_gate_part(n=1), None, "not simulated"),
])
def test_an_underpowered_decision_names_the_seeds_only_where_it_can(part, needed, said):
    d = mr.decide([part])
    assert d.verdict == "inconclusive" and d.needed == needed and said in d.reason
