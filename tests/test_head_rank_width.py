"""Claim "Sec. 5 (width)": the rank of the mean logits rises with head width; its verdict rule on
synthetic grids."""

import pytest
from head_rank_rows import GOOD, MISSING, grid

from implicitbias.claims import Context
from implicitbias.claims.depth.head_rank_width import CLAIM

SYNTHETIC_VERDICTS = [
    ("agrees", grid(GOOD)),
    ("disagrees", grid({**GOOD, (4, 64): 4.0})),  # wider is lower at L = 4
    ("inconclusive", grid({**GOOD, (4, 64): 5.05})),
    ("not run", MISSING),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


def test_render_draws_the_width_panel(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    assert "rank vs width" in CLAIM.render(ctx, grid(GOOD), CLAIM.judge(grid(GOOD)))
    assert CLAIM.render(ctx, MISSING, CLAIM.judge(MISSING)) == ""


@pytest.mark.parametrize("rise, expected", [(0.09, "inconclusive"), (0.11, "agrees"), (-0.09, "inconclusive"),
                                            (-0.11, "disagrees")])
def test_the_trend_step_is_0_1_rank_units_a_rise_10_percent_either_side_decides(rise, expected):
    """The bound moved by 20% (0.08 or 0.12) flips one of these: the widest head at L = 4 a rise of
    0.09 or 0.11 above the narrowest (5.0), every other depth well beyond the bound."""
    assert CLAIM.threshold("trend_step") == 0.1
    assert CLAIM.judge(grid({**GOOD, (4, 64): 5.0 + rise})).verdict == expected


def test_the_rise_is_from_the_narrowest_to_the_widest_head():
    """Three widths at L = 4: 16 -> 32 -> 64 rises 5.0 -> 4.0 -> 6.5 overall (the middle width does not decide)."""
    assert CLAIM.judge(grid({**GOOD, (4, 32): 4.0})).verdict == "agrees"
    assert CLAIM.judge(grid({**GOOD, (4, 32): 7.0, (4, 64): 4.0})).verdict == "disagrees"
