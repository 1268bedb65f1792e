"""C7: forgetting is governed by cumulative clocks, not epoch counts: within each optimiser family
initialisation memory changes along the family's clock, not along the steps, the epochs or the
learning rate.

    T_SGD   = (1/b) sum_k eta_k^2   (plain SGD, heavy ball, Nesterov without decay)
    T_L2    = lambda sum_k eta_k    (SGD family with coupled L2 decay)
    T_adapt = sum_k eta_k           (Adam, AdamW, RMSProp, sign descent, Muon; each optimiser its
                                     own family here, ``member_of``)

Source: Spec B s. 2, C7 and s. 3; Das et al., arXiv 2605.29152.

Data: the crossed iso-clock grid (``validation/specs/clock_lines.toml``): per family three clock
lines 4x apart crossed with three horizons (15 / 60 / 240 epochs at b 64: steps 16x apart at each
clock), placed on the calibration seeds where memory changes steeply with the clock, plus, for the
adaptive family, a batch line under the square-root scaling rule (lr x sqrt(k) at batch x k keeps
sum eta^2 and moves T_adapt).  Memory is the radial memory of each seed: the slope of
log ||W_body,end|| against log sigma_w over the scale-invariant kernels (``validation.analysis.invariant_slopes``; the total
kernel norm for runs that do not say which kernels those are), 1 when the final norm is
proportional to the initial one, 0 when it forgets it (``theory.radial``).

The test (``numerics.metrics.clock_direction``): the direction of change of logit memory in the
(log clock, log steps) plane, an angle with its bootstrap interval over seeds, against the named
directions of its rivals (steps, epochs, lr, lr x steps, sum eta^2, lambda, lambda eta and the
other families' clocks).  A rival that contains the clock on the grid is reported and never used
to decide; the bound sits halfway (``bound_fraction``) to the nearest rival that does not:

- agrees: the angle's interval lies inside the bound (memory changes along the clock);
- disagrees: it lies outside (memory changes along a line nearer a rival than the clock);
- inconclusive: it straddles the bound; or the grid does not vary the clock and the steps
  independently, memory changes by less than ``min_change`` over the grid, fewer than
  ``min_seeds`` seeds are complete, or a simulated wrong-direction rate is above 5%
  (``inconclusive (underpowered)``, with the seeds needed or "not reachable by seeds");
- not run: no group with a positive governing clock.

Beside it the free fit of logit memory on the logs of the axes that vary, with intervals (does
T_SGD's eta^2 / b hold?), and the end-of-training spread with a monotone law in log clock, which
``implicitbias predict`` ships (``law_of``); neither decides.

Operating characteristics: tables of seeds x groups drawn in the clock's world, every rival's
and close to the bound on both sides (``clock_direction.simulate``), under three noise models
(normal at each group's seed sd, the data's own seed rows resampled, Student t with 3 df); the
interval's level is widened until it covers in every world and noise model; both wrong-direction
rates (the largest over worlds and noise models) must be <= ``memory_rules.MAX_WRONG``.
Thresholds and grids: benchmarks/RESULTS.md, "C7 as a test of direction: pre-registration".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.numerics.metrics import clock_direction as cd
from implicitbias.numerics.metrics.resampling import Interval
from implicitbias.validation.analysis import Group, invariant_slopes, summarise
from implicitbias.validation.groups import setting_key

__all__ = ["CLAIM", "CLOCK_LINES", "ClockFit", "ClockPoint", "CollapsePlan", "CollapseConfig", "Measured", "clock_points",
           "collapse_groups", "law_of", "member_of", "memory_table"]

CLOCK_LINES = "clock_lines"  # validation/specs/clock_lines.toml: the crossed iso-clock grid
FAMILY_CLOCK = {"sgd": "T_SGD", "sgd_l2": "T_L2", "adaptive": "T_adapt"}
PREDICTORS = ("clock", "epochs", "steps")
SEARCH_SIMS = 200  # simulated tables per world at each seed count tried by the seeds-needed search


@dataclass(frozen=True)
class ClockPoint:
    """One group at the end of training: its family (``validation.analysis.family``), governing clock
    and its value, epochs, optimiser steps (NaN: steps per epoch not recorded), learning rate,
    optimiser, end-of-training spread (points, CI over seeds), seeds, diverged and all runs."""

    label: str
    family: str
    governing: str | None
    clock: float
    epochs: int
    steps: float
    lr: float
    optimizer: str
    spread: Interval
    seeds: tuple[int, ...]
    n_diverged: int
    n_runs: int


@dataclass(frozen=True)
class ClockFit:
    """The held-out fit of the end-of-training spread on the log clock
    (``numerics.metrics.clock_collapse.collapse``'s ``clock`` predictor): the band (its quantile of
    the held-out absolute errors) and the mean held-out error with its CI."""

    band: float
    error: Interval


@dataclass(frozen=True)
class Measured:
    """C7's evidence on one family: its groups' points, the family and its clock, the seeds every group
    has and the seeds x groups table of radial memory (``memory_table``), each group's axes
    (``axes_of``), the clock's held-out fit (three or more groups) and the verdicts on seed halves.
    ``family`` None: no group with a positive clock."""

    points: tuple[ClockPoint, ...] = ()
    family: str | None = None
    clock: str = ""
    seeds: tuple[int, ...] = ()
    table: tuple[tuple[float, ...], ...] = ()
    axes: tuple[tuple[float, float, float, float], ...] = ()
    fit: ClockFit | None = None
    halves: list | None = None


@dataclass(frozen=True)
class CollapsePlan(fg.Plan):
    """A plan (blocks of experiments) whose groups form one data set of the direction test, judged together
    under ``label``."""

    label: str = ""


@dataclass(frozen=True)
class CollapseConfig:
    """C7's config: the data sets it is judged on, each its own plan (one Evidence per family of each)."""

    plans: tuple[CollapsePlan, ...]

    def resolved(self) -> list[tuple[fg.Experiment, tuple[str, ...]]]:
        """Every (experiment, blocks) of every plan."""
        return [r for plan in self.plans for r in plan.resolved()]


