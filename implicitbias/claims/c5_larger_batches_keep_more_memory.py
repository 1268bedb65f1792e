"""C5: larger batches slow SGD's forgetting and increase the spread across sigma_w.

Source: Spec B s. 2, C5; Das et al., arXiv 2605.29152 (b in {16, 32, 64, 128, 256}).

Low-lr SGD groups that differ only in the batch size b (same learning rate and epochs: a larger
b takes fewer, equally long steps, so T_SGD = (1/b) sum eta^2 falls as 1/b^2).  Per b, the spread
of seed-mean validation-selected test accuracy (the same rule on the end-of-training spread is
stated beside the verdict); the trend is the least-squares slope of that
spread against log2 b (points per doubling of b), with

- its exact permutation p-value: all n! pairings of the n batch sizes with the n spreads
  (n = 5: 120 pairings, smallest possible p = 1/120), one-sided for an increase;
- its bootstrap CI, resampling every batch size's seeds independently.

- agrees: slope > 0 with p <= ``alpha``;
- disagrees: the slope's CI lies below ``min_trend`` (no meaningful increase: flat or falling);
- inconclusive: otherwise, or fewer than ``min_batches`` batch sizes with ``min_seeds`` seeds.
"""

from __future__ import annotations

import math

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting_figures import batch_figure
from implicitbias.numerics.metrics.resampling import slope_ci, trend_test
from implicitbias.validation.analysis import seed_matrix, spread_of_means, summarise

_BLOCKS = ("sgd_low", "sgd_low_b16", "sgd_low_b32", "sgd_low_b128", "sgd_low_b256")


class C5(fg.GroupClaim):
    id = "C5"
    statement = "larger batches slow SGD's forgetting: the spread grows with the batch size"
    source = "Spec B s. 2 C5; Das et al. arXiv 2605.29152"
    section = "clocks"
    order = 5
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {
        "alpha": fg.ALPHA,
        "min_trend": Threshold(0.5, "points per doubling of b: 2 points over 16 -> 256, the smallest rise worth the name"),
        "min_batches": Threshold(3, "a trend needs three batch sizes"),
        "min_seeds": fg.MIN_SEEDS,
    }
    configs = {"default": fg.Plan(((fg.TOY, _BLOCKS),)),
               "full": fg.Plan(((fg.TOY, _BLOCKS), (fg.FASHION_MNIST, _BLOCKS)))}

    def evidence(self, groups, label: str = "") -> Evidence:
        series = fg.roles(groups).batch_series
        summaries = [summarise(g) for g in series]
        data = {"groups": summaries}
        usable = [s for s in summaries if s["spread_selected"]["n"] >= self.threshold("min_seeds")]
        if len(usable) >= self.threshold("min_batches"):
            x = [math.log2(s["setting"]["batch_size"]) for s in usable]
            data["batch_sizes"] = [s["setting"]["batch_size"] for s in usable]
            for key, acc, suffix in (("spread_selected", "selected_test_acc", ""), ("spread_final", "final_test_acc", "_final")):
                data["test" + suffix] = trend_test(x, [s[key]["estimate"] for s in usable], "greater")
                data["slope" + suffix] = slope_ci(x, [seed_matrix(s, acc) for s in usable], spread_of_means)
        check = f"low-lr SGD at b = {[s['setting']['batch_size'] for s in summaries]}, same lr and epochs"
        return Evidence(check, data, label)


    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if not d["groups"]:
            return not_run("no low-lr SGD groups differing in batch size")
        spreads = "; ".join(f"b {s['setting']['batch_size']}: {fg.fmt_ci(s['spread_selected'], ' pts')} (end "
                            f"{fg.fmt_ci(s['spread_final'], ' pts', False)}), {fg.fmt_failures(s)}" for s in d["groups"])
        if "test" not in d:
            return inconclusive(f"fewer than {self.threshold('min_batches'):g} batch sizes with "
                                f"{self.threshold('min_seeds'):g} seeds", spreads)
        return fg.with_end_of_training(self._rule(d["test"], d["slope"], spreads),
                                       self._rule(d["test_final"], d["slope_final"], spreads))

    def _rule(self, t: dict, slope: dict, spreads: str) -> Verdict:
        measured = (f"slope {fg.fmt_ci(slope, ' pts per doubling', False)}, exact permutation p = {t['p']:.3g} "
                    f"(n = {t['n']} batch sizes, {t['pairings']} pairings); {spreads}")
        numbers = {"slope": slope, "p": t["p"], "n": t["n"], "pairings": t["pairings"]}
        if t["slope"] > 0 and t["p"] <= self.threshold("alpha"):
            return agrees(f"the spread rises with b (one-sided p <= {self.threshold('alpha'):g})", measured, **numbers)
        if slope["hi"] < self.threshold("min_trend"):
            return disagrees(f"no meaningful rise: the slope's CI lies below {self.threshold('min_trend'):g} "
                             "pts per doubling", measured, **numbers)
        return inconclusive(f"the rise is not significant (p = {t['p']:.3g}) and its CI reaches "
                            f"{self.threshold('min_trend'):g} pts per doubling", measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        if not evidence.data["groups"]:
            return ""
        path = batch_figure(ctx, evidence.data, f"c5_{evidence.label or 'runs'}")
        return f"![C5 {evidence.label}]({ctx.link(path)})"


CLAIM = C5()
