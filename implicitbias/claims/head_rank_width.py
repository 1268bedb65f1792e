"""Section 5 on real networks, width: the effective rank of the mean logits rises with the width
of the head (Spec A s. 5).

Source: Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5.

Runs and grids: ``implicitbias.claims.head_rank``.  For every head depth L >= 2 the rise
rank(widest) - rank(narrowest) of the seed-mean ranks; the claim holds when every rise exceeds
``trend_step``, is refuted when some depth falls by more than that, and is inconclusive between.
"""

from __future__ import annotations

from implicitbias.claims import Claim, Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import head_rank as grids
from implicitbias.claims.rules import HOLDS, REVERSED, trend
from implicitbias.validation.head_rank import width_lines


class HeadRankWidth(Claim):
    id = "Sec. 5 (width)"
    statement = "effective rank of the mean logits rises with head width"
    source = "Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5"
    section = "head_rank"
    order = 20
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {
        "trend_step": Threshold(0.1, "effective-rank units, as for depth: above the seed-to-seed spread of a cell"),
    }
    configs = grids.CONFIGS

    def measure(self, ctx, config) -> list[Evidence]:
        return grids.measure(ctx, config)

    def judge(self, evidence: Evidence) -> Verdict:
        if "missing" in evidence.data:
            return not_run(evidence.data["missing"])
        lines = width_lines(grids.he_rows(evidence))
        rises = {L: line[-1][1] - line[0][1] for (_, L), line in lines.items()}
        tol = self.threshold("trend_step")
        measured = "rank(widest) - rank(narrowest) per depth: " + ", ".join(f"L = {L}: {d:+.2f}" for L, d in rises.items())
        numbers = {"rises": {str(L): d for L, d in rises.items()}}
        verdict = trend(list(rises.values()), tol)
        if verdict == HOLDS:
            return agrees(f"the rank rises by more than {tol:g} from the narrowest to the widest head at every depth",
                          measured, **numbers)
        if verdict == REVERSED:
            return disagrees(f"the rank falls with width by more than {tol:g} at some depth", measured, **numbers)
        return inconclusive(f"some depth changes by less than {tol:g} (or no line to judge)", measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        if "missing" in evidence.data:
            return ""
        lines = {f"{init} init, L = {L}": line for (init, L), line in width_lines(evidence.data["rows"]).items()}
        return grids.line_figure(ctx, f"head_rank_width_{evidence.data['dataset']}.png", lines, "head width",
                                 f"rank vs width ({evidence.data['dataset']})", log_x=True)


CLAIM = HeadRankWidth()
