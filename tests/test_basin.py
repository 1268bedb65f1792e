"""Claim "Basin of NC (s. 4)": the fraction of perturbed-NC starts of the balanced Hadamard flow
that end at NC (final effective rank >= K - 1.5) shrinks as depth grows, and the claim's verdict
rule (Fisher exact test, n stated) on synthetic evidence."""

import math

import numpy as np
import pytest

from implicitbias.claims import Context, Evidence
from implicitbias.claims.depth.basin import (
    CLAIM,
    BasinRun,
    Config,
    Measured,
    basin_cell,
    basin_configs,
    basin_runs,
    basin_summary,
)


def fraction_at_nc(L, K=8, scale=0.1, seeds=6):
    cells = [
        basin_cell({"K": K, "L": L, "n": 1, "scale": scale, "eps": 0.3, "seed": s, "margin": 20.0, "t_end": 1e8,
                    "tolerance": 0.5})
        for s in range(seeds)
    ]
    return np.mean([c["at_nc"] for c in cells]), cells


def test_basin_shrinks_with_depth():
    fractions = []
    for L in (1, 2, 4):
        fraction, cells = fraction_at_nc(L)
        assert all(c["margin"] >= 20.0 - 1e-6 and c["success"] for c in cells)
        fractions.append(fraction)
    assert fractions[0] == 1.0
    assert fractions[0] >= fractions[1] >= fractions[2]
    assert fractions[2] < fractions[0]


def test_summary_counts_failed_runs_without_using_them():
    configs = basin_configs(4, [1], 1, [0.1], [0.3], 3, 8.0, 1e6)
    records = [{"effective_rank": 3.0, "kl_to_nc": 0.0, "margin": 8.0, "time": 1.0, "at_nc": at_nc, "success": success,
                "message": ""} for at_nc, success in ((True, True), (False, True), (True, False))]
    s = basin_summary(basin_runs(configs, records))
    assert s.starts == {1: 2} and s.hits == {1: 1} and s.failed == {1: 1} and s.overall == {1: 0.5}


def _evidence(hits, starts=24, failed=0):
    runs = []
    for L, h in zip((1, 2, 3, 4), hits):
        runs += [BasinRun(K=8, L=L, n=1, scale=0.1, eps=0.3, seed=i, t_end=1e8, tolerance=0.5, effective_rank=7.0,
                          kl_to_nc=0.0, margin=20.0, time=1.0, at_nc=i < h, success=i >= failed or L != 1, message="")
                 for i in range(starts)]
    return Evidence("synthetic", Measured(tuple(runs)))


SYNTHETIC_VERDICTS = [
    ("agrees", _evidence((24, 14, 7, 5))),
    ("disagrees", _evidence((20, 22, 22, 21))),  # the deep basin is larger
    ("disagrees", _evidence((12, 12, 12, 12))),  # depth does not change it
    ("inconclusive", _evidence((24, 23, 23, 22))),  # smaller, not significant (Fisher p = 0.25)
    ("inconclusive", _evidence((24, 8, 16, 5))),  # the basin grows again at L = 3
    ("inconclusive", _evidence((24, 14, 7, 5), failed=2)),  # failed integrations
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


@pytest.mark.parametrize("hits, expected", [((21, 19, 17, 15), "agrees"), ((20, 18, 16, 14), "inconclusive")])
def test_the_significance_is_5_percent_a_p_value_10_percent_either_side_decides(hits, expected):
    """The bound moved by 20% (0.04 or 0.06) flips one of these: 21 -> 15 and 20 -> 14 of 24 starts at NC,
    one-sided Fisher p 0.0467 and 0.0554 (the hypergeometric tail, summed here)."""
    assert CLAIM.threshold("significance") == 0.05
    a, b, n = hits[0], hits[-1], 24
    p = sum(math.comb(a + b, x) * math.comb(2 * n - a - b, n - x) for x in range(a, n + 1)) / math.comb(2 * n, n)
    assert (0.04 < p < 0.05) if expected == "agrees" else (0.05 < p < 0.06)
    assert CLAIM.judge(_evidence(hits)).verdict == expected


def test_a_flat_step_between_depths_is_no_regrowth():
    assert CLAIM.judge(_evidence((24, 14, 14, 5))).verdict == "agrees"



def test_verdict_states_n_and_p():
    v = CLAIM.judge(_evidence((24, 14, 7, 5)))
    assert "n = 24" in v.measured and v.numbers["fisher_p"] < 1e-6


def test_claim_end_to_end_on_a_small_config(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    config = Config(K=4, depths=(1, 4), scales=(1e-3,), eps=(0.6,), seeds=8, margin=10.0, t_end=1e10)
    ev = CLAIM.measure(ctx, config)
    v = CLAIM.judge(ev)
    assert v.verdict == "agrees", v
    assert v.numbers["fractions"]["1"] == 1.0 and v.numbers["starts"] == 8
    assert "fraction" in CLAIM.render(ctx, ev, v)
