"""C3: adaptive methods forget: Adam, AdamW and Muon show a small spread across sigma_w under the
low-lr SGD conditions and converge to a common final norm whatever sigma_w.

Source: Spec B s. 2, C3; Das et al., arXiv 2605.29152 (about 4.0 points for Muon).

Every adaptive group in the baseline's setting (same data, architecture, batch size and horizon)
is judged on its own numbers, not relative to SGD: the spread of seed-mean validation-selected
test accuracy (bootstrap CI over seeds) against ``forgets``, and the log-norm slope
d log||W_final|| / d log sigma_w (CI) against the absolute bound ``common_norm``.

- agrees: every adaptive group has spread CI below ``forgets`` and slope CI below ``common_norm``;
- disagrees: some adaptive group has its spread CI above ``forgets`` or its slope CI above
  ``common_norm`` (it remembers);
- inconclusive: the low-lr SGD baseline does not interpolate (the conditions of the claim are
  not met), a group has fewer than ``min_seeds`` seeds with a spread, or a CI straddles.
"""

from __future__ import annotations

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting_figures import groups_figure
from implicitbias.validation.analysis import summarise

_BLOCKS = ("sgd_low", "adam", "adamw", "muon")


class ForgettingClaim(fg.GroupClaim):
    """A claim that some groups (``role`` of ``forgetting.roles``) forget where low-lr SGD remembers.

    The rule C3 and C4 share: each group forgets (spread CI below ``forgets``; with a
    ``common_norm`` threshold, also the log-norm slope CI below it) or remembers (a CI above).
    Judged on the validation-selected spread, the end-of-training spread's verdict stated beside it.
    """

    role: str
    kind: str

    def evidence(self, groups, label: str = "") -> Evidence:
        r = fg.roles(groups)
        members = getattr(r, self.role)
        base = None if r.baseline is None else summarise(r.baseline)
        data = {"baseline": base, "groups": [summarise(g) for g in members]}
        return Evidence(f"{', '.join(g.label for g in members) or 'none'} vs {r.baseline.label if r.baseline else '-'}",
                        data, label)

    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if d["baseline"] is None or not d["groups"]:
            return not_run(f"needs low-lr SGD and {self.kind} groups in the same setting")
        slope_bound = self.threshold("common_norm") if "common_norm" in self.thresholds else None
        return fg.with_end_of_training(*(_forgetting_rule(self, d, key, slope_bound)
                                         for key in ("spread_selected", "spread_final")))

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        d = evidence.data
        if d["baseline"] is None:
            return ""
        path = groups_figure(ctx, [d["baseline"], *d["groups"]], f"{self.id.lower()}_{evidence.label or 'runs'}")
        return f"![{self.id} {evidence.label}]({ctx.link(path)})"


def _forgetting_rule(claim: fg.GroupClaim, d: dict, key: str, slope_bound: float | None) -> Verdict:
    thr, seeds = claim.threshold("forgets"), claim.threshold("min_seeds")
    parts, forget, remember, thin = [], [], [], []
    for g in d["groups"]:
        spread, slope = g[key], g["norm_slope"]
        parts.append(f"{g['label']}: spread {fg.fmt_ci(g['spread_selected'], ' pts')} (end "
                     f"{fg.fmt_ci(g['spread_final'], ' pts', False)}), slope {fg.fmt_ci(slope, seeds=False)}, "
                     f"{fg.fmt_failures(g)}")
        if spread["n"] < seeds:
            thin.append(g["label"])
            continue
        high = spread["lo"] >= thr or (slope_bound is not None and slope["lo"] >= slope_bound)
        low = spread["hi"] < thr and (slope_bound is None or slope["hi"] < slope_bound)
        (remember if high else forget if low else []).append(g["label"])
    base = d["baseline"]
    measured = (f"low-lr SGD {fg.fmt_ci(base['spread_selected'], ' pts', False)} ({fg.fmt_failures(base)}); "
                + "; ".join(parts))
    numbers = {"forget": forget, "remember": remember, "thin": thin}
    what = f"spread < {thr:g} pts" + (f" and slope < {slope_bound:g}" if slope_bound is not None else "")
    if not base["all_interpolate"]:
        return inconclusive("the low-lr SGD baseline does not interpolate, so the claim's conditions are not met",
                            measured, **numbers)
    if remember:
        return disagrees(f"{', '.join(remember)} remember{'s' if len(remember) == 1 else ''} (a CI above the bound)",
                         measured, **numbers)
    if thin:
        return inconclusive(f"fewer than {seeds:g} seeds with a spread: {', '.join(thin)}", measured, **numbers)
    if len(forget) == len(d["groups"]):
        return agrees(f"every {claim.kind} group forgets ({what}, whole CIs)", measured, **numbers)
    return inconclusive("a CI straddles its bound for " + ", ".join(g["label"] for g in d["groups"]
                                                                     if g["label"] not in forget), measured, **numbers)


class C3(ForgettingClaim):
    id = "C3"
    role = "adaptive"
    kind = "adaptive"
    statement = "adaptive methods (Adam, AdamW, Muon) forget: small spread and a common final norm"
    source = "Spec B s. 2 C3; Das et al. arXiv 2605.29152 (Muon about 4.0 points)"
    section = "clocks"
    order = 3
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {
        "forgets": fg.SPREAD,
        "common_norm": Threshold(0.3, "log-norm slope: over sigma_w 0.25 -> 2.5 the final norms differ by < 2x "
                                      "where the initial ones differ by 10x"),
        "min_seeds": fg.MIN_SEEDS,
    }
    configs = {"default": fg.Plan(((fg.TOY, _BLOCKS),)),
               "full": fg.Plan(((fg.TOY, _BLOCKS), (fg.FASHION_MNIST, _BLOCKS)))}


CLAIM = C3()
