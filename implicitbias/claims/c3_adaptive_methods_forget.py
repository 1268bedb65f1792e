"""C3: adaptive methods forget: Adam, AdamW and Muon show a small spread across sigma_w under the
low-lr SGD conditions and converge to a common final norm whatever sigma_w.

Source: Spec B s. 2, C3; Das et al., arXiv 2605.29152 (about 4.0 points for Muon against SGD's
26.5: a fraction 0.151 of SGD's memory).

Every adaptive group in the baseline's setting (same data, architecture, batch size and horizon)
is judged relative to the low-lr SGD baseline of the same tier, at the claim's checkpoint (minimum
validation loss among interpolating checkpoints; the minimum over all checkpoints and the end of
training stated beside).  Parts per group (``claims.memory_rules``, pre-registered):

- memory: r = m_group / m_SGD (calibrated parametric-bootstrap interval) below ``forgets``
  (FORGOTTEN = sqrt(4.0 / 26.5) = 0.389);
- norm: the mean per-seed log-norm slope (t interval) below ``common_norm`` (the same 0.389:
  1 is a final norm proportional to the initial one, 0 a common final norm).

- agrees: every part of every adaptive group agrees;
- disagrees: any part of any group lies above its bound (it remembers);
- inconclusive: the baseline does not interpolate or shows no memory (its s interval reaches 0),
  a group has fewer than ``min_seeds`` complete seeds, an interval straddles, or a simulated
  wrong-direction rate above 5% (underpowered, with the seeds needed).
"""

from __future__ import annotations

from implicitbias.claims import Evidence, Verdict, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims import memory_rules as mr
from implicitbias.claims.forgetting_figures import groups_figure
from implicitbias.validation.analysis import CHECKPOINTS, memory_of, slopes_of, summarise

_BLOCKS = ("sgd_low", "adam", "adamw", "muon")


class ForgettingClaim(fg.GroupClaim):
    """A claim that some groups (``role`` of ``forgetting.roles``) forget where low-lr SGD remembers.

    The rule C3 and C4 share: each group's memory relative to the baseline's below its bound
    (``bound_of``), and with a ``common_norm`` threshold its norm slope below that; every group.
    """

    role: str
    kind: str
    judged = "interpolating"
    oc_sims = mr.SIMS

    def bound_of(self, summary: dict) -> float:
        return self.threshold("forgets")

    def evidence(self, groups, label: str = "") -> Evidence:
        r = fg.roles(groups)
        members = getattr(r, self.role)
        base = None if r.baseline is None else summarise(r.baseline)
        data = {"baseline": base, "groups": [summarise(g) for g in members]}
        if base is not None:
            data["memory"] = {cp: memory_of(base, cp) for cp in CHECKPOINTS}
            data["group_memory"] = [{cp: memory_of(g, cp) for cp in CHECKPOINTS} for g in data["groups"]]
        return Evidence(f"{', '.join(g.label for g in members) or 'none'} vs {r.baseline.label if r.baseline else '-'}"
                        f"; verdict seeds {base['seeds'] if base else '-'}", data, label)

    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if d["baseline"] is None or not d["groups"]:
            return not_run(f"needs low-lr SGD and {self.kind} groups in the same setting")
        failures = "; ".join(f"{g['label']}: {fg.fmt_failures(g)}" for g in [d["baseline"], *d["groups"]])
        return fg.memory_verdict(lambda cp, sims: self.parts(d, cp, sims), self.judged, d["baseline"]["seeds"],
                                 self.oc_sims, failures, halves=d.get("halves"))

    def parts(self, d: dict, checkpoint: str, sims: int) -> tuple[list, str]:
        """Every group's parts at ``checkpoint`` and the rule's failed premise (module docstring)."""
        base, ref = d["baseline"], d["memory"][checkpoint]
        parts, thin = [], []
        for g, mems in zip(d["groups"], d["group_memory"]):
            mem = mems[checkpoint]
            if mem.n < self.threshold("min_seeds"):
                thin.append(f"{g['label']} ({mem.n} complete seeds)")
                continue
            if ref.usable and ref.m > 0:
                parts.append(mr.ratio_part(f"{g['label']}: memory ratio r", mem, ref, self.bound_of(g), True, sims))
            if "common_norm" in self.thresholds:
                parts.append(mr.mean_part(f"{g['label']}: norm slope", slopes_of(g), self.threshold("common_norm"),
                                          True, sims))
        premise = ""
        if not base["all_interpolate"]:
            premise = "the low-lr SGD baseline does not interpolate, so the claim's conditions are not met"
        elif not (ref.usable and ref.snr.lo > 0):
            premise = "the low-lr SGD baseline shows no memory beyond seed noise (its interval reaches 0)"
        elif thin:
            premise = f"fewer than {self.threshold('min_seeds'):g} complete seeds: {', '.join(thin)}"
        return parts, premise

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        d = evidence.data
        if d["baseline"] is None:
            return ""
        path = groups_figure(ctx, [d["baseline"], *d["groups"]], f"{self.id.lower()}_{evidence.label or 'runs'}")
        return f"![{self.id} {evidence.label}]({ctx.link(path)})"


class C3(ForgettingClaim):
    id = "C3"
    role = "adaptive"
    kind = "adaptive"
    statement = "adaptive methods (Adam, AdamW, Muon) forget: small spread and a common final norm"
    source = "Spec B s. 2 C3; Das et al. arXiv 2605.29152 (Muon about 4.0 points)"
    section = "clocks"
    order = 3
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {"forgets": mr.FORGOTTEN, "common_norm": mr.FORGOTTEN, "min_seeds": fg.MIN_SEEDS}
    configs = {"default": fg.Plan(((fg.TOY, _BLOCKS),)),
               "full": fg.Plan(((fg.TOY, _BLOCKS), (fg.FASHION_MNIST, _BLOCKS)))}


CLAIM = C3()
