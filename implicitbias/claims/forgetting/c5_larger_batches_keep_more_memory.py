"""C5: larger batches slow SGD's forgetting and increase the spread across sigma_w.

Source: Spec B s. 2, C5; Das et al., arXiv 2605.29152 (b in {16, 32, 64, 128, 256}).

Low-lr SGD groups that differ only in the batch size b (same learning rate and epochs: a larger
b takes fewer, equally long steps, so T_SGD = (1/b) sum eta^2 falls as 1/b^2).  Part
(``claims.forgetting.memory_rules``, pre-registered as q = m(largest b) / m(smallest b) above ``grows`` = 1,
computed as its reciprocal so that a smallest batch without memory is a ratio of 0, not a
division by 0; the percentile interval of 1/q is the reciprocal of q's): r = m(smallest b) /
m(largest b) below 1 / ``grows``.  Judged at the minimum validation loss over all checkpoints
(the spec's measure; the toy tier's b = 16 never interpolates), the interpolating checkpoint and
the end beside.  Shown with it: the exact permutation trend test of the memories against log2 b
(all n! pairings).

- agrees: the interval lies below 1 (the smallest batch remembers less); disagrees: above 1;
- inconclusive: fewer than ``min_batches`` batch sizes with ``min_seeds`` complete seeds, the
  largest batch shows no memory, a straddling interval, or underpowered (simulated rates > 5%).

The verdict states every batch size's radial memory at the judged checkpoint (``forgetting.regime``);
no regime gate: the series is all low-lr SGD, and how much of its norm each batch size keeps is
what the claim compares, not a condition of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from implicitbias.claims import Evidence, Threshold, Verdict, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.claims.forgetting.figures import batch_figure
from implicitbias.claims.forgetting.regime import radial_by_checkpoint, radial_context, radial_numbers
from implicitbias.numerics.metrics.resampling import trend_test
from implicitbias.numerics.metrics.memory_stats import Memory
from implicitbias.numerics.metrics.radial_memory import RadialMemory
from implicitbias.validation.analysis import CHECKPOINTS, GroupSummary, memory_of, summarise

_BLOCKS = ("sgd_low", "sgd_low_b16", "sgd_low_b32", "sgd_low_b128", "sgd_low_b256")


@dataclass(frozen=True)
class Measured:
    """C5's evidence: the low-lr SGD groups by batch size (``groups``), per checkpoint (``CHECKPOINTS``)
    their memories in that order, each group's radial memory by checkpoint, the verdicts on seed halves."""

    groups: tuple[GroupSummary, ...] = ()
    memory: dict[str, list[Memory]] = field(default_factory=dict)
    radial: tuple[dict[str, RadialMemory | None], ...] = ()
    halves: list | None = None


class C5(fg.GroupClaim):
    id = "C5"
    statement = "larger batches slow SGD's forgetting: the spread grows with the batch size"
    source = "Spec B s. 2 C5; Das et al. arXiv 2605.29152"
    section = "clocks"
    order = 5
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    judged = "all"
    oc_sims = mr.SIMS
    thresholds = {
        "grows": mr.GROWS,
        "min_batches": Threshold(3, "a trend needs three batch sizes"),
        "min_seeds": fg.MIN_SEEDS,
    }
    configs = {"default": fg.Plan(((fg.TOY, _BLOCKS),)),
               "full": fg.Plan(((fg.TOY, _BLOCKS), (fg.FASHION_MNIST, _BLOCKS)))}

    def evidence(self, groups, label: str = "") -> Evidence:
        series = fg.roles(groups).batch_series
        summaries = tuple(summarise(g) for g in series)
        data = Measured(summaries, {cp: [memory_of(s, cp) for s in summaries] for cp in CHECKPOINTS},
                        tuple(radial_by_checkpoint(g) for g in series))
        check = (f"low-lr SGD at b = {[s.setting['batch_size'] for s in summaries]}, same lr and epochs; verdict "
                 f"seeds {summaries[0].seeds if summaries else '-'}")
        return Evidence(check, data, label)

    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if not d.groups:
            return not_run("no low-lr SGD groups differing in batch size")
        mems = d.memory[self.judged]
        usable = [(s, m) for s, m in zip(d.groups, mems) if m.n >= self.threshold("min_seeds")]
        context = "; ".join(f"b {s.setting['batch_size']}: m {m.m:.2f} pts (raw spread {m.spread:.2f}, noise "
                            f"{m.sigma:.2f}, {m.n} seeds, permutation p {m.p:.3g}), {fg.fmt_failures(s)}"
                            for s, m in zip(d.groups, mems))
        if len(usable) >= self.threshold("min_batches"):
            t = trend_test([math.log2(s.setting["batch_size"]) for s, _ in usable], [m.m for _, m in usable])
            context += (f"; memory trend {t.slope:.2f} pts per doubling, exact permutation p {t.p:.3g} "
                        f"({t.pairings} pairings)")
        labels, radial = [s.label for s in d.groups], [r[self.judged] for r in d.radial]
        context += f"; {radial_context(labels, radial, self.judged)}"
        return fg.memory_verdict(lambda cp, sims: self.parts(d, cp, sims), self.judged, d.groups[0].seeds,
                                 self.oc_sims, context, halves=d.halves,
                                 numbers={"radial": radial_numbers(labels, radial)})

    def parts(self, d: Measured, checkpoint: str, sims: int) -> tuple[list, str]:
        """The part at ``checkpoint`` and the rule's failed premise (module docstring)."""
        usable = [(s, m) for s, m in zip(d.groups, d.memory[checkpoint]) if m.n >= self.threshold("min_seeds")]
        if len(usable) < self.threshold("min_batches"):
            return [], (f"fewer than {self.threshold('min_batches'):g} batch sizes with "
                        f"{self.threshold('min_seeds'):g} complete seeds")
        (small, m_small), (large, m_large) = usable[0], usable[-1]
        if not m_large.m > 0:
            return [], f"the largest batch (b {large.setting['batch_size']}) shows no memory"
        what = f"memory ratio m(b {small.setting['batch_size']}) / m(b {large.setting['batch_size']})"
        return [mr.ratio_part(what, m_small, m_large, 1 / self.threshold("grows"), True, sims)], ""

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        if not evidence.data.groups:
            return ""
        path = batch_figure(ctx, evidence.data, f"c5_{evidence.label or 'runs'}")
        return f"![C5 {evidence.label}]({ctx.link(path)})"


CLAIM = C5()
