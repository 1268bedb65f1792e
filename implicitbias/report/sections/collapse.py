"""Report section "Clock collapse" (Spec B, C7): layout only.  The claim C7 lives in
``implicitbias.claims.c7_clocks_collapse_the_spreads``; this section shows, before it, the design of
the clock-collapse grid (``validation/specs/collapse.toml``) and the overview of its groups
(spreads with CIs, failures, clocks).
"""

from __future__ import annotations

from implicitbias.claims import forgetting as fg
from implicitbias.claims.c7_clocks_collapse_the_spreads import COLLAPSE
from implicitbias.report.sections.clocks import design

NAME = "collapse"
ORDER = 36
TITLE = "Clock collapse (Spec B, C7): do equal clocks give equal spreads, and does the clock predict them?"


def exhibit(ctx) -> str:
    t = fg.tier(COLLAPSE)
    groups = fg.measure_groups(ctx, t, fg.shallow_blocks(COLLAPSE))
    return "\n".join([
        "C7 is judged per optimiser family on the toy tier's groups (section above) together with this grid: a "
        "monotone law spread = f(log clock) fitted on half of a family's groups predicts the other half, against "
        "the same law in log epochs; `implicitbias predict` ships the law fitted on all of them. This grid evaluates "
        "every 5 (30-epoch runs) or 20 epochs (120) and at the end, and epoch 0 counts: its selected spreads (the "
        "minimum of validation loss on that thin grid, sometimes the initialisation) are shown, not judged; C7 "
        "judges the end-of-training spread.", "",
        design(t), "", fg.overview(ctx, groups, f"collapse_{t.name}_spread_vs_clock")])
