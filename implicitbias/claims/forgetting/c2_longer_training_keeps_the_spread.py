"""C2: training longer does not help: many more epochs of the same low-lr SGD leave the spread
essentially unchanged (the memory is not under-training).

Source: Spec B s. 2, C2; Das et al., arXiv 2605.29152 (5,000 epochs of low-lr SGD).

The baseline (low-lr SGD) at horizon E and the same setting at the longest horizon kE available
(``validation/specs/horizon.toml``: constant lr 0.05 for E = 240 and 5E = 1,200 epochs, since the
regime addendum of issue 27; cosine to 0 over 120 and 600 epochs at lr 0.3 before, whose short run
kept only 0.69 of its norm's slope).  The primary checkpoint is the end, so the long run's first E
epochs, which repeat the short run on a constant schedule, decide nothing: at the interpolating
checkpoint beside it the two runs share a clock and the leverage premise says so.  Part
(``claims.forgetting.memory_rules``, pre-registered): the memory kept, r = m(kE) / m(E) (calibrated parametric-bootstrap interval; the two horizons share seeds, which
the interval treats as independent: conservative for positively correlated memories), above
``kept`` (FORGOTTEN = sqrt(4.0 / 26.5) = 0.389: the long run has not forgotten as the paper's
Muon does).

Checkpoint (pre-registered, issue 27): the primary one is the end of training, the predictor
"training longer" produces, where the long run's whole clock has acted (on ``horizon.toml`` the
governing T_SGD = (1/b) sum eta^2 is 5x the short run's there, as the epochs); the interpolating
checkpoint (minimum validation loss among interpolating checkpoints, the one C1 judges) and the
minimum over all checkpoints are judged beside it.  At the interpolating checkpoint the 600-epoch
runs were selected at epochs whose clock is only 1.04-1.75x the 120-epoch runs', so the two
predictors had nearly the same clock and C2 agreed by construction.  Premise ``min_leverage``: the
governing clock at the two checkpoints compared (the median over each group's kept runs of its
value at the epoch each run's checkpoint selects, ``validation.analysis.clock_at``) at least 4x
apart, else ``inconclusive`` (no leverage), both clocks stated.

- agrees: the interval lies above ``kept``; disagrees: below it (longer training forgets);
- inconclusive: horizons less than ``min_ratio`` apart, fewer than ``min_seeds`` complete seeds,
  clocks less than ``min_leverage`` apart (no leverage), the baseline shows no memory, the short
  run's norm slope below ``kept_slope`` (regime: the low-lr SGD of the claim keeps its norm at E,
  ``forgetting.regime``), a straddling interval, or underpowered (simulated rates > 5%).

The verdict states the radial memory of both horizons at the judged checkpoint (``forgetting.regime``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from implicitbias.claims import Evidence, Threshold, Verdict, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.claims.forgetting.figures import horizon_figure
from implicitbias.claims.forgetting.regime import (KEPT_SLOPE, radial_by_checkpoint, radial_context, radial_numbers,
                                                   regime_misses, regime_premise)
from implicitbias.numerics.metrics.memory_stats import Memory
from implicitbias.numerics.metrics.radial_memory import RadialMemory
from implicitbias.validation.analysis import CHECKPOINTS, GroupSummary, clock_at, memory_of, summarise


@dataclass(frozen=True)
class Measured:
    """C2's evidence: the summaries at horizon E (``short``) and kE (``long``), ``ratio`` = k, and per
    checkpoint (``CHECKPOINTS``) the two memories, the two governing clocks (median over runs) and the
    two radial memories (``radial``: E's by checkpoint, then kE's); the verdicts on seed halves.
    ``short`` None: no low-lr SGD group at a longer horizon."""

    short: GroupSummary | None = None
    long: GroupSummary | None = None
    ratio: float | None = None
    memory: dict[str, tuple[Memory, Memory]] | None = None
    clocks: dict[str, tuple[float, float]] | None = None
    radial: tuple[dict[str, RadialMemory | None], ...] = ()
    halves: list | None = None


class C2(fg.GroupClaim):
    id = "C2"
    statement = "training longer does not help: the low-lr SGD spread stays essentially unchanged"
    source = "Spec B s. 2 C2; Das et al. arXiv 2605.29152 (5,000 epochs)"
    section = "clocks"
    order = 2
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    judged = "end"
    oc_sims = mr.SIMS
    thresholds = {
        "kept": mr.FORGOTTEN,
        "min_ratio": Threshold(4.0, "a horizon ratio below 4x is too close to E to test 'much longer' (toy: 5x)"),
        "min_leverage": Threshold(4.0, "the governing clock at the two checkpoints compared >= 4x apart, as the "
                                       "horizons: with nearly equal clocks the two predictors are nearly the same "
                                       "and C2 agrees by construction (issue 27: 1.04-1.75x at the interpolating "
                                       "checkpoints of cosine 120 vs 600 epochs)"),
        "min_seeds": fg.MIN_SEEDS,
        "kept_slope": KEPT_SLOPE,
    }
    _plan = fg.Plan(((fg.HORIZONS, ("sgd_low_E", "sgd_low_5E")),))
    configs = {"default": _plan, "full": _plan}  # the real-image tier has one horizon

    def evidence(self, groups, label: str = "") -> Evidence:
        r = fg.roles(groups)
        if r.baseline is None or not r.longer:
            return Evidence("needs low-lr SGD at two horizons", Measured(), label)
        return self.pair_evidence(r.baseline, r.longer[-1], label)

    def pair_evidence(self, short, long, label: str = "") -> Evidence:
        """The rule's evidence from a group at horizon E and the same setting at kE (the baseline and
        its longest horizon for the claim; any pair for checks of the rule, benchmarks/c2_other_outcome.py)."""
        short_s, long_s = summarise(short), summarise(long)
        E, kE = short.setting["epochs"], long.setting["epochs"]
        data = Measured(short_s, long_s, kE / E, {cp: (memory_of(short_s, cp), memory_of(long_s, cp)) for cp in CHECKPOINTS},
                        {cp: (clock_at(short, short_s, cp), clock_at(long, long_s, cp)) for cp in CHECKPOINTS},
                        (radial_by_checkpoint(short), radial_by_checkpoint(long)))
        return Evidence(f"{short.label} vs {kE} epochs ({kE / E:g}x), same schedule; verdict seeds "
                        f"{short_s.seeds}", data, label)

    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if d.short is None:
            return not_run("no low-lr SGD group at a longer horizon among the runs")
        E, kE = d.clocks[self.judged]
        clock = f"{d.long.governing} at the {self.judged} checkpoint {E:.3g} at E, {kE:.3g} at {d.ratio:g}E"
        labels, radial = ("E", f"{d.ratio:g}E"), [r[self.judged] for r in d.radial]
        context = (f"E: {fg.fmt_failures(d.short)}; {d.ratio:g}E: {fg.fmt_failures(d.long)}; {clock}; "
                   f"{radial_context(labels, radial, self.judged)}")
        return fg.memory_verdict(lambda cp, sims: self.parts(d, cp, sims), self.judged, d.short.seeds,
                                 self.oc_sims, context, halves=d.halves,
                                 numbers={"radial": radial_numbers(labels, radial)})

    def parts(self, d: Measured, checkpoint: str, sims: int) -> tuple[list, str]:
        """The part at ``checkpoint`` and the rule's failed premise (module docstring); the part is kept
        with a failed premise (its rates are stated, marked not used) whenever both horizons have an
        interval (at least 2 complete seeds)."""
        short, long = d.memory[checkpoint]
        E, kE = d.clocks[checkpoint]
        leverage = kE / E if E > 0 else math.nan
        premise = ""
        if d.ratio < self.threshold("min_ratio"):
            premise = f"horizons differ by only {d.ratio:g}x (need {self.threshold('min_ratio'):g}x)"
        elif min(short.n, long.n) < self.threshold("min_seeds"):
            premise = f"only {min(short.n, long.n)} complete seeds (need {self.threshold('min_seeds'):g})"
        elif not leverage >= self.threshold("min_leverage"):
            premise = (f"no leverage: the governing clock {d.long.governing} at the {checkpoint} checkpoint is "
                       f"{E:.3g} at E and {kE:.3g} at {d.ratio:g}E (median over runs), {leverage:.3g}x apart "
                       f"(need {self.threshold('min_leverage'):g}x)")
        elif not short.snr.lo > 0:
            premise = "the baseline shows no memory beyond seed noise at E (its interval reaches 0)"
        else:  # the regime (forgetting.regime): the short run is low-lr SGD that keeps its norm
            premise = regime_premise(regime_misses(d.short, d.radial[0][checkpoint], (), (),
                                                   kept=self.threshold("kept_slope")))
        if min(short.n, long.n) < 2:  # no interval: nothing to simulate
            return [], premise
        return [mr.ratio_part(f"memory kept r = m({d.ratio:g}E) / m(E)", long, short, self.threshold("kept"), False,
                              sims)], premise

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        d = evidence.data
        if d.short is None:
            return ""
        path = horizon_figure(ctx, d.short, d.long, f"c2_{evidence.label or 'runs'}")
        return f"![C2 {evidence.label}]({ctx.link(path)})"


CLAIM = C2()
