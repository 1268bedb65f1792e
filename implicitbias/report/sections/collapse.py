"""Report section "Clock collapse" (Spec B, C7): layout only.  The claim C7 lives in
``implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads``; this section shows, before it, the design of
the crossed iso-clock grid C7 measures (``validation/specs/clock_lines.toml``) and the overview of its
groups (spreads with CIs, failures, norm slopes, clocks); the groups are
``implicitbias.claims.forgetting.group_overviews.collapse_grids``'s (the claims layer trains them).
"""

from __future__ import annotations

from implicitbias.claims.forgetting.analyse import overview
from implicitbias.claims.forgetting.group_overviews import collapse_grids, train_section
from implicitbias.report.sections.clocks import design

NAME = "collapse"
ORDER = 36
TITLE = "Clocks as directions (Spec B, C7): does memory change along the clock, or along a rival?"


def exhibit(ctx) -> str:
    parts = []
    for shown in collapse_grids(ctx):
        t = shown.experiment
        parts += [design(t), "", overview(ctx, shown.groups, f"collapse_{t.name}_spread_vs_clock")]
    return "\n".join([
        "C7 is judged per optimiser family on this grid: three clock lines 4x apart crossed with three horizons "
        "(15 / 60 / 240 epochs), so that log clock and log steps vary independently. Each seed's radial memory (the "
        "slope of log ||W_end|| of the scale-invariant kernels against log sigma_w) is fitted over the groups, and "
        "the direction along which it changes in (log clock, log steps) is compared with the clock (0 degrees) and "
        "every rival's direction (steps, epochs, lr, lr x steps, sum eta^2, lambda, lambda eta); the bound sits "
        "halfway to the nearest rival. The end-of-training spread is shown beside; `implicitbias predict` ships "
        "the monotone law spread = f(log clock) of `validation/clock_law.json`.", "", *parts])


def prefetch(ctx) -> None:
    train_section(ctx, NAME)
