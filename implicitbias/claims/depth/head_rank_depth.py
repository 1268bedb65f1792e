"""Section 5 on real networks, depth: the effective rank of the mean logits falls as the head
deepens (depth's low-rank bias, Spec A s. 5).

Source: Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5 (ResNet-20 with a deep
head on MNIST and CIFAR-10; here offline digits and, on the gpu/full tiers, Fashion-MNIST).

Runs and grids: ``implicitbias.claims.depth.head_rank``.  For every head width the line of seed-mean
ranks over depth (the depth-1 head starts every line) is summarised by the drop
rank(shallowest) - rank(deepest).  The claim holds when every drop exceeds ``trend_step``, is
refuted when some line rises by more than that, and is inconclusive in between.
"""

from __future__ import annotations

from implicitbias.claims import Evidence, Threshold, Verdict
from implicitbias.claims.depth import head_rank as grids
from implicitbias.validation.head_rank import depth_lines


class HeadRankDepth(grids.HeadRankClaim):
    id = "Sec. 5 (depth)"
    statement = "effective rank of the mean logits falls as the head deepens"
    source = "Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5"
    order = 10
    thresholds = {
        "trend_step": Threshold(0.1, "effective-rank units: the seed-to-seed spread of one cell is a few hundredths "
                                     "to a tenth; the depth effect the source reports is whole ranks"),
    }

    def rule(self, evidence: Evidence) -> Verdict:
        lines = depth_lines(grids.he_rows(evidence))
        return self.line_trend({w: line[0][1] - line[-1][1] for (_, w), line in lines.items()},
                               "rank(L min) - rank(L max) per width",
                               rises="the rank falls from the shallowest to the deepest head",
                               falls="the rank rises with depth", each="width")

    def figure(self, ctx, evidence: Evidence) -> str:
        rows, dataset = evidence.data.rows, evidence.data.dataset
        lines = {f"{init} init, width {w}": line for (init, w), line in depth_lines(rows).items()}
        figure = grids.line_figure(ctx, f"head_rank_depth_{dataset}.png", lines, "head depth L (weight matrices)",
                                   f"rank vs depth ({dataset})")
        return f"{figure}\n\n{grids.table(rows)}"


CLAIM = HeadRankDepth()
