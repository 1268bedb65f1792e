"""How Spec B's verdicts read: a memory rule's verdict with its operating characteristics and
stability, an estimate with its CI and n, the failures of a group.

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING
from dataclasses import replace

import implicitbias.claims.forgetting.memory_rules as mr  # not "from the package import": it imports this module
from implicitbias.claims import Verdict
from implicitbias.claims.forgetting.group_claim import MIN_SEEDS
from implicitbias.validation.analysis import CHECKPOINTS

if TYPE_CHECKING:
    from implicitbias.numerics.metrics.resampling import Interval
    from implicitbias.validation.analysis import GroupSummary

__all__ = ["memory_verdict", "span", "stability", "stated", "fmt_ci", "fmt_failures"]


def stability(halves: Sequence | None, verdict: str) -> str:
    """From an Evidence's ``halves`` and the whole set's ``verdict``: "same verdict on seeds 10-13
    (agrees) and 14-17 (agrees), intervals only" when both halves give the verdict; "not the same
    verdict on seeds ... (agrees) and ... (inconclusive), ..." when the halves differ; "both halves
    give disagrees (seeds ... and ..., intervals only), the whole set inconclusive" when they agree
    with each other and not with the verdict (the halves are judged without the simulated gate, which
    can make the whole set's verdict inconclusive).  When they could not be judged (a group with
    fewer than 2 x ``MIN_SEEDS`` seeds) it says so; "" when none were computed (``halves`` None)."""
    if halves is None:
        return ""
    if len(halves) != 2:
        return f"not judged on seed halves (a group has fewer than 2 x {float(MIN_SEEDS):g} seeds)"
    (a, va), (b, vb) = halves
    if va == vb != verdict:
        return f"both halves give {va} (seeds {span(a)} and {span(b)}, intervals only), the whole set {verdict}"
    return (f"{'same verdict' if va == vb else 'not the same verdict'} on seeds {span(a)} ({va}) and "
            f"{span(b)} ({vb}), intervals only")


def stated(reason: str, stable: str) -> str:
    """A verdict's ``reason`` with its stability on seed halves (``stability``) appended; "" adds nothing."""
    return f"{reason}; stability: {stable}" if stable else reason


def memory_verdict(parts_at: Callable[[str, int], tuple[list, str]], judged: str, seeds: Sequence[int],
                   sims: int, context: str = "", halves: Sequence | None = None,
                   numbers: Mapping | None = None) -> Verdict:
    """The verdict of a memory rule (``claims.forgetting.memory_rules``) judged at checkpoint ``judged``, with
    its simulated operating characteristics; the same rule at the other checkpoints stated beside.

    ``parts_at(checkpoint, sims)`` returns the rule's parts there and a failed premise ("" if none);
    ``sims`` = 0 judges by the intervals alone (no simulation, no underpowered verdict: the rule's tests).
    ``halves``: the verdicts on two disjoint seed halves (``GroupClaim.halves``), stated as stability.
    ``numbers``: more of the verdict's numbers (the groups' radial memory, ``forgetting.regime``).
    """
    decision = mr.decide(*parts_at(judged, sims), simulate=sims > 0)
    beside = {cp: mr.decide(*parts_at(cp, 0), simulate=False).verdict for cp in CHECKPOINTS if cp != judged}
    differ = [cp for cp, v in beside.items() if v != decision.verdict]
    oc = decision.oc
    rates = ("OC not simulated" if oc is None else
             f"simulated ({oc.sims} experiments, n = {oc.n}): P(agrees | false) {oc.agree_false:.3f}, P(disagrees | true) "
             f"{oc.disagree_true:.3f}, P(inconclusive | true) {oc.inconclusive_true:.3f}"
             + (" (the rule's at these data; not used: its premise fails)" if decision.premise else ""))
    measured = "; ".join([mr.describe(p) for p in decision.parts] + [rates] + ([context] if context else []))
    also = ", ".join(f"{cp}: {v}" for cp, v in beside.items())
    reason = (f"{decision.reason} (at the {judged} checkpoint); same rule at {also}"
              + (f" (differs at {', '.join(differ)})" if differ else ""))
    stable = stability(halves, decision.verdict)
    estimate = replace(mr.estimate_of(decision, judged, seeds), stability=stable)
    return Verdict(decision.verdict, stated(reason, stable), measured, {"estimate": estimate, "beside": beside,
                                                        "parts": decision.parts, **(numbers or {})})


def span(seeds: Sequence[int]) -> str:
    """``10-17`` for consecutive seeds, else ``1, 3, 5``."""
    s = sorted(seeds)
    return f"{s[0]}-{s[-1]}" if s == list(range(s[0], s[-1] + 1)) and len(s) > 2 else ", ".join(map(str, s))


def fmt_ci(ci: Interval, unit: str = "", seeds: bool = True) -> str:
    """``12.3 [9.1, 15.0] pts, 4 seeds``: an estimate with its 95% CI and n."""
    if ci.n == 0 or math.isnan(ci.estimate):
        return "n/a (no seeds)"
    tail = f", {ci.n} seed{'s' if ci.n != 1 else ''}" if seeds else ""
    return f"{ci.estimate:.2f} [{ci.lo:.2f}, {ci.hi:.2f}]{unit}{tail}"


def fmt_failures(summary: GroupSummary) -> str:
    """Interpolated and diverged counts of a group summary, naming the diverged runs."""
    text = f"{summary.n_interpolated}/{summary.n_runs} interpolate"
    diverged = [r for r in summary.runs if r.diverged_epoch is not None]
    if diverged:
        named = "; ".join(f"sigma_w {r.sigma_w:g} seed {r.seed} at epoch {r.diverged_epoch}: {r.diverged_reason}"
                          for r in diverged[:3])
        more = f"; {len(diverged) - 3} more" if len(diverged) > 3 else ""
        text += f", {len(diverged)} diverged (left out: {named}{more})"
    return text
