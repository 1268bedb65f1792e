"""The rule C3 and C4 share: groups that forget where low-lr SGD remembers.

Source: Spec B s. 2, C3 and C4; Das et al., arXiv 2605.29152.

Each group of the claim's role (``forgetting.roles``) is judged relative to the low-lr SGD
baseline of the same tier: its memory r = m_group / m_SGD (``claims.forgetting.memory_rules``,
pre-registered) below its bound (``bound_of``), and with a ``common_norm`` threshold its mean
per-seed log-norm slope below that; every group.  The verdict is the memory rule's
(``forgetting.wording.memory_verdict``), with its simulated operating characteristics, judged only
where the regime's targets its thresholds name are met (``forgetting.regime``: else ``inconclusive``,
regime: clocks not matched); the radial memory of the baseline and of every group is stated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from implicitbias.claims import Evidence, Verdict, not_run
from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.claims.forgetting.figures import groups_figure
from implicitbias.claims.forgetting.group_claim import GroupClaim
from implicitbias.claims.forgetting.regime import (radial_by_checkpoint, radial_context, radial_numbers, regime_misses,
                                                   regime_premise)
from implicitbias.claims.forgetting.roles import roles
from implicitbias.claims.forgetting.wording import fmt_failures, memory_verdict
from implicitbias.numerics.metrics.memory_stats import Memory
from implicitbias.numerics.metrics.radial_memory import RadialMemory
from implicitbias.validation.analysis import CHECKPOINTS, GroupSummary, memory_of, slopes_of, summarise

__all__ = ["ForgettingClaim", "Measured"]


@dataclass(frozen=True)
class Measured:
    """The evidence of C3 and C4: the baseline's summary and the compared groups' (``groups``); per
    checkpoint (``CHECKPOINTS``) the baseline's memory and radial memory and each group's
    (``group_memory``, ``group_radial``, in the order of ``groups``); C4's governing clock of each
    group at the judged checkpoint (``clocks``, median over runs); the verdicts on seed halves.
    ``baseline`` None: no low-lr SGD group (then nothing else is measured)."""

    baseline: GroupSummary | None
    groups: tuple[GroupSummary, ...]
    memory: dict[str, Memory] = field(default_factory=dict)
    group_memory: tuple[dict[str, Memory], ...] = ()
    radial: dict[str, RadialMemory | None] = field(default_factory=dict)
    group_radial: tuple[dict[str, RadialMemory | None], ...] = ()
    clocks: tuple[float, ...] = ()
    halves: list | None = None


class ForgettingClaim(GroupClaim):
    """A claim that some groups (``role`` of ``forgetting.roles.roles``) forget where low-lr SGD remembers.

    The rule C3 and C4 share: each group's memory relative to the baseline's below its bound
    (``bound_of``), and with a ``common_norm`` threshold its norm slope below that; every group.
    """

    role: str
    kind: str
    judged = "interpolating"
    oc_sims = mr.SIMS

    def bound_of(self, summary: GroupSummary) -> float:
        return self.threshold("forgets")

    def evidence(self, groups, label: str = "") -> Evidence:
        r = roles(groups)
        members = getattr(r, self.role)
        base = None if r.baseline is None else summarise(r.baseline)
        summaries = tuple(summarise(g) for g in members)
        data = Measured(base, summaries)
        if base is not None:
            data = Measured(base, summaries, {cp: memory_of(base, cp) for cp in CHECKPOINTS},
                            tuple({cp: memory_of(g, cp) for cp in CHECKPOINTS} for g in summaries),
                            radial_by_checkpoint(r.baseline), tuple(radial_by_checkpoint(g) for g in members))
        return Evidence(f"{', '.join(g.label for g in members) or 'none'} vs {r.baseline.label if r.baseline else '-'}"
                        f"; verdict seeds {base.seeds if base else '-'}", data, label)

    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if d.baseline is None or not d.groups:
            return not_run(f"needs low-lr SGD and {self.kind} groups in the same setting")
        failures = "; ".join(f"{g.label}: {fmt_failures(g)}" for g in [d.baseline, *d.groups])
        labels = [g.label for g in [d.baseline, *d.groups]]
        radials = [d.radial[self.judged], *(r[self.judged] for r in d.group_radial)]
        return memory_verdict(lambda cp, sims: self.parts(d, cp, sims), self.judged, d.baseline.seeds,
                              self.oc_sims, f"{failures}; {radial_context(labels, radials, self.judged)}",
                              halves=d.halves, numbers={"radial": radial_numbers(labels, radials)})

    def parts(self, d: Measured, checkpoint: str, sims: int) -> tuple[list, str]:
        """Every group's parts at ``checkpoint`` and the rule's failed premise (module docstring)."""
        base, ref = d.baseline, d.memory[checkpoint]
        parts, thin = [], []
        for g, mems in zip(d.groups, d.group_memory):
            mem = mems[checkpoint]
            if mem.n < self.threshold("min_seeds"):
                thin.append(f"{g.label} ({mem.n} complete seeds)")
                continue
            if ref.usable and ref.m > 0:
                parts.append(mr.ratio_part(f"{g.label}: memory ratio r", mem, ref, self.bound_of(g), True, sims))
            if "common_norm" in self.thresholds:
                parts.append(mr.mean_part(f"{g.label}: norm slope", slopes_of(g), self.threshold("common_norm"),
                                          True, sims))
        premise = ""
        if not base.all_interpolate:
            premise = "the low-lr SGD baseline does not interpolate, so the claim's conditions are not met"
        elif not (ref.usable and ref.snr.lo > 0):
            premise = "the low-lr SGD baseline shows no memory beyond seed noise (its interval reaches 0)"
        elif thin:
            premise = f"fewer than {self.threshold('min_seeds'):g} complete seeds: {', '.join(thin)}"
        else:  # the regime's targets this claim's thresholds name (forgetting.regime)
            kept = self.threshold("kept_slope") if "kept_slope" in self.thresholds else None
            forgotten = ((self.threshold("forgotten_clock"), self.threshold("forgotten_slope"))
                         if "forgotten_clock" in self.thresholds else None)
            premise = regime_premise(regime_misses(base, d.radial[checkpoint], d.groups,
                                                   [r[checkpoint] for r in d.group_radial], kept, forgotten))
        return parts, premise

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        d = evidence.data
        if d.baseline is None:
            return ""
        path = groups_figure(ctx, [d.baseline, *d.groups], f"{self.id.lower()}_{evidence.label or 'runs'}")
        return f"![{self.id} {evidence.label}]({ctx.link(path)})"
