"""Synthetic summary rows of the head-rank grids (``validation.head_rank.cell_rows``'s shape), shared
by the test modules of the head-rank claims."""

from implicitbias.claims import Evidence
from implicitbias.claims.depth.head_rank import Measured
from implicitbias.validation.head_rank import HeadRankRow


def row(depth, width, rank, acc=0.9, init="he"):
    return HeadRankRow(head_init=init, depth=depth, width=width, seeds=2, rank_mean=rank, rank_std=0.05,
                       test_acc_mean=acc, train_acc_min=1.0, nc1_mean=0.1)


def grid(ranks, accs=None, small=None):
    """``ranks``/``accs``: {(depth, width): value}, depth 1 with width None; ``small``: {(depth, 64): rank}."""
    accs = accs or {}
    rows = [row(L, w, r, accs.get((L, w), 0.9)) for (L, w), r in ranks.items()]
    rows += [row(L, w, r, init="small") for (L, w), r in (small or {}).items()]
    return Evidence("synthetic", Measured("digits", tuple(rows)), "digits")


MISSING = Evidence("synthetic", Measured("fashion_mnist", ()), "fashion_mnist",
                   missing="data_path /x for dataset fashion_mnist does not exist")

GOOD = {(1, None): 9.0, (2, 16): 7.0, (2, 64): 8.0, (4, 16): 5.0, (4, 64): 6.5, (6, 16): 4.0, (6, 64): 5.5}