def clock_points(groups) -> list[ClockPoint]:
    """One point per group: family, governing clock at the end, epochs, steps, end-of-training spread (CI)."""
    points = []
    for g in groups:
        s = summarise(g)
        clock = s.clocks.get(s.governing, math.nan) if s.governing else math.nan
        spe = next((r.summary.steps_per_epoch for r in g.records), None)
        points.append(ClockPoint(s.label, s.family, s.governing, clock, s.horizon, s.horizon * spe if spe else math.nan,
                                 s.setting["lr"], s.setting["optimizer"], s.spread_final, s.seeds, s.n_diverged,
                                 s.n_runs))
    return points


def member_of(point: ClockPoint) -> tuple[str, str]:
    """(family, optimiser) of a group's point, the optimiser "" outside the adaptive family: Adam, AdamW
    and Muon share T_adapt but not their steps (per-coordinate, decayed, orthogonalised), so each is
    tested on its own lines, never pooled; the SGD families' optimisers share their radial law."""
    return point.family, point.optimizer if point.family == "adaptive" else ""


def memory_table(groups: Sequence[Group]) -> tuple[list[int], list[list[float]]]:
    """The seeds every group has and the seeds x groups table of their radial memory: per seed the slope
    of log ||W_inv|| at the end of training against log sigma_w over the scale-invariant kernels
    (``validation.analysis.invariant_slopes``; 1 keeps the initial norm, 0 forgets it)."""
    memories = [invariant_slopes(g, "end") for g in groups]
    seeds = sorted(set.intersection(*(set(m) for m in memories))) if memories else []
    return seeds, [[m[s] for m in memories] for s in seeds]


def axes_of(group: Group) -> tuple[float, float, float, float]:
    """A group's (lr, batch size, epochs, decay): the axes of ``clock_direction``."""
    c = group.setting
    return (c["lr"], c["batch_size"], c["epochs"], c["weight_decay"])


def collapse_groups(ctx, plan: CollapsePlan) -> list:
    """The groups of ``plan``'s experiments, trained or read from the store (duplicates across experiments once)."""
    groups, seen = [], set()
    for t, blocks in plan.resolved():
        for g in fg.measure_groups(ctx, t, blocks):
            key = setting_key(g.setting, ())
            if key not in seen:
                seen.add(key)
                groups.append(g)
    return groups


