"""C1: low-learning-rate SGD remembers sigma_w: test accuracy varies widely across sigma_w although
every run interpolates, and the final weight norm stays coupled to the initial one.

Source: Spec B s. 2, C1; Das et al., arXiv 2605.29152 (ResNet-9, b = 128: 26.5 points across
sigma_w, every run >= 99.5% training accuracy).

Judged from interpolating runs only (runs that never reach 99.5% training accuracy, and diverged
runs, are counted and left out): the spread of the seed-mean validation-selected test accuracy
across sigma_w (the spec's measure) with its bootstrap CI over seeds, and the log-norm slope
d log||W_final|| / d log sigma_w with its CI.  The same rule on the end-of-training spread is
stated beside the verdict (when validation loss is lowest early, the selected predictor may
predate interpolation).

- agrees: spread CI above ``remembers`` and slope CI above ``coupled``;
- disagrees: every run interpolates and the spread CI lies below ``remembers``, or the slope CI
  lies below ``coupled`` (the norm is forgotten);
- inconclusive: fewer than ``min_seeds`` seeds keep two interpolating sigma_w, or a CI straddles
  its threshold, or the spread is small while some runs do not interpolate (under-training).
"""

from __future__ import annotations

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting_figures import accuracy_figure
from implicitbias.figures import markdown_table
from implicitbias.validation.analysis import mean_by_sigma, summarise


class C1(fg.GroupClaim):
    id = "C1"
    statement = "low-lr SGD remembers sigma_w: a large test-accuracy spread although every run interpolates"
    source = "Spec B s. 2 C1; Das et al. arXiv 2605.29152 (26.5 points, ResNet-9, b = 128)"
    section = "clocks"
    order = 1
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {
        "remembers": fg.SPREAD,
        "coupled": Threshold(0.5, "log-norm slope: the final norm keeps at least half of the initial norm's log-scale "
                                  "separation across sigma_w (1: fully coupled, 0: a common norm)"),
        "min_seeds": fg.MIN_SEEDS,
    }
    configs = {"default": fg.Plan(((fg.TOY, ("sgd_low",)),)),
               "full": fg.Plan(((fg.TOY, ("sgd_low",)), (fg.FASHION_MNIST, ("sgd_low",))))}

    def evidence(self, groups, label: str = "") -> Evidence:
        base = fg.roles(groups).baseline
        if base is None:
            return Evidence("needs a plain SGD group", {"baseline": None}, label)
        s = summarise(base, interpolating_only=True)
        check = f"{base.label}, sigma_w {s['sigma_w']}, seeds {s['seeds']}; interpolating runs only"
        return Evidence(check, {"baseline": s}, label)


    def judge(self, evidence: Evidence) -> Verdict:
        s = evidence.data["baseline"]
        if s is None:
            return not_run("no plain-SGD group among the runs")
        return fg.with_end_of_training(self._rule(s, "spread_selected"), self._rule(s, "spread_final"))

    def _rule(self, s: dict, key: str) -> Verdict:
        spread, slope = s[key], s["norm_slope"]
        remembers, coupled = self.threshold("remembers"), self.threshold("coupled")
        measured = (f"spread {fg.fmt_ci(s['spread_selected'], ' pts')} (at the end "
                    f"{fg.fmt_ci(s['spread_final'], ' pts', False)}); log-norm slope {fg.fmt_ci(slope, seeds=False)}; "
                    f"{fg.fmt_failures(s)}")
        numbers = {"spread": s["spread_selected"], "spread_final": s["spread_final"], "norm_slope": slope,
                   "interpolated": s["n_interpolated"], "runs": s["n_runs"], "diverged": s["n_diverged"]}
        if spread["n"] < self.threshold("min_seeds"):
            return inconclusive(f"only {spread['n']} seeds keep two interpolating sigma_w (need "
                                f"{self.threshold('min_seeds'):g})", measured, **numbers)
        if spread["lo"] >= remembers and slope["lo"] >= coupled:
            return agrees(f"spread CI above {remembers:g} pts and norm slope CI above {coupled:g} among interpolating runs",
                          measured, **numbers)
        if slope["hi"] < coupled:
            return disagrees(f"the final norm is forgotten: slope CI below {coupled:g}", measured, **numbers)
        if spread["hi"] < remembers and s["all_interpolate"]:
            return disagrees(f"every run interpolates and the spread CI lies below {remembers:g} pts", measured, **numbers)
        if spread["hi"] < remembers:
            return inconclusive(f"spread below {remembers:g} pts but {s['n_runs'] - s['n_interpolated']} runs do not "
                                "interpolate", measured, **numbers)
        return inconclusive(f"a CI straddles its threshold ({remembers:g} pts, slope {coupled:g})", measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        s = evidence.data["baseline"]
        if s is None:
            return ""
        path = accuracy_figure(ctx, s, f"c1_{evidence.label or 'runs'}")
        sel, fin = mean_by_sigma(s, "selected_test_acc"), mean_by_sigma(s, "final_test_acc")
        taus = {}
        for r in s["runs"]:
            taus.setdefault(r["sigma_w"], []).append("-" if r["tau_interp"] is None else str(r["tau_interp"]))
        rows = [[f"{sw:g}", ", ".join(taus[sw]), f"{sel.get(sw, float('nan')):.1f}", f"{fin.get(sw, float('nan')):.1f}"]
                for sw in s["sigma_w"]]
        return "\n".join([
            f"![C1 {evidence.label}]({ctx.link(path)})", "",
            markdown_table(["sigma_w", "interpolation epoch per seed", "selected test acc (mean, %)",
                            "final test acc (mean, %)"], rows),
        ])


CLAIM = C1()
