"""C7: forgetting is governed by cumulative clocks: within each optimiser family, runs with a
larger governing clock keep a smaller spread across sigma_w.

    T_SGD = (1/b) sum_k eta_k^2   (plain SGD, heavy ball, Nesterov without decay)
    T_L2  = lambda sum_k eta_k    (SGD family with coupled L2 decay)
    T_adapt = sum_k eta_k         (Adam, AdamW, RMSProp, sign descent, Muon)

Source: Spec B s. 2, C7 and s. 3; Das et al., arXiv 2605.29152.

The clocks have different units, so they are never pooled: within each family with at least
three groups (of one architecture and data set), Spearman's rho between log(clock at the end of
training) and the end-of-training spread of seed-mean test accuracy; the statistic is the sum of
the per-family rho, and its p-value comes from permuting spreads only within families (exact
enumeration up to 40,320 orderings, else 9,999 Monte Carlo orderings; n and the count stated).

- agrees: the sum is negative with one-sided p <= ``alpha`` (larger clock, smaller spread);
- disagrees: the sum is positive with one-sided p <= ``alpha`` (the clocks order the spreads
  the wrong way);
- inconclusive: neither, or no family has three groups.
(Issue 12 adds the quantitative test: clock-collapse grids and held-out prediction vs epochs.)
"""

from __future__ import annotations

import math

from implicitbias.claims import Evidence, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting_figures import clock_figure
from implicitbias.numerics.metrics.resampling import stratified_rank_test
from implicitbias.validation.analysis import summarise

_MIN_GROUPS = 3


def clock_points(groups) -> list[dict]:
    """One point per group: family, governing clock at the end, end-of-training spread (with CI)."""
    points = []
    for g in groups:
        s = summarise(g)
        clock = s["clocks"].get(s["governing"], math.nan) if s["governing"] else math.nan
        points.append({"label": s["label"], "family": s["family"], "governing": s["governing"], "clock": clock,
                       "spread": s["spread_final"], "n_diverged": s["n_diverged"], "n_runs": s["n_runs"]})
    return points


class C7(fg.GroupClaim):
    id = "C7"
    statement = "cumulative clocks (T_SGD, T_L2, T_adapt) order the spreads within each optimiser family"
    source = "Spec B s. 2 C7, s. 3; Das et al. arXiv 2605.29152"
    section = "clocks"
    order = 7
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {"alpha": fg.ALPHA}
    configs = {"default": fg.Plan(((fg.TOY, None),)),
               "full": fg.Plan(((fg.TOY, None), (fg.FASHION_MNIST, None)))}

    def evidence(self, groups, label: str = "") -> Evidence:
        shallow = [g for g in groups if g.setting["arch"] not in fg.DEEP]
        points = [p for p in clock_points(shallow) if p["clock"] > 0 and not math.isnan(p["spread"]["estimate"])]
        data = {"points": points}
        strata = {}
        for p in points:
            strata.setdefault(p["family"], []).append(p)
        usable = {f: ps for f, ps in strata.items() if len(ps) >= _MIN_GROUPS}
        if usable:
            data["test"] = stratified_rank_test([([math.log(p["clock"]) for p in ps], [p["spread"]["estimate"] for p in ps])
                                                 for ps in usable.values()])
            data["families"] = {f: len(ps) for f, ps in usable.items()}
        return Evidence(f"end-of-training spread vs log governing clock within families, {len(points)} groups", data, label)


    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if not d["points"]:
            return not_run("no groups with a positive governing clock")
        if "test" not in d:
            return inconclusive(f"no optimiser family has {_MIN_GROUPS} groups", f"{len(d['points'])} groups")
        t = d["test"]
        rho = ", ".join(f"{f} ({n} groups) rho {x:.2f}" for (f, n), x in zip(d["families"].items(), t["rho"]))
        measured = (f"{rho}; sum {t['statistic']:.2f}, permutation p = {t['p_less']:.3g} (falling) / {t['p_greater']:.3g} (rising), "
                    f"n = {t['n']} groups, {t['orderings']} {'exact' if t['exact'] else 'Monte Carlo'} orderings")
        numbers = {"statistic": t["statistic"], "p_less": t["p_less"], "p_greater": t["p_greater"], "n": t["n"]}
        alpha = self.threshold("alpha")
        if t["statistic"] < 0 and t["p_less"] <= alpha:
            return agrees(f"within families, a larger clock goes with a smaller spread (p <= {alpha:g})", measured, **numbers)
        if t["statistic"] > 0 and t["p_greater"] <= alpha:
            return disagrees(f"within families, a larger clock goes with a larger spread (p <= {alpha:g})", measured,
                             **numbers)
        return inconclusive("the within-family ordering is not significant either way", measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        if not evidence.data["points"]:
            return ""
        path = clock_figure(ctx, evidence.data["points"], f"c7_{evidence.label or 'runs'}")
        return f"![C7 {evidence.label}]({ctx.link(path)})"


CLAIM = C7()