class C7(fg.GroupClaim):
    id = "C7"
    statement = ("initialisation memory changes along each family's cumulative clock (T_SGD, T_L2, T_adapt), "
                 "not along the steps, the epochs or the learning rate")
    source = "Spec B s. 2 C7, s. 3; Das et al. arXiv 2605.29152"
    section = "collapse"
    order = 7
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    oc_sims = 400
    thresholds = {
        "min_seeds": Threshold(3, "complete seeds per group: the bootstrap-t interval needs an sd over seeds"),
        "bound_fraction": Threshold(0.5, "the bound sits halfway from the clock to the nearest rival that does "
                                         "not contain it: an angle inside is nearer the clock than any rival"),
        "min_change": Threshold(0.1, "radial memory (a fraction) must change by at least this over the grid: a "
                                     "flat memory has no direction (the calibration grids change by 0.34-0.92)"),
    }
    _lines = CollapsePlan(((CLOCK_LINES, None),), "toy")
    configs = {"default": CollapseConfig((_lines,)), "gpu": CollapseConfig((_lines,)),
               "full": CollapseConfig((_lines,))}

    def measure(self, ctx, config: CollapseConfig) -> list[Evidence]:
        return [e for plan in config.plans for e in self.evidences_of(lambda: collapse_groups(ctx, plan), plan.label)]

    def evidences(self, groups, label: str = "") -> list[Evidence]:
        """One Evidence per optimiser family among ``groups`` (shallow ones, constant schedules); one
        empty Evidence if none."""
        shallow = [g for g in groups if g.setting["arch"] not in fg.DEEP
                   and g.setting.get("schedule", "constant") == "constant"]
        points = clock_points(shallow)
        kept = [(g, p) for g, p in zip(shallow, points) if p.clock > 0]
        members = sorted({member_of(p) for _, p in kept}, key=lambda m: (list(FAMILY_CLOCK).index(m[0]), m[1]))
        if not members:
            return [Evidence("direction of memory change against each family's clock, 0 groups",
                             Measured(), label)]
        return [self.family_evidence([g for g, p in kept if member_of(p) == m], [p for _, p in kept if member_of(p) == m],
                                     m[0], label, m[1]) for m in members]

    def family_evidence(self, groups: Sequence[Group], points: Sequence[ClockPoint], family: str,
                        label: str = "", optimizer: str = "") -> Evidence:
        """The direction test's data (module docstring) for one family's groups (of one ``optimizer``
        in the adaptive family, ``member_of``)."""
        from implicitbias.numerics.metrics.clock_collapse import collapse

        points = tuple(points)
        seeds, table = memory_table(groups)
        fit = None
        if len(points) >= 3:
            steps_known = not any(math.isnan(p.steps) for p in points)
            predictors = [k for k in PREDICTORS if k != "steps" or steps_known]
            clock = collapse({k: [getattr(p, k) for p in points] for k in predictors},
                             [p.spread.estimate for p in points], reference="epochs").predictors["clock"]
            fit = ClockFit(clock.band, clock.error)
        data = Measured(points, family, FAMILY_CLOCK[family], tuple(seeds), tuple(map(tuple, table)),
                        tuple(axes_of(g) for g in groups), fit)
        member = f"{family} ({optimizer})" if optimizer else family
        name = f"{label}: {member}" if label else member
        return Evidence(f"{member} family ({FAMILY_CLOCK[family]}), {len(points)} groups, seeds {fg.span(seeds) if seeds else '-'}: "
                        "direction of radial-memory change in (log clock, log steps)", data, name)

    def premise(self, d: Measured) -> tuple[str, cd.Design | None]:
        """The failed premise of a family's evidence ("" if none) and its design."""
        n = len(d.points)
        if n < 3:
            return f"{n} groups in the {d.family} family: a direction needs a grid", None
        design = cd.Design.of(d.clock, d.axes)
        if not design.crossed:
            return ("untestable grid: the clock and the steps do not vary independently (a crossed grid of clock "
                    "lines x horizons is needed)"), design
        if len(d.seeds) < self.threshold("min_seeds"):
            return f"{len(d.seeds)} complete seeds, fewer than {self.threshold('min_seeds'):g}", design
        means = [sum(col) / len(col) for col in zip(*d.table)]
        if max(means) - min(means) < self.threshold("min_change"):
            return (f"radial memory changes by {max(means) - min(means):.3f} over the grid, less than "
                    f"{self.threshold('min_change'):g}: no direction to test"), design
        return "", design

    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if not d.points:
            return not_run("no groups with a positive governing clock")
        failed, design = self.premise(d)
        if failed:
            return inconclusive(failed, f"{len(d.points)} groups, seeds {fg.span(d.seeds) if d.seeds else '-'}",
                                n=len(d.points))
        table, fraction = [list(row) for row in d.table], self.threshold("bound_fraction")
        ocs = self.simulated(design, table, fraction) if self.oc_sims else []
        level = ocs[0].level if ocs else cd.LEVEL
        test = cd.direction_test(design, table, level=level, fraction=fraction)
        bound, verdict_name = test.bound, test.outcome
        measured = self.describe(d, design, test, bound, ocs)
        numbers = {"n": len(d.seeds), "angle": test.angle, "lo": test.lo, "hi": test.hi, "bound": bound,
                   "nearest": test.nearest, "test": test, "oc": ocs}
        clock = d.clock
        if verdict_name == "agrees":
            verdict = agrees(f"memory changes along {clock}: the angle's interval lies within {bound:.3g} degrees of "
                             f"it ({'halfway' if fraction == cd.HALFWAY else f'{fraction:g} of the way'} to the "
                             "nearest rival)", measured, **numbers)
        elif verdict_name == "disagrees":
            verdict = disagrees(f"memory changes along a line more than {bound:.3g} degrees from {clock}, nearer a "
                                f"rival (nearest named direction: {test.nearest})", measured, **numbers)
        else:
            verdict = inconclusive(f"the angle's interval straddles the bound {bound:.3g} degrees", measured, **numbers)
        needed = None
        if ocs and max(oc.wrong for oc in ocs) > float(mr.MAX_WRONG):
            worst = max(ocs, key=lambda oc: oc.wrong)
            needed = mr.seeds_needed(lambda k: cd.simulate(design, table, SEARCH_SIMS, n=k, noise=worst.noise,
                                                           level=level, fraction=fraction), len(table), flat_after=4)
            verdict = inconclusive(f"underpowered (P(agrees | rival) {worst.agree_false:.3f}, P(disagrees | clock) "
                                   f"{worst.disagree_true:.3f} > {float(mr.MAX_WRONG):g}, {worst.noise} noise; rule gave "
                                   f"{verdict.verdict}; seeds needed: {needed or '> 64'})", measured, **numbers)
        stability = fg.stability(d.halves, verdict.verdict)
        nan = math.nan
        worst = max(ocs, key=lambda oc: oc.wrong) if ocs else None
        estimate = mr.Estimate(f"angle of memory change from {clock} (degrees; bound {bound:.3g})", test.angle,
                               test.lo, test.hi, min((oc.coverage for oc in ocs), default=nan), len(d.seeds), nan,
                               worst.agree_false if worst else nan, worst.disagree_true if worst else nan,
                               1 - worst.agree_true - worst.disagree_true if worst else nan,
                               needed, "end", mr.seed_text(d.seeds),
                               stability)
        return Verdict(verdict.verdict, fg.stated(verdict.reason, stability), verdict.measured, {**verdict.numbers, "estimate": estimate})

    def simulated(self, design: cd.Design, table, fraction: float) -> list[cd.OC]:
        """The rule's operating characteristics under each noise model, all at the narrowest level of
        ``clock_direction.LEVELS`` that covers under every one (else the widest)."""
        by_noise = [cd.simulate_levels(design, table, self.oc_sims, noise=noise, fraction=fraction)
                    for noise in cd.NOISES]
        j = next((j for j in range(len(cd.LEVELS)) if all(ocs[j].covers for ocs in by_noise)), len(cd.LEVELS) - 1)
        return [ocs[j] for ocs in by_noise]

    @staticmethod
    def describe(d: Measured, design: cd.Design, test: cd.DirectionTest, bound: float, ocs: Sequence[cd.OC]) -> str:
        """The measured text of a family's verdict: angle, rivals, free fit, simulation."""
        rivals = ", ".join(f"{r.name} {r.angle:+.1f}" + (" (contains the clock here: not used)" if r.contained else "")
                           for r in test.rivals)
        exps = ", ".join(f"{e.axis} {e.estimate:+.3f} [{e.lo:+.3f}, {e.hi:+.3f}]" for e in test.exponents)
        ratio = _profiles_text(design, test)
        text = (f"{test.groups} groups, seeds {fg.span(d.seeds)} (n = {test.n}); radial memory (norm slope of the "
                f"scale-invariant kernels) {min(map(min, zip(*d.table))):.2f}-{max(map(max, zip(*d.table))):.2f}; "
                f"angle of memory change in (log {d.clock}, log steps) {test.angle:+.1f} [{test.lo:+.1f}, "
                f"{test.hi:+.1f}] degrees ({100 * test.level:g}% bootstrap-t over seeds, {test.resamples} resamples); "
                f"bound +-{bound:.3g}; rivals' angles: {rivals}; nearest named direction {test.nearest}; free fit of "
                f"logit memory on log axes: {exps}{ratio}")
        for oc in ocs:
            text += (f"; simulated ({oc.noise} noise, {oc.sims} tables per world, n = {oc.n}): P(agrees | clock) "
                     f"{oc.agree_true:.3f}, P(disagrees | clock or within the bound) {oc.disagree_true:.3f}, "
                     f"P(agrees | rival) {oc.agree_false:.3f} (worst: {oc.worst}), coverage {oc.coverage:.3f} at "
                     f"{100 * oc.level:g}%")
        return text

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        import numpy as np

        from implicitbias.claims.forgetting.figures import direction_figure
        from implicitbias.figures import markdown_table

        d = evidence.data
        if not d.table:
            return ""
        name = f"c7_{(evidence.label or 'runs').replace(': ', '_').replace(' ', '_')}"
        n = verdict.numbers
        angle = (f"angle {n['angle']:+.1f} [{n['lo']:+.1f}, {n['hi']:+.1f}] deg from {d.clock}, bound "
                 f"+-{n['bound']:.3g}: {verdict.verdict}") if "angle" in n else verdict.verdict
        path = direction_figure(ctx, d, angle, name)
        table = np.asarray(d.table, dtype=float)
        sd = table.std(0, ddof=1) if len(table) > 1 else np.full(table.shape[1], np.nan)
        rows = [[p.label, f"{p.clock:.4g}", p.epochs, f"{p.steps:g}", f"{m:.3f} (sd {v:.3f})",
                 fg.fmt_ci(p.spread, seeds=False), p.n_diverged]
                for p, m, v in zip(d.points, table.mean(0), sd)]
        return "\n".join([f"![C7 {evidence.label}]({ctx.link(path)})", "",
                          markdown_table(["group", d.clock, "epochs", "steps", "radial memory (mean over seeds)",
                                          "spread end [CI]", "diverged"], rows)])


