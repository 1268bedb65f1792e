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
