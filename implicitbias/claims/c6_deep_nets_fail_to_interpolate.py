"""C6: in deeper networks (ResNet-56, ResNet-110) poor forgetting shows differently: at large
sigma_w the networks fail to train well (do not interpolate) rather than interpolating with poor
test accuracy.

Source: Spec B s. 2, C6; Das et al., arXiv 2605.29152.

Per deep architecture, the runs at its smallest and its largest sigma_w (every seed, the same
training budget): a run *interpolates* when it reaches 99.5% training accuracy and did not
diverge (a diverged run, counted and named, fails).  The 2 x 2 table (smallest / largest sigma_w
x interpolates / fails) gets Fisher's exact test (one-sided: the largest fails more often; n =
the seeds per sigma_w, stated).

- agrees: for every deep architecture all smallest-sigma_w runs interpolate and no
  largest-sigma_w run does;
- disagrees: for some deep architecture every run interpolates at both ends (large sigma_w
  trains fine);
- inconclusive: the smallest sigma_w does not interpolate in the budget (the budget is too
  small to tell), or mixed outcomes across seeds.
"""

from __future__ import annotations

from scipy.stats import fisher_exact

from implicitbias.claims import Evidence, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting_figures import curves_figure
from implicitbias.validation.analysis import summarise

_BLOCKS = ("resnet56", "resnet110")


def _ends(summary: dict) -> dict:
    """Interpolating and failing runs at the smallest and the largest sigma_w of a deep group."""
    lo, hi = min(summary["sigma_w"]), max(summary["sigma_w"])
    out = {}
    for name, sigma in (("smallest", lo), ("largest", hi)):
        runs = [r for r in summary["runs"] if r["sigma_w"] == sigma]
        ok = sum(r["tau_interp"] is not None and r["diverged_epoch"] is None for r in runs)
        out[name] = {"sigma_w": sigma, "interpolate": ok, "fail": len(runs) - ok,
                     "diverged": sum(r["diverged_epoch"] is not None for r in runs),
                     "final_train_acc": [r["final_train_acc"] for r in runs]}
    table = [[out["smallest"]["interpolate"], out["smallest"]["fail"]], [out["largest"]["interpolate"], out["largest"]["fail"]]]
    out["fisher_p"] = float(fisher_exact(table, alternative="greater").pvalue)
    return out


class C6(fg.GroupClaim):
    id = "C6"
    statement = "deep ResNets (56, 110 layers) at large sigma_w fail to interpolate where small sigma_w does"
    source = "Spec B s. 2 C6; Das et al. arXiv 2605.29152"
    section = "validation"
    order = 6
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {}
    configs = {"default": fg.Plan(()), "full": fg.Plan(((fg.FASHION_MNIST, _BLOCKS),))}

    def evidence(self, groups, label: str = "") -> Evidence:
        deep = [summarise(g) for g in fg.roles(groups).deep]
        for s in deep:
            s["ends"] = _ends(s)
        check = ", ".join(f"{s['setting']['arch']} width {s['setting']['width']:g}, {s['setting']['epochs']} ep, "
                          f"sigma_w {min(s['sigma_w']):g} vs {max(s['sigma_w']):g}, seeds {s['seeds']}" for s in deep)
        return Evidence(check or "needs ResNet-56/110 groups", {"deep": deep}, label)

    def measure(self, ctx, config: fg.Plan):
        found = super().measure(ctx, config)
        return found or [Evidence("ResNet-56/110 on Fashion-MNIST: report tier full (hours on a CPU)", {"deep": []})]

    def judge(self, evidence: Evidence) -> Verdict:
        deep = evidence.data["deep"]
        if not deep:
            return not_run("no ResNet-56/110 groups (they run in the report's full tier)")
        parts, verdicts = [], []
        for s in deep:
            e, arch = s["ends"], s["setting"]["arch"]
            small, large = e["smallest"], e["largest"]
            n = small["interpolate"] + small["fail"]
            parts.append(f"{arch}: sigma_w {small['sigma_w']:g} {small['interpolate']}/{n} interpolate, sigma_w "
                         f"{large['sigma_w']:g} {large['interpolate']}/{large['interpolate'] + large['fail']} "
                         f"({large['diverged']} diverged); Fisher exact p = {e['fisher_p']:.3g} (n = {n} seeds each)")
            if small["fail"] == 0 and large["interpolate"] == 0:
                verdicts.append("agrees")
            elif small["fail"] == 0 and large["fail"] == 0:
                verdicts.append("disagrees")
            else:
                verdicts.append("inconclusive")
        measured = "; ".join(parts)
        archs = [s["setting"]["arch"] for s in deep]
        if "disagrees" in verdicts:
            return disagrees("large sigma_w interpolates too: " + ", ".join(a for a, v in zip(archs, verdicts)
                                                                            if v == "disagrees"), measured)
        if all(v == "agrees" for v in verdicts):
            return agrees("every deep net interpolates at the smallest sigma_w and fails at the largest", measured)
        return inconclusive("mixed outcomes, or the smallest sigma_w does not interpolate in the budget: "
                            + ", ".join(a for a, v in zip(archs, verdicts) if v == "inconclusive"), measured)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        deep = evidence.data["deep"]
        if not deep:
            return ""
        path = curves_figure(ctx, deep, f"c6_{evidence.label or 'runs'}")
        return f"![C6 {evidence.label}]({ctx.link(path)})"


CLAIM = C6()
