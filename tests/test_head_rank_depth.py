"""Claim "Sec. 5 (depth)": the rank of the mean logits falls as the head deepens; its verdict rule
on synthetic grids (the training runs themselves are tested in test_head_rank.py)."""

import pytest
from head_rank_rows import GOOD, MISSING, grid

from implicitbias.claims import Context
from implicitbias.claims.depth.head_rank_depth import CLAIM

SYNTHETIC_VERDICTS = [
    ("agrees", grid(GOOD)),
    ("disagrees", grid({**GOOD, (6, 64): 9.5})),  # the deepest head at width 64 is above the depth-1 head
    ("inconclusive", grid({**GOOD, (6, 64): 8.95})),  # drop of 0.05 < 0.1 rank units
    ("not run", MISSING),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


def test_small_init_rows_do_not_enter_the_depth_rule():
    assert CLAIM.judge(grid(GOOD, small={(2, 64): 9.9, (4, 64): 9.95})).verdict == "agrees"


def test_render_draws_the_depth_panel_and_table(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    md = CLAIM.render(ctx, grid(GOOD), CLAIM.judge(grid(GOOD)))
    assert "rank vs depth" in md and "eff. rank of Zbar" in md
    assert (tmp_path / "figures" / "head_rank_depth_digits.csv").exists()
    assert CLAIM.render(ctx, MISSING, CLAIM.judge(MISSING)) == ""


def test_measure_trains_the_grid_through_the_store_and_marks_missing_data(store, tmp_path, monkeypatch):
    """A one-epoch digits grid runs through the store (cached on the second call); a dataset whose
    files are absent gives "not run" evidence instead of an error."""
    from implicitbias.claims.depth import head_rank as grids
    from implicitbias.validation import head_rank as hr

    tiny = {"digits": [({"dataset": "digits", "epochs": 1, "batch_size": 256, "width": 0.25, "lr": 3e-3},
                        {"depths": [1, 2], "widths": [8], "seeds": [0]})],
            "fashion_mnist": grids.GRIDS["fashion_mnist"]}
    monkeypatch.setattr(grids, "GRIDS", tiny)
    monkeypatch.setattr(grids, "dataset_path_problem", lambda name, path: "no files" if name == "fashion_mnist" else None)
    ctx = Context(store=store, out=tmp_path, progress=False)
    digits, fashion = CLAIM.measure(ctx, grids.Config(datasets=("digits", "fashion_mnist")))
    assert [r.depth for r in digits.data.rows] == [1, 2] and digits.label == "digits"
    assert CLAIM.judge(fashion).verdict == "not run" and fashion.missing == "no files"
    assert store.counts(hr.KIND) == {"done": 2}
    again, _ = CLAIM.measure(ctx, grids.Config(datasets=("digits", "fashion_mnist")))
    assert again.data.rows == digits.data.rows


@pytest.mark.parametrize("drop, expected", [(0.09, "inconclusive"), (0.11, "agrees"), (-0.09, "inconclusive"),
                                            (-0.11, "disagrees")])
def test_the_trend_step_is_0_1_rank_units_a_drop_10_percent_either_side_decides(drop, expected):
    """The bound moved by 20% (0.08 or 0.12) flips one of these: a drop of 0.09 or 0.11 at the deepest
    head of width 64 (from the depth-1 rank 9), every other width well beyond the bound."""
    assert CLAIM.threshold("trend_step") == 0.1
    assert CLAIM.judge(grid({**GOOD, (6, 64): 9.0 - drop})).verdict == expected
