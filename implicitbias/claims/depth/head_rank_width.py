"""Section 5 on real networks, width: the effective rank of the mean logits rises with the width
of the head (Spec A s. 5).

Source: Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5.

Runs and grids: ``implicitbias.claims.depth.head_rank``.  For every head depth L >= 2 the rise
rank(widest) - rank(narrowest) of the seed-mean ranks; the claim holds when every rise exceeds
``trend_step``, is refuted when some depth falls by more than that, and is inconclusive between.
"""

from __future__ import annotations

from implicitbias.claims import Evidence, Threshold, Verdict
from implicitbias.claims.depth import head_rank as grids
from implicitbias.validation.head_rank import width_lines


class HeadRankWidth(grids.HeadRankClaim):
    id = "Sec. 5 (width)"
    statement = "effective rank of the mean logits rises with head width"
    source = "Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5"
    order = 20
    thresholds = {
        "trend_step": Threshold(0.1, "effective-rank units, as for depth: above the seed-to-seed spread of a cell"),
    }

    def rule(self, evidence: Evidence) -> Verdict:
        lines = width_lines(grids.he_rows(evidence))
        return self.line_trend({f"L = {L}": line[-1][1] - line[0][1] for (_, L), line in lines.items()},
                               "rank(widest) - rank(narrowest) per depth",
                               rises="the rank rises from the narrowest to the widest head",
                               falls="the rank falls with width", each="depth")

    def figure(self, ctx, evidence: Evidence) -> str:
        lines = {f"{init} init, L = {L}": line for (init, L), line in width_lines(evidence.data.rows).items()}
        return grids.line_figure(ctx, f"head_rank_width_{evidence.data.dataset}.png", lines, "head width",
                                 f"rank vs width ({evidence.data.dataset})", log_x=True)


CLAIM = HeadRankWidth()
