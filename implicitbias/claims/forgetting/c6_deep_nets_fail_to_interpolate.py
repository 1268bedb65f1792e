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

The estimate beside the verdict (issue 19): the difference in interpolation rates, smallest minus
largest sigma_w, with Newcombe's hybrid-score interval (the two Wilson intervals of
``scipy.stats.binomtest``, Newcombe 1998 method 10), its coverage measured by 2,000 binomial
experiments at the measured rates; the permutation p-value is Fisher's exact test (the exact permutation
test of the 2 x 2 table).  Operating characteristics, exact (binomial; no simulation needed), in
worlds fixed before any C6 run (benchmarks/RESULTS.md, addendum of issue 19 for C6 and C7): a run
goes the other way with probability ``FLIP`` = 0.1; claim true: the smallest sigma_w interpolates
with 0.9 and the largest with 0.1; false: both with 0.9.  With n seeds at each end,
P(agrees | false) = P(disagrees | true) = 0.9^n 0.1^n, P(agrees | true) = 0.9^2n.  Without the
deep groups (the default tier) the verdict is ``not run`` and the row states the rule's rates at
the ``full`` tier's planned seeds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import binomtest, fisher_exact

from implicitbias.claims import Evidence, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.claims.forgetting.figures import curves_figure
from implicitbias.validation.analysis import GroupSummary, summarise

_BLOCKS = ("resnet56", "resnet110")
FLIP = 0.1  # the OC worlds' chance that a run goes the other way (fixed before any C6 run)


def rate_difference(small: int, n_small: int, large: int, n_large: int, level: float = 0.95) -> tuple[float, float, float]:
    """Interpolation rate at the smallest minus at the largest sigma_w (``small`` of ``n_small`` and
    ``large`` of ``n_large`` runs interpolate) with Newcombe's hybrid-score interval."""
    p1, p2 = small / n_small, large / n_large
    l1, u1 = binomtest(small, n_small).proportion_ci(level, method="wilson")
    l2, u2 = binomtest(large, n_large).proportion_ci(level, method="wilson")
    d = p1 - p2
    return d, d - math.hypot(p1 - l1, u2 - p2), d + math.hypot(u1 - p1, p2 - l2)


def coverage(p_small: float, p_large: float, n: int, sims: int = mr.SIMS, seed: int = 0) -> float:
    """The measured coverage of ``rate_difference``'s interval at true rates ``p_small``, ``p_large``
    and n seeds at each end (``sims`` binomial experiments)."""
    rng = np.random.default_rng(seed)
    truth = p_small - p_large
    pairs, counts = np.unique(np.stack([rng.binomial(n, p_small, sims), rng.binomial(n, p_large, sims)], 1), axis=0,
                              return_counts=True)
    intervals = [rate_difference(a, n, b, n)[1:] for a, b in pairs]
    return sum(c for (lo, hi), c in zip(intervals, counts) if lo - 1e-12 <= truth <= hi + 1e-12) / sims


def rates(n: int) -> mr.OC:
    """The count rule's exact operating characteristics at n seeds per end (module docstring)."""
    hit, miss = (1 - FLIP) ** n, FLIP**n
    wrong = hit * miss  # every small run interpolates and, in the true world, every large one too (or none, false)
    agree_true = hit * hit
    return mr.OC(wrong, wrong, 1 - agree_true - wrong, 1 - hit * hit - wrong, 0, n)


def _estimate(quantity: str, d: float, lo: float, hi: float, cover: float, n: int, p: float, seeds) -> mr.Estimate:
    oc = rates(n)
    return mr.Estimate(quantity, d, lo, hi, cover, n, p, oc.agree_false, oc.disagree_true, oc.inconclusive_true,
                       None, "end", mr.seed_text(seeds) if seeds else "")


@dataclass(frozen=True)
class End:
    """The runs of a deep group at one end of its sigma_w range: how many interpolate (99.5% training
    accuracy, not diverged), fail, diverged, and their final training accuracies (points)."""

    sigma_w: float
    interpolate: int
    fail: int
    diverged: int
    final_train_acc: tuple[float | None, ...]

    @property
    def n(self) -> int:
        return self.interpolate + self.fail


@dataclass(frozen=True)
class DeepGroup:
    """A deep group's summary, its smallest and largest sigma_w ends and Fisher's one-sided exact p
    (the largest fails more often)."""

    summary: GroupSummary
    smallest: End
    largest: End
    fisher_p: float

    @classmethod
    def of(cls, summary: GroupSummary) -> DeepGroup:
        """Interpolating and failing runs at the smallest and the largest sigma_w of a deep group."""
        ends = []
        for sigma in (min(summary.sigma_w), max(summary.sigma_w)):
            runs = [r for r in summary.runs if r.sigma_w == sigma]
            ok = sum(r.interpolates for r in runs)
            ends.append(End(sigma, ok, len(runs) - ok, sum(r.diverged_epoch is not None for r in runs),
                            tuple(r.final_train_acc for r in runs)))
        small, large = ends
        table = [[small.interpolate, small.fail], [large.interpolate, large.fail]]
        return cls(summary, small, large, float(fisher_exact(table, alternative="greater").pvalue))


