"""Claim "Sec. 4 on real nets": a small head initialisation lowers the rank of the mean logits; its
verdict rule on synthetic grids."""

import pytest
from head_rank_rows import GOOD, MISSING, grid

from implicitbias.claims import Context
from implicitbias.claims.depth.head_rank_small_init import CLAIM, pairs

SMALL = {(2, 64): 6.0, (4, 64): 4.0}

SYNTHETIC_VERDICTS = [
    ("agrees", grid(GOOD, small=SMALL)),
    ("disagrees", grid(GOOD, small={(2, 64): 6.0, (4, 64): 7.5})),  # higher rank than He at L = 4
    ("inconclusive", grid(GOOD, small={(2, 64): 6.0, (4, 64): 6.45})),
    ("inconclusive", grid(GOOD)),  # no small-init runs: nothing to compare
    ("not run", MISSING),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


def test_pairs_match_depth_and_width():
    assert pairs(grid(GOOD, small=SMALL).data.rows) == [(2, 64, 6.0, 8.0), (4, 64, 4.0, 6.5)]


def test_render(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    assert "small vs He" in CLAIM.render(ctx, grid(GOOD, small=SMALL), CLAIM.judge(grid(GOOD, small=SMALL)))
    assert CLAIM.render(ctx, MISSING, CLAIM.judge(MISSING)) == ""


@pytest.mark.parametrize("gap, expected", [(0.09, "inconclusive"), (0.11, "agrees"), (-0.09, "inconclusive"),
                                           (-0.11, "disagrees")])
def test_the_trend_step_is_0_1_rank_units_a_gap_10_percent_either_side_decides(gap, expected):
    """The bound moved by 20% (0.08 or 0.12) flips one of these: the small init at L = 4 lowers the
    He rank (6.5) by 0.09 or 0.11 (or raises it), L = 2 well beyond the bound."""
    assert CLAIM.threshold("trend_step") == 0.1
    assert CLAIM.judge(grid(GOOD, small={(2, 64): 6.0, (4, 64): 6.5 - gap})).verdict == expected


def test_a_small_init_depth_one_row_is_not_compared():
    """Depth 1 has no head to initialise small: a row there (rank above He's) does not enter the rule."""
    assert pairs(grid(GOOD, small={(1, None): 9.5, **SMALL}).data.rows) == [(2, 64, 6.0, 8.0), (4, 64, 4.0, 6.5)]
    assert CLAIM.judge(grid(GOOD, small={(1, None): 9.5, **SMALL})).verdict == "agrees"


def test_measured_names_every_pair_or_says_there_is_none():
    assert CLAIM.judge(grid(GOOD, small=SMALL)).measured == ("L = 2, width 64: 6.00 (small) vs 8.00 (He); "
                                                             "L = 4, width 64: 4.00 (small) vs 6.50 (He)")
    assert CLAIM.judge(grid(GOOD)).measured == "no pairs"
