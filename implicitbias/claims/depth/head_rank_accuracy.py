"""Section 5 on real networks, accuracy: lower effective rank of the mean logits generally goes
with worse test accuracy (Spec A s. 5).

Source: Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5.

Runs and grids: ``implicitbias.claims.depth.head_rank``.  Over the n cells (head depth x width, He
init, seed means) Spearman's rho between the rank and the test accuracy, with exact permutation
p-values (all n! pairings for n <= 8; ``spearman``, the one-stratum case of ``numerics.metrics.memory_stats.stratified_rank_test``).  The claim holds when
rho > 0 with one-sided p < ``significance``; it is refuted when rho < 0 with one-sided p below the
same level; anything else (a handful of cells cannot separate a weak association from none) is
inconclusive.  n and p are stated with the verdict.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive
from implicitbias.claims.depth import head_rank as grids
from implicitbias.figures import save_figure, subplots


@dataclass(frozen=True)
class Spearman:
    """Spearman's rho over n points with its one-sided permutation p-values (rho > 0, rho < 0), and
    whether they enumerate every pairing (``exact``) or sample them."""

    rho: float
    p_greater: float
    p_less: float
    n: int
    exact: bool


def spearman(x, y) -> Spearman:
    """Spearman's rho of (x, y) with its permutation p-values over the pairings
    (``stratified_rank_test`` on one stratum); NaN rho below 3 points."""
    import math

    from implicitbias.numerics.metrics.memory_stats import stratified_rank_test

    if len(x) < 3:
        return Spearman(math.nan, 1.0, 1.0, len(x), True)
    t = stratified_rank_test([(x, y)])
    return Spearman(t["rho"][0], t["p_greater"], t["p_less"], t["n"], t["exact"])


class HeadRankAccuracy(grids.HeadRankClaim):
    id = "Sec. 5 (accuracy)"
    statement = "lower effective rank goes with worse test accuracy"
    source = "Spec A s. 5; Garrod, Keating, Thrampoulidis (ICML 2026), section 5"
    order = 30
    thresholds = {
        "significance": Threshold(0.05, "one-sided exact permutation test of Spearman's rho: the conventional 5% "
                                        "level; with n = 7 cells it needs rho >= 0.71"),
    }

    def rule(self, evidence: Evidence) -> Verdict:
        rows = grids.he_rows(evidence)
        s = spearman([r.rank_mean for r in rows], [r.test_acc_mean for r in rows])
        alpha = self.threshold("significance")
        kind = "exact" if s.exact else "Monte Carlo"
        measured = (f"Spearman rho = {s.rho:.2f} over n = {s.n} cells; {kind} permutation p = "
                    f"{s.p_greater:.3f} (rho > 0), {s.p_less:.3f} (rho < 0)")
        if s.rho > 0 and s.p_greater < alpha:
            return agrees(f"rank and accuracy rise together (p = {s.p_greater:.3f} < {alpha:g}, n = {s.n})",
                          measured, **asdict(s))
        if s.rho < 0 and s.p_less < alpha:
            return disagrees(f"lower rank goes with better accuracy (p = {s.p_less:.3f} < {alpha:g}, n = {s.n})",
                             measured, **asdict(s))
        return inconclusive(f"no association significant at {alpha:g} over n = {s.n} cells", measured, **asdict(s))

    def figure(self, ctx, evidence: Evidence) -> str:
        rows = grids.he_rows(evidence)
        fig, ax = subplots(figsize=(5, 3.8))
        points = ax.scatter([r.rank_mean for r in rows], [r.test_acc_mean for r in rows], c=[r.depth for r in rows],
                            cmap="viridis")
        fig.colorbar(points, label="head depth L")
        ax.set(xlabel="effective rank of Zbar", ylabel="test accuracy", title=f"accuracy vs rank ({evidence.data.dataset})")
        ax.grid(alpha=0.3)
        columns = {"depth": [r.depth for r in rows], "width": [r.width for r in rows],
                   "rank_mean": [r.rank_mean for r in rows], "test_acc_mean": [r.test_acc_mean for r in rows]}
        path = save_figure(fig, ctx.path(f"head_rank_accuracy_{evidence.data.dataset}.png"), columns)
        return f"![accuracy vs rank]({ctx.link(path)})"


CLAIM = HeadRankAccuracy()
