"""Section 4 on real networks: a small head initialisation strengthens the low-rank bias (the
rich-get-richer regime of Theorem 4.4 acts before the spectrum leaves the origin).

Source: Spec A s. 4 and s. 6 ("evidence that the phenomena persist under small random
initialisation"); Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 4.4.

Runs and grids: ``implicitbias.claims.depth.head_rank``; the digits grid trains heads of depth
L >= 2 twice: He init and He x ``head_init_scale`` (0.1), same body and training.  For each
(depth, width) the gap rank(He) - rank(small); the claim holds when every gap exceeds
``trend_step``, is refuted when the small init gives a higher rank by more than that, and is
inconclusive between.
"""

from __future__ import annotations

from collections.abc import Sequence

from implicitbias.claims import Evidence, Threshold, Verdict
from implicitbias.claims.depth import head_rank as grids
from implicitbias.claims.rules import trend_verdict
from implicitbias.validation.head_rank import HeadRankRow


def pairs(rows: Sequence[HeadRankRow]) -> list[tuple[int, int, float, float]]:
    """(depth, width, rank small init, rank He init) for every depth >= 2 cell trained both ways."""
    small = {(r.depth, r.width): r.rank_mean for r in rows if r.head_init == "small" and r.depth > 1}
    he = {(r.depth, r.width): r.rank_mean for r in rows if r.head_init == "he"}
    return [(L, w, small[L, w], he[L, w]) for (L, w) in sorted(small) if (L, w) in he]


class HeadRankSmallInit(grids.HeadRankClaim):
    id = "Sec. 4 on real nets"
    statement = "small head initialisation strengthens the low-rank bias (rich get richer, Thm 4.4)"
    source = "Spec A s. 4, s. 6; Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 4.4"
    order = 40
    small_init = True
    thresholds = {
        "trend_step": Threshold(0.1, "effective-rank units, as for the depth and width trends"),
    }

    def measure(self, ctx, config) -> list[Evidence]:
        out = super().measure(ctx, config)
        for ev in out:
            base, axes = grids.GRIDS[ev.data.dataset][1]
            ev.check += (f"; small init He x{base['head_init_scale']} at depths {axes['depths']}, width {axes['widths']}, "
                         f"{len(axes['seeds'])} seed(s)")
        return out

    def rule(self, evidence: Evidence) -> Verdict:
        found = pairs(evidence.data.rows)
        tol = self.threshold("trend_step")
        measured = "; ".join(f"L = {L}, width {w}: {a:.2f} (small) vs {b:.2f} (He)" for L, w, a, b in found) or "no pairs"
        return trend_verdict(
            [b - a for *_, a, b in found], tol, measured,
            holds=f"the small init lowers the rank by more than {tol:g} at every depth",
            reversed=f"the small init raises the rank by more than {tol:g} somewhere",
            unclear=f"some gap is within {tol:g} rank units (or no pairs)",
            pairs=[list(p) for p in found])

    def figure(self, ctx, evidence: Evidence) -> str:
        found = pairs(evidence.data.rows)
        lines = {"small init": [(L, a) for L, _, a, _ in found], "He init": [(L, b) for L, _, _, b in found]}
        return grids.line_figure(ctx, f"head_rank_small_init_{evidence.data.dataset}.png", lines,
                                 "head depth L", f"small vs He head init ({evidence.data.dataset})")


CLAIM = HeadRankSmallInit()