@dataclass(frozen=True)
class Measured:
    """C6's evidence: the deep groups (none at the default tier) and the verdicts on seed halves."""

    deep: tuple[DeepGroup, ...] = ()
    halves: list | None = None


class C6(fg.GroupClaim):
    id = "C6"
    statement = "deep ResNets (56, 110 layers) at large sigma_w fail to interpolate where small sigma_w does"
    source = "Spec B s. 2 C6; Das et al. arXiv 2605.29152"
    section = "validation"
    order = 6
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    oc_sims = 0  # exact rates (``rates``); set so that the seed halves are judged
    thresholds = {"min_seeds": fg.MIN_SEEDS}
    configs = {"default": fg.Plan(()), "full": fg.Plan(((fg.FASHION_MNIST, _BLOCKS),))}

    def evidence(self, groups, label: str = "") -> Evidence:
        deep = tuple(DeepGroup.of(summarise(g)) for g in fg.roles(groups).deep)
        check = ", ".join(f"{s.setting['arch']} width {s.setting['width']:g}, {s.setting['epochs']} ep, "
                          f"sigma_w {min(s.sigma_w):g} vs {max(s.sigma_w):g}, seeds {s.seeds}"
                          for s in (d.summary for d in deep))
        return Evidence(check or "needs ResNet-56/110 groups", Measured(deep), label)

    def measure(self, ctx, config: fg.Plan):
        found = super().measure(ctx, config)
        return found or [Evidence("ResNet-56/110 on Fashion-MNIST: report tier full (hours on a CPU)", Measured())]

    def judge(self, evidence: Evidence) -> Verdict:
        deep = evidence.data.deep
        if not deep:
            planned = len(fg.experiment(fg.FASHION_MNIST).seeds)
            est = _estimate("interpolation rate, smallest - largest sigma_w (not run)", math.nan, math.nan, math.nan,
                            math.nan, planned, math.nan, ())
            return not_run("no ResNet-56/110 groups (they run in the report's full tier)",
                           f"the rule at the full tier's {planned} seeds per sigma_w (exact): P(agrees | false) "
                           f"{est.agree_false:.2g}, P(disagrees | true) {est.disagree_true:.2g}, P(inconclusive | true) "
                           f"{est.inconclusive:.2f}", estimate=est)
        parts, verdicts, estimates = [], [], []
        for e in deep:
            arch, small, large = e.summary.setting["arch"], e.smallest, e.largest
            n, m = small.n, large.n
            d, lo, hi = rate_difference(small.interpolate, n, large.interpolate, m)
            cover = coverage(small.interpolate / n, large.interpolate / m, min(n, m))
            estimates.append(_estimate(f"interpolation rate, sigma_w {small.sigma_w:g} - {large.sigma_w:g} "
                                       f"({arch}; Newcombe interval)", d, lo, hi, cover, min(n, m), e.fisher_p,
                                       e.summary.seeds))
            est = estimates[-1]
            parts.append(f"{arch}: sigma_w {small.sigma_w:g} {small.interpolate}/{n} interpolate, sigma_w "
                         f"{large.sigma_w:g} {large.interpolate}/{m} ({large.diverged} diverged); difference "
                         f"{d:.2f} [{lo:.2f}, {hi:.2f}] (Newcombe, coverage {cover:.3f} at these rates); Fisher exact "
                         f"p = {e.fisher_p:.3g} (n = {n} seeds each); exact OC: P(agrees | false) "
                         f"{est.agree_false:.2g}, P(disagrees | true) {est.disagree_true:.2g}")
            if small.fail == 0 and large.interpolate == 0:
                verdicts.append("agrees")
            elif small.fail == 0 and large.fail == 0:
                verdicts.append("disagrees")
            else:
                verdicts.append("inconclusive")
        measured = "; ".join(parts)
        archs = [e.summary.setting["arch"] for e in deep]
        # the deciding architecture: the first disagreeing one, else the first not agreeing, else the first
        order = [i for want in ("disagrees", "inconclusive", "agrees") for i, v in enumerate(verdicts) if v == want]
        if "disagrees" in verdicts:
            verdict = disagrees("large sigma_w interpolates too: " + ", ".join(a for a, v in zip(archs, verdicts)
                                                                             if v == "disagrees"), measured)
        elif all(v == "agrees" for v in verdicts):
            verdict = agrees("every deep net interpolates at the smallest sigma_w and fails at the largest", measured)
        else:
            verdict = inconclusive("mixed outcomes, or the smallest sigma_w does not interpolate in the budget: "
                                   + ", ".join(a for a, v in zip(archs, verdicts) if v == "inconclusive"), measured)
        stability = fg.stability(evidence.data.halves, verdict.verdict)
        return Verdict(verdict.verdict, fg.stated(verdict.reason, stability), measured, {"estimate": replace(estimates[order[0]], stability=stability)})

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        deep = evidence.data.deep
        if not deep:
            return ""
        path = curves_figure(ctx, [e.summary for e in deep], f"c6_{evidence.label or 'runs'}")
        return f"![C6 {evidence.label}]({ctx.link(path)})"


CLAIM = C6()
