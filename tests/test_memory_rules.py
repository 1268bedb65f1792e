"""The pieces of Spec B's memory rules (``claims.forgetting.memory_rules``): sides of a bound, every part
against any part, the operating characteristics against closed forms, the underpowered gate."""

import math

import numpy as np
import pytest
from scipy.stats import f as central_f
from scipy.stats import ncf

from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.numerics.metrics import memory_stats as ms

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


@pytest.mark.parametrize("world, values", [(mr.WORLD, [0.5, 0.9, 0.2, 0.7, 0.35]),
                                           (1.25, [0.41, 0.52, 0.33, 0.47, 0.39, 0.36])])
def test_oc_of_the_mean_part_matches_the_noncentral_t_distribution(world, values):
    from scipy.stats import nct, t

    oc = mr.oc_mean(values, 0.389, below=False, sims=20000, seed=3, world=world)
    sd, n = np.std(values, ddof=1), len(values)
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
        mr.oc_mean([0.5, 0.6], 0.389, below=False, world=1.0)


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