def _profiles_text(design: cd.Design, test: cd.DirectionTest) -> str:
    """The free fit's exponents over its first one, beside the same ratios of the clock and the nearest
    rivals (``Design.profile``): the quantitative content of the clock."""
    first = test.exponents[0]
    if len(test.exponents) < 2 or first.estimate == 0:
        return ""
    data = ":".join(f"{e.estimate / first.estimate:.2f}" for e in test.exponents)
    names = dict.fromkeys([test.clock, *test.nearest.split(" / ")])
    named = []
    for name in names:
        prof = design.profile(cd.NAMED[name])
        if prof[0]:
            named.append(f"{name} " + ":".join(f"{c / prof[0]:.2f}" for c in prof))
    axes = ":".join(e.axis for e in test.exponents)
    return f"; exponent ratios {axes}: data {data}, {', '.join(named)}"


def law_of(evidence: Evidence, verdict: Verdict) -> dict:
    """The calibrated law of one family's evidence (what ``implicitbias predict`` ships): the
    monotone fit of the spread on log clock over all its groups, the band (90% of the held-out
    absolute errors), the calibrated range and the groups that calibrated it."""
    from implicitbias.numerics.metrics.clock_collapse import BAND_QUANTILE, fit_monotone

    d = evidence.data
    points = d.points
    law = fit_monotone([math.log(p.clock) for p in points], [p.spread.estimate for p in points])
    clocks = [p.clock for p in points]
    return {
        "family": d.family, "clock": d.clock, "optimizers": sorted({p.optimizer for p in points}),
        "log_clock_knots": list(law.u), "spread_knots": list(law.y),
        "range": [min(clocks), max(clocks)], "band": d.fit.band,
        "band_quantile": BAND_QUANTILE, "held_out_error": {k: getattr(d.fit.error, k) for k in ("estimate", "lo", "hi", "n", "level")},
        "verdict": verdict.verdict, "measured": verdict.measured,
        "groups": [{"label": p.label, "clock": p.clock, "epochs": p.epochs, "steps": p.steps,
                    "spread": p.spread.estimate, "lo": p.spread.lo, "hi": p.spread.hi}
                   for p in points],
    }


CLAIM = C7()
