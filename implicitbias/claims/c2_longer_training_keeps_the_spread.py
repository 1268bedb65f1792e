"""C2: training longer does not help: many more epochs of the same low-lr SGD leave the spread
essentially unchanged (the memory is not under-training).

Source: Spec B s. 2, C2; Das et al., arXiv 2605.29152 (5,000 epochs of low-lr SGD).

The baseline (low-lr SGD, constant learning rate) at horizon E and the same setting at the longest
horizon kE available (the toy tier: k = 25; its first E epochs are evaluated every epoch, so its
validation selection sees every checkpoint the E run sees).  The runs are paired by seed, and the
change Delta = spread(kE) - spread(E) of the spread of seed-mean test accuracy gets a paired
bootstrap CI over seeds.  Judged on the validation-selected spread (the spec's measure: longer
training changes it only if a later checkpoint has a lower validation loss); the same rule on the
end-of-training spread (do the interpolating networks forget?) is stated beside the verdict.
Two-sided, with a tolerance of ``unchanged`` times the spread at E (at least ``floor`` points):

- agrees: the CI of Delta lies inside [-tol, tol] (unchanged);
- disagrees: the CI lies entirely above tol or below -tol (the spread grew or shrank);
- inconclusive: the CI crosses a tolerance bound; fewer than ``min_seeds`` paired seeds; or the
  horizons differ by less than ``min_ratio``.
"""

from __future__ import annotations

import numpy as np

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting_figures import horizon_figure
from implicitbias.numerics.metrics.resampling import bootstrap
from implicitbias.validation.analysis import seed_matrix, seed_tables, spread_of_means, summarise


def paired_change(short: dict, long: dict, key: str = "selected_test_acc") -> dict:
    """Bootstrap CI over the seeds both horizons share of spread(long) - spread(short) (points)."""
    seeds = sorted(set(seed_tables(short, key)) & set(seed_tables(long, key)))
    if short["sigma_w"] != long["sigma_w"]:
        raise ValueError("the two horizons must share their sigma_w grid")
    pairs = np.stack([seed_matrix(short, key, seeds), seed_matrix(long, key, seeds)], axis=1)  # (seeds, 2, sigma_w)
    return bootstrap([pairs], lambda p: spread_of_means(p[..., 1, :]) - spread_of_means(p[..., 0, :]))


class C2(fg.GroupClaim):
    id = "C2"
    statement = "training longer does not help: the low-lr SGD spread stays essentially unchanged"
    source = "Spec B s. 2 C2; Das et al. arXiv 2605.29152 (5,000 epochs)"
    section = "clocks"
    order = 2
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {
        "unchanged": Threshold(0.25, "a change by less than a quarter of the spread at E is 'essentially unchanged'"),
        "floor": Threshold(2.0, "points: the tolerance never goes below the ~2-point noise of a seed-mean spread"),
        "min_ratio": Threshold(4.0, "a horizon ratio below 4x is too close to E to test 'much longer' (toy: 25x)"),
        "min_seeds": fg.MIN_SEEDS,
    }
    configs = {"default": fg.Plan(((fg.TOY, ("sgd_low", "sgd_low_25x")),)),
               "full": fg.Plan(((fg.TOY, ("sgd_low", "sgd_low_25x")),))}  # the real-image tier has one horizon

    def evidence(self, groups, label: str = "") -> Evidence:
        r = fg.roles(groups)
        if r.baseline is None or not r.longer:
            return Evidence("needs low-lr SGD at two horizons", {"short": None}, label)
        long = r.longer[-1]
        short_s, long_s = summarise(r.baseline), summarise(long)
        E, kE = r.baseline.setting["epochs"], long.setting["epochs"]
        data = {"short": short_s, "long": long_s, "ratio": kE / E,
                "delta": paired_change(short_s, long_s), "delta_final": paired_change(short_s, long_s, "final_test_acc")}
        return Evidence(f"{r.baseline.label} vs {kE} epochs ({kE / E:g}x), constant lr, paired seeds", data, label)


    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if d["short"] is None:
            return not_run("no low-lr SGD group at a longer horizon among the runs")
        return fg.with_end_of_training(self._rule(d, "spread_selected", d["delta"]),
                                       self._rule(d, "spread_final", d["delta_final"]))

    def _rule(self, d: dict, key: str, delta: dict) -> Verdict:
        tol = max(self.threshold("unchanged") * d["short"][key]["estimate"], self.threshold("floor"))
        measured = "; ".join(
            f"{name}: {fg.fmt_ci(d['short'][k], ' pts', False)} at E -> {fg.fmt_ci(d['long'][k], ' pts', False)} at "
            f"{d['ratio']:g}E, change {fg.fmt_ci(change, ' pts')}"
            for name, k, change in (("selected", "spread_selected", d["delta"]), ("end", "spread_final", d["delta_final"])))
        measured += (f" (tolerance +-{tol:.2f}); E: {fg.fmt_failures(d['short'])}; "
                     f"{d['ratio']:g}E: {fg.fmt_failures(d['long'])}")
        numbers = {"delta": d["delta"], "delta_final": d["delta_final"], "ratio": d["ratio"], "tolerance": tol}
        if d["ratio"] < self.threshold("min_ratio"):
            return inconclusive(f"horizons differ by only {d['ratio']:g}x (need {self.threshold('min_ratio'):g}x)",
                                measured, **numbers)
        if delta["n"] < self.threshold("min_seeds"):
            return inconclusive(f"only {delta['n']} paired seeds", measured, **numbers)
        if -tol <= delta["lo"] and delta["hi"] <= tol:
            return agrees(f"the change's CI lies within +-{tol:.2f} pts", measured, **numbers)
        if delta["lo"] > tol or delta["hi"] < -tol:
            way = "grew" if delta["lo"] > tol else "shrank"
            return disagrees(f"the spread {way} by more than {tol:.2f} pts (whole CI)", measured, **numbers)
        return inconclusive(f"the change's CI crosses the tolerance +-{tol:.2f} pts", measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        d = evidence.data
        if d["short"] is None:
            return ""
        path = horizon_figure(ctx, d["short"], d["long"], f"c2_{evidence.label or 'runs'}")
        return f"![C2 {evidence.label}]({ctx.link(path)})"


CLAIM = C2()
