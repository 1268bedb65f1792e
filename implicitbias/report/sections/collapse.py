"""Report section "Clock collapse" (Spec B, C7): layout only.  The claim C7 lives in
``implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads``; this section shows, before it, the design of
the clock-collapse grids of the report's tier (``validation/specs/collapse.toml``, and
``collapse_long.toml`` in tier full) and the overview of their groups (spreads with CIs, failures,
clocks); the groups are ``implicitbias.claims.forgetting.group_overviews.collapse_grids``'s (the claims
layer trains them).
"""

from __future__ import annotations

from implicitbias.claims.forgetting.analyse import overview
from implicitbias.claims.forgetting.group_overviews import collapse_grids, train_section
from implicitbias.report.sections.clocks import design

NAME = "collapse"
ORDER = 36
TITLE = "Clock collapse (Spec B, C7): do equal clocks give equal spreads, and does the clock predict them?"


def exhibit(ctx) -> str:
    parts = []
    for shown in collapse_grids(ctx):
        t = shown.tier
        parts += [design(t), "", overview(ctx, shown.groups, f"collapse_{t.name}_spread_vs_clock")]
    return "\n".join([
        "C7 is judged per optimiser family on the toy tier's groups (section above) together with these grids: a "
        "monotone law spread = f(log clock) fitted on half of a family's groups predicts the other half, against "
        "the same law in log epochs; `implicitbias predict` ships the law fitted on all groups of the default "
        "tier. These grids evaluate every 5 (30-epoch runs), 20 (120) or 40 epochs (480) and at the end, and "
        "epoch 0 counts: their selected spreads (the minimum of validation loss on that thin grid, sometimes the "
        "initialisation) are shown, not judged; C7 judges the end-of-training spread.", "", *parts])


def prefetch(ctx) -> None:
    train_section(ctx, NAME)
