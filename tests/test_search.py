"""The default search of P(K, L) is not beaten by more effort (self-consistency on a small cell set).

The default (effort 1, seed 0) against the best of higher efforts with other seeds, cell by cell,
to a relative 1e-6 (the full table for K <= 16, L <= 12 is benchmarks/bench_phase_consistency.py,
recorded in benchmarks/RESULTS.md); and independent anchors: the value at cells whose optimum is a
named code equals that code's closed form (theory.codes).  Also: determinism in the seed, the
starts of each effort, and bad input.  L counts weight matrices (N = L + 1, p = 2/(L + 1)).
"""


import numpy as np
import pytest

from implicitbias.numerics.maxmargin.codes import CODES
from implicitbias.numerics.maxmargin.margin import margins, schatten_exponent
from implicitbias.numerics.maxmargin.search import WINDOW, funnel, plan, search, search_cell, starts
from implicitbias.numerics.maxmargin.solver import verify
from implicitbias.theory import codes as exact
from implicitbias.theory import params

DEPTHS = [2, 3, 4, 6, 9]


def _values(K, effort, seed, depths=DEPTHS):
    res = search(K, depths, effort, seed)
    for L in depths:
        assert margins(res.best[L].Z).min() >= 1 - 1e-9
    return {L: res.best[L].objective for L in depths}


@pytest.mark.parametrize("K", [5, pytest.param(7, marks=pytest.mark.slow)])
def test_default_is_not_beaten_by_more_effort(K):
    default = _values(K, 1, 0)
    for effort, seed in ((2, 1), (2, 2)):
        other = _values(K, effort, seed)
        for L in DEPTHS:
            assert default[L] <= other[L] * (1 + 1e-6), (K, L, default[L], other[L])


@pytest.mark.slow
@pytest.mark.parametrize("K", [6, 8, 9, 10, 12])
def test_default_is_not_beaten_by_more_effort_slow(K):
    default = _values(K, 1, 0, list(range(2, 13)))
    for effort, seed in ((3, 1), (5, 2)):
        other = _values(K, effort, seed, list(range(2, 13)))
        for L in other:
            assert default[L] <= other[L] * (1 + 1e-6), (K, L, default[L], other[L])


@pytest.mark.parametrize("K, L, structure", [
    (8, 4, "square antiprism"), (12, 6, "icosahedron"), (10, 3, "rectified 4-simplex"), (6, 3, "cross_polytope"),
    (9, 9, "kgon")])
def test_default_value_equals_the_closed_form_of_the_named_optimum(K, L, structure):
    value = search(K, [L]).best[L].objective
    assert value == pytest.approx(float(exact.objective_at(structure, K, L)), rel=1e-9)


def test_same_seed_same_result_and_real_depths():
    a, b = search(6, [2.5, 3], seed=4), search(6, [2.5, 3], seed=4)
    assert all(np.array_equal(a.best[L].Z, b.best[L].Z) for L in (2.5, 3))
    assert a.best[2.5].objective > a.best[3].objective  # deeper is cheaper at this K


def test_plan_and_starts_grow_with_effort():
    assert plan(10, 1).max_rank == 6 and plan(10, 2).max_rank == 9 and plan(10, 1).random_per_rank == 0
    assert plan(24, 1).max_rank <= 12 and plan(24, 1).codes_per_rank == 1
    one, three = starts(5, 1, 0), starts(5, 2, 0)
    assert len(three) > len(one)
    assert {label for label, _ in one} >= {"cross_polytope", "kgon"}
    assert all(margins(Z).min() > 0 for _, Z in three)


def test_starts_are_drawn_once_per_process_and_cannot_be_corrupted():
    """An integer seed's starts come from a per-process cache (the exact search and the ladder of one column
    share its Riesz codes): the same labels and matrices as a draw from an equal seed given as a
    generator-free sequence would give, read-only, and a caller's edits to its list leave the cache alone."""
    first = starts(7, 1, 3)
    again = starts(7, 1, 3)
    assert [label for label, _ in first] == [label for label, _ in again]
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(first, again))
    uncached = starts(7, 1, np.random.SeedSequence(3))  # not an int: drawn afresh, from the same stream
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(first, uncached))
    with pytest.raises(ValueError):
        first[0][1][0, 0] = 5.0
    first.clear()
    assert len(starts(7, 1, 3)) == len(again) > 0


def test_search_depths_override_the_plan():
    """``search_depths`` replaces the plan's: only starts polished at depth 2 become branches, so every branch
    and the best at L = 2 carry p(2), and a search from depth 2 alone differs from the plan's at K = 9."""
    res = search(9, [2, 4], search_depths=[2])
    assert {b.p for b in res.branches} == {schatten_exponent(2)}
    assert res.best[2].p == schatten_exponent(2)
    assert len(res.branches) < len(search(9, [2, 4]).branches)


def test_search_cell_is_small_and_complete():
    rec = search_cell({"K": 4, "depths": [2, 3, "inf"], "effort": 1, "seed": 0})
    assert set(rec["values"]) == {"2", "3", "inf"} and rec["ranks"]["inf"] == 2
    assert rec["values"]["2"] == pytest.approx(3.0, rel=1e-9)  # NC at K = 4, L = 2
    assert rec["values"]["inf"] == pytest.approx(float(exact.limit_objective_at("kgon", 4)[1]), rel=1e-9)


@pytest.mark.parametrize("call, name", [
    (lambda: search(1, [2]), "K"),
    (lambda: search(5, [0.5]), "L"),
    (lambda: search(5, [float("nan")]), "L"),
    (lambda: search(5, [2], effort=0), "effort"),
    (lambda: search(10_000, [2]), "K"),
    (lambda: search(5, [2], search_depths=[0.5]), "search depth"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(params.ParameterError, match=rf"^{name} must"):
        call()


def test_funnel_finishes_the_candidates_within_the_window_best_first():
    """K = 6, L = 4: NC (5), the cross-polytope (3 * 2^(2/5) = 3.959) and the hexagon as candidates:
    only those within WINDOW of the best unmoved value are polished, at most ``limit``, best first,
    and polishing never returns a worse matrix than its start."""
    K, p = 6, schatten_exponent(4)
    pool = [verify(CODES[k](K), p, k) for k in ("nc", "kgon", "cross_polytope")]
    keys = [(float(exact.objective_at(k, K, 4)),) for k in ("nc", "kgon", "cross_polytope")]
    assert all(s.key[0] == pytest.approx(k[0], rel=1e-12) for s, k in zip(pool, keys))
    top = min(keys)[0]
    inside = {s.start for s, k in zip(pool, keys) if k[0] <= top * (1 + WINDOW)}
    out = funnel(pool, keys, p, limit=3)
    assert {sol.start for sol, _ in out} == inside and "nc" not in inside and "cross_polytope" in inside
    assert [sol.key for sol, _ in out] == sorted(sol.key for sol, _ in out)
    assert all(sol.key[0] <= key[0] * (1 + 1e-12) for sol, key in out)
    (only, key), = funnel(pool, keys, p, limit=1)
    assert only.start == "cross_polytope" and key == min(keys)
