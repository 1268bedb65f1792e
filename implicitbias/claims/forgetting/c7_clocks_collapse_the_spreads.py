"""C7: forgetting is governed by cumulative clocks, not epoch counts: within each optimiser family
the spread across sigma_w collapses onto a monotone function of the family's governing clock,
which predicts held-out groups better than the epoch count, the steps, the learning rate or any
two of them do.

    T_SGD   = (1/b) sum_k eta_k^2   (plain SGD, heavy ball, Nesterov without decay)
    T_L2    = lambda sum_k eta_k    (SGD family with coupled L2 decay)
    T_adapt = sum_k eta_k           (Adam, AdamW, RMSProp, sign descent, Muon)

Source: Spec B s. 2, C7 and s. 3; Das et al., arXiv 2605.29152.

Data: the toy tier's groups (``validation/specs/default.toml``), its horizon pair (``horizon.toml``:
low-lr SGD cosine to 120 and to 600 epochs, the long horizon) and the clock-collapse grid
(``validation/specs/collapse.toml``: groups sharing the value of their clock but 4x apart in
epochs, steps, learning rate or batch size); in the ``full`` tier also its 480-epoch groups
(``collapse_long.toml``: each clock value at epochs 16x apart) and, judged apart, the
Fashion-MNIST tier's groups (``fashion_mnist_cpu.toml``).  End-of-training spread of seed-mean test accuracy
(the clock is accumulated up to the end of training; the validation-selected checkpoint sits at
an earlier, different clock).  One Evidence per family: the clocks have different units and are
never pooled.  The test (``numerics.metrics.clock_collapse``): R^2 of the spread on log(clock),
log(epochs), log(steps); a monotone law spread = f(log predictor) fitted on half of the family's
groups predicts the other half, over every half split (at most 1,000, else 1,000 random ones);
per group the mean held-out absolute error.  The clock is compared with the strongest non-clock
predictor on the same splits (``comparators``, issue 20): log epochs, log steps, log lr and
log(lr x epochs), each with the better of a monotone and a linear fit, and the two-variable linear
least-squares fits on (log lr, log epochs) and (log lr, log steps); the clock gets the better of its
own monotone and linear fits.  d = error(clock) - error(strongest) averaged over the groups with a
95% bootstrap CI over groups (choosing the strongest on the same splits favours the comparator).

- agrees: the CI of d lies below 0 (the clock predicts held-out spreads better than every
  non-clock predictor);
- disagrees: the CI of d lies above -``margin`` (at 95%, the clock is not even ``margin`` points
  better than the strongest comparator);
- inconclusive: the CI straddles both, or fewer than ``min_groups`` groups, or their epochs span
  less than ``epoch_ratio``, or a single comparator orders the groups exactly as the clock does
  (the grid cannot tell them apart);
- not run: no group with a positive clock.

Operating characteristics (issues 19-20; the rule and its thresholds are those of issues 11-12,
the simulation only adds the underpowered gate, which can turn a verdict into ``inconclusive``
and never into ``agrees`` or ``disagrees``): two worlds at the grid's own noise, ``SIMS`` tiers
each.  "True": every group's spread is the clock's law (the better of its two fits, fitted on all
groups) plus normal noise with the group's own spread noise (its bootstrap CI's width / 3.92);
"false": the same with the strongest non-clock law.  The whole rule (every law refitted on every
split, the strongest chosen per tier) on ``SIM_SPLITS`` of its half splits per tier.
P(agrees | false) and P(disagrees | true) must both be <= ``memory_rules.MAX_WRONG``, else the
verdict is ``inconclusive (underpowered)`` with the seeds per sigma_w the same simulation needs
(each group's noise scaled by sqrt(its seeds / n); ``SEARCH_SIMS`` tiers per world per n).  The
interval of d: percentile bootstrap over groups at the narrowest level of 95%, 97.5%, 99%, 99.5%,
99.8% whose coverage of E[d] in both worlds reaches 95% (less two Monte Carlo standard errors): the
bootstrap over groups ignores that groups share splits and noise, and its measured coverage at 95%
is far below nominal on the toy grid, so it is widened and says so.  Stability: the rule's verdict
(intervals only) on the first and the second half of each group's seeds, when every group has at
least 2 x ``MIN_SEEDS``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.numerics.metrics import memory_stats as ms
from implicitbias.validation.analysis import summarise
from implicitbias.validation.groups import setting_key

__all__ = ["CLAIM", "COLLAPSE", "COLLAPSE_LONG", "CollapsePlan", "CollapseConfig", "clock_points", "collapse_groups", "law_of"]

COLLAPSE = "collapse"  # validation/specs/collapse.toml: the clock-collapse grid of the toy tier
COLLAPSE_LONG = "collapse_long"  # validation/specs/collapse_long.toml: its 480-epoch groups (tier full)
FAMILY_CLOCK = {"sgd": "T_SGD", "sgd_l2": "T_L2", "adaptive": "T_adapt"}
PREDICTORS = ("clock", "epochs", "steps")
# the non-clock predictors C7's clock must beat (module docstring): each in log, monotone and linear fits
SINGLE = ("epochs", "steps", "lr", "lr_epochs")
PAIRS = (("lr", "epochs"), ("lr", "steps"))  # two-variable least squares in the logs
SIM_SPLITS = 100  # half splits per simulated tier (of the rule's <= 1,000): the cost of 2 x 2,000 tiers
SEARCH_SIMS = 400  # simulated tiers per world at each seed count tried by the seeds-needed search


@dataclass(frozen=True)
class CollapsePlan(fg.Plan):
    """A plan (blocks of tiers) whose groups form one data set of the collapse test, judged
    together under ``label``."""

    label: str = ""


@dataclass(frozen=True)
class CollapseConfig:
    """C7's config: the data sets it is judged on, each its own plan (one Evidence per family of each)."""

    plans: tuple[CollapsePlan, ...]

    def resolved(self) -> list[tuple[fg.Tier, tuple[str, ...]]]:
        """Every (tier, blocks) of every plan."""
        return [r for plan in self.plans for r in plan.resolved()]


def clock_points(groups) -> list[dict]:
    """One point per group: family, governing clock at the end, epochs, steps, end-of-training spread (CI)."""
    points = []
    for g in groups:
        s = summarise(g)
        clock = s["clocks"].get(s["governing"], math.nan) if s["governing"] else math.nan
        spe = next((r["summary"].get("steps_per_epoch") for _, r in g.runs), None)
        points.append({"label": s["label"], "family": s["family"], "governing": s["governing"], "clock": clock,
                       "epochs": s["horizon"], "steps": s["horizon"] * spe if spe else math.nan,
                       "lr": s["setting"]["lr"], "optimizer": s["setting"]["optimizer"], "spread": s["spread_final"],
                       "seeds": s["seeds"],
                       "n_diverged": s["n_diverged"], "n_runs": s["n_runs"]})
    return points


def _values(points: Sequence[Mapping], name: str) -> list[float]:
    """A predictor's value per point; ``lr_epochs`` is lr x epochs."""
    return [p["lr"] * p["epochs"] if name == "lr_epochs" else p[name] for p in points]


@dataclass(frozen=True)
class Predictor:
    """One fitted law of the spread: ``label``, its columns (one or two predictors' values per group)
    and whether it is the monotone law of one log predictor (else linear least squares in the logs)."""

    label: str
    columns: tuple[tuple[float, ...], ...]
    monotone: bool

    def held_out(self, y, masks):
        """Per group (and per row of a (S, n) ``y``) the mean held-out absolute error over ``masks``."""
        from implicitbias.numerics.metrics.clock_collapse import held_out_errors, linear_errors

        return held_out_errors(self.columns[0], y, masks)[0] if self.monotone else linear_errors(self.columns, y, masks)

    def fitted(self, y: Sequence[float]):
        """The law fitted on every group, evaluated at every group (a simulated world's means)."""
        import numpy as np

        from implicitbias.numerics.metrics.clock_collapse import fit_monotone, linear_fit

        if self.monotone:
            u = np.log(self.columns[0])
            return fit_monotone(u, y)(u)
        return linear_fit(self.columns, y)


def predictors(points: Sequence[Mapping]) -> tuple[list[Predictor], list[Predictor]]:
    """The clock's two laws (monotone, linear) and every non-clock law: each ``SINGLE`` predictor with
    positive values, monotone and linear, and the ``PAIRS`` (linear)."""
    def both(name):
        x = (tuple(float(v) for v in _values(points, name)),)
        label = f"log {name.replace('lr_epochs', 'lr x epochs')}"
        return [Predictor(f"{label} (monotone)", x, True), Predictor(f"{label} (linear)", x, False)]

    others = [p for name in SINGLE if all(v > 0 for v in _values(points, name)) for p in both(name)]
    others += [Predictor(f"log {a} + log {b} (linear)", (tuple(_values(points, a)), tuple(_values(points, b))), False)
               for a, b in PAIRS]
    return both("clock"), others


def _best(errors: Mapping[str, object]):
    """Per row of the (S, n) error arrays, the name and the errors of the law with the smallest mean."""
    import numpy as np

    names = list(errors)
    stacked = np.stack([errors[k] for k in names])  # (laws, S, n)
    pick = stacked.mean(-1).argmin(0)
    return [names[i] for i in pick], stacked[pick, np.arange(stacked.shape[1])]


def differences(clock: Sequence[Predictor], others: Sequence[Predictor], y, masks):
    """Per row of ``y`` (S, n): d_g = error(clock's better law) - error(strongest non-clock law), with the
    names of the two laws and every law's errors."""
    errors = {p.label: p.held_out(y, masks) for p in (*clock, *others)}
    clock_name, clock_err = _best({p.label: errors[p.label] for p in clock})
    strongest, strongest_err = _best({p.label: errors[p.label] for p in others})
    return clock_err - strongest_err, clock_name, strongest, errors


def interval_of(d: Sequence[float], level: float) -> dict:
    """The mean of the per-group differences ``d`` with its percentile bootstrap CI over groups at ``level``."""
    import numpy as np

    from implicitbias.numerics.metrics.resampling import mean_ci_rows

    (lo, hi), = mean_ci_rows(np.array([d]), (level,))
    return {"estimate": float(np.mean(d)), "lo": float(lo[0]), "hi": float(hi[0]), "n": len(d), "level": level}


def comparators(points: Sequence[Mapping], level: float = 0.95) -> dict:
    """Held-out errors per group of the clock (best of its monotone and linear fits) and of every
    non-clock predictor (``SINGLE``: monotone or linear, whichever is better; ``PAIRS``: linear), on the
    half splits of ``clock_collapse.collapse``; the strongest comparator and the difference clock -
    strongest per group with its percentile bootstrap CI over groups at ``level``."""
    import numpy as np

    from implicitbias.numerics.metrics.clock_collapse import half_splits
    from implicitbias.numerics.metrics.resampling import mean_ci

    y = np.array([[p["spread"]["estimate"] for p in points]])
    masks, _ = half_splits(len(points))
    clock, others = predictors(points)
    d, (clock_name,), (strongest,), errors = differences(clock, others, y, masks)
    shown: dict[str, str] = {}  # each single predictor with its better fit, every pair
    for p in others:
        base = p.label.rsplit(" (", 1)[0]
        if base not in shown or errors[p.label].mean() < errors[shown[base]].mean():
            shown[base] = p.label
    difference = interval_of(d[0].tolist(), level)
    tied = [name for name in SINGLE if _same_order(_values(points, name), [p["clock"] for p in points])]
    return {"clock": clock_name, "clock_error": mean_ci(errors[clock_name][0].tolist()),
            "errors": {k: mean_ci(errors[k][0].tolist()) for k in shown.values()}, "strongest": strongest,
            "difference": difference, "per_group": d[0].tolist(), "same_order": tied}


def _same_order(a: Sequence[float], b: Sequence[float]) -> bool:
    """True when the two predictors order the groups identically (ties included): the clock cannot be
    told from the other on these groups."""
    from scipy.stats import rankdata

    return bool((rankdata(a) == rankdata(b)).all()) and len(set(a)) > 1


@dataclass(frozen=True)
class Simulation:
    """C7's simulated operating characteristics (``oc``) at ``level``, the coverage of the interval of
    d measured in the two worlds (the smaller; ``covered``: it reaches the nominal 95% within two Monte
    Carlo standard errors at some level tried) and the two worlds' laws."""

    oc: mr.OC
    coverage: float
    level: float
    covered: bool
    true_law: str
    false_law: str


def spread_noise(point: Mapping) -> float:
    """The seed noise of a group's spread: its 95% bootstrap CI's width over 2 x 1.96 (normal approximation)."""
    return (point["spread"]["hi"] - point["spread"]["lo"]) / (2 * 1.959964)


def world_means(points: Sequence[Mapping], y, clock: Sequence[Predictor], others: Sequence[Predictor],
                true_law: str, false_law: str):
    """The group means of the two simulated worlds: the same values (the fitted values of whichever of
    the clock's law and the strongest non-clock law varies more), ordered by the clock (falling as
    the data's Spearman rho says, falling when it is 0; equal clocks get equal values) in the "true"
    world and by the strongest law's fitted values in the "false" one."""
    import numpy as np
    from scipy.stats import rankdata, spearmanr

    laws = {p.label: p for p in (*clock, *others)}
    fitted = [laws[true_law].fitted(y), laws[false_law].fitted(y)]
    values = np.sort(max(fitted, key=np.var))
    clocks = np.array([p["clock"] for p in points])
    rho = spearmanr(clocks, y).statistic if np.ptp(y) > 0 else 0.0
    positions = np.arange(len(y))

    def arranged(key):  # the value at each group's (average, for ties) rank of key
        return np.interp(rankdata(key) - 1, positions, values)

    return arranged(clocks if rho > 0 else -clocks), arranged(fitted[1])


def simulate(points: Sequence[Mapping], margin: float, sims: int = mr.SIMS, seed: int = 0, n: int | None = None,
             level: float | None = None, laws: tuple[str, str] | None = None) -> Simulation:
    """Operating characteristics of C7's rule on this grid (module docstring, "Operating characteristics").

    World "true": each group's spread is the clock's law fitted on all groups plus normal noise of the
    group's own spread noise (``spread_noise``); world "false": the same with the strongest non-clock law.
    ``sims`` tiers per world, the rule on ``SIM_SPLITS`` of its half splits (drawn at random); ``n`` seeds
    per sigma_w scales each group's noise by sqrt(its seeds / n).  Without ``level``, the narrowest level of
    ``ms.TAILS`` whose coverage of E[d] reaches 95% minus two Monte Carlo standard errors in both worlds.
    ``laws``: the names of the clock's better law and of the strongest law on these data (``comparators``'
    ``clock`` and ``strongest``), else found here."""
    import numpy as np

    from implicitbias.numerics.metrics.clock_collapse import half_splits
    from implicitbias.numerics.metrics.resampling import mean_ci_rows

    y = np.array([p["spread"]["estimate"] for p in points])
    own = np.array([len(p["seeds"]) for p in points], dtype=float)
    noise = np.array([spread_noise(p) for p in points]) * (np.sqrt(own / n) if n else 1.0)
    masks, _ = half_splits(len(points))
    clock, others = predictors(points)
    if laws is None:
        _, (true_law,), (false_law,), _ = differences(clock, others, y[None], masks)
    else:
        true_law, false_law = laws
    rng = np.random.default_rng(seed)
    if len(masks) > SIM_SPLITS:
        masks = masks[np.sort(rng.choice(len(masks), SIM_SPLITS, replace=False))]
    levels = (level,) if level else tuple(1 - 2 * t for t in ms.TAILS)
    worlds = []
    for mean in world_means(points, y, clock, others, true_law, false_law):
        d = differences(clock, others, mean + noise * rng.standard_normal((sims, len(y))), masks)[0]
        cis = mean_ci_rows(d, levels, seed)
        truth = d.mean()
        worlds.append((cis, [float(np.mean((lo <= truth) & (truth <= hi))) for lo, hi in cis]))
    tol = 2 * math.sqrt(0.95 * 0.05 / sims)
    cover = [min(a, b) for a, b in zip(worlds[0][1], worlds[1][1])]
    pick = 0 if level else next((i for i, c in enumerate(cover) if c >= 0.95 - tol), len(levels) - 1)
    rates = []
    for cis, _ in worlds:
        lo, hi = cis[pick]
        agree = hi < 0  # the rule's order: agrees first, then disagrees
        rates += [float(np.mean(agree)), float(np.mean((lo > -margin) & ~agree))]
    oc = mr.OC(rates[2], rates[1], 1 - rates[0] - rates[1], 1 - rates[2] - rates[3], sims, n or int(own.min()))
    return Simulation(oc, cover[pick], levels[pick], cover[pick] >= 0.95 - tol, true_law, false_law)


def collapse_groups(ctx, plan: CollapsePlan) -> list:
    """The groups of ``plan``'s tiers, trained or read from the store (duplicates across tiers once)."""
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
    statement = ("spreads collapse onto each family's cumulative clock (T_SGD, T_L2, T_adapt): the clock predicts "
                 "held-out spreads better than the epoch count")
    source = "Spec B s. 2 C7, s. 3; Das et al. arXiv 2605.29152"
    section = "collapse"
    order = 7
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    oc_sims = mr.SIMS
    thresholds = {
        "min_seeds": Threshold(2, "seeds per group in each half of the stability check: a seed-mean spread needs two "
                                  "seeds to average any noise (C7 fits no ANOVA)"),
        "min_groups": Threshold(6, "groups per family: a half split then fits the monotone law on 3 groups and predicts "
                                   "3, the fewest that can show a trend and test it"),
        "epoch_ratio": Threshold(4, "largest over smallest epoch count in the family: the collapse grids vary epochs "
                                    "4x at equal clock; less and epochs cannot be told from the clock"),
        "margin": Threshold(1.0, "points of held-out error: a seed-mean spread over 4 seeds carries 1-2 points of "
                                 "test-set noise, so a clock less than a point better than epochs is no better"),
    }
    _toy = CollapsePlan(((fg.TOY, None), (fg.HORIZONS, None), (COLLAPSE, None)), "toy")
    configs = {"default": CollapseConfig((_toy,)), "gpu": CollapseConfig((_toy,)),
               "full": CollapseConfig((CollapsePlan(((fg.TOY, None), (fg.HORIZONS, None), (COLLAPSE, None), (COLLAPSE_LONG, None)), "toy"),
                                       CollapsePlan(((fg.FASHION_MNIST, None),), "fashion_mnist")))}

    def measure(self, ctx, config: CollapseConfig) -> list[Evidence]:
        return [e for plan in config.plans for e in self.evidences_of(lambda: collapse_groups(ctx, plan), plan.label)]

    def evidences(self, groups, label: str = "") -> list[Evidence]:
        """One Evidence per optimiser family among ``groups`` (shallow ones); one empty Evidence if none."""
        shallow = [g for g in groups if g.setting["arch"] not in fg.DEEP]
        points = [p for p in clock_points(shallow) if p["clock"] > 0 and not math.isnan(p["spread"]["estimate"])]
        families = [f for f in FAMILY_CLOCK if any(p["family"] == f for p in points)]
        if not families:
            return [Evidence("held-out spread prediction from each family's clock vs epochs, 0 groups",
                             {"points": [], "family": None}, label)]
        return [self.family_evidence([p for p in points if p["family"] == f], f, label) for f in families]

    def family_evidence(self, points: Sequence[Mapping], family: str, label: str = "") -> Evidence:
        """The collapse test (module docstring) on one family's points."""
        from implicitbias.numerics.metrics.clock_collapse import collapse
        from implicitbias.numerics.metrics.memory_stats import stratified_rank_test

        points = list(points)
        data = {"points": points, "family": family, "clock": FAMILY_CLOCK[family]}
        steps_known = not any(math.isnan(p["steps"]) for p in points)
        predictors = [k for k in PREDICTORS if k != "steps" or steps_known]
        y = [p["spread"]["estimate"] for p in points]
        if len(points) >= 3:
            # log clocks rounded so that equal clocks summed in another order rank as ties
            data["ordering"] = stratified_rank_test([([round(math.log(p["clock"]), 9) for p in points], y)])
            data["test"] = collapse({k: [p[k] for p in points] for k in predictors}, y, reference="epochs")
            if all("lr" in p for p in points):
                data["comparators"] = comparators(points)
        name = f"{label}: {family}" if label else family
        return Evidence(f"{family} family ({FAMILY_CLOCK[family]}), {len(points)} groups: held-out end-of-training "
                        f"spread from a monotone law in log {FAMILY_CLOCK[family]} vs in log epochs", data, name)

    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if not d["points"]:
            return not_run("no groups with a positive governing clock")
        points = d["points"]
        n = len(points)
        epochs = [p["epochs"] for p in points]
        ratio = max(epochs) / min(epochs)
        if n < self.threshold("min_groups") or "comparators" not in d:
            return inconclusive(f"{n} groups in the {d['family']} family, fewer than {self.threshold('min_groups'):g}",
                                f"{n} groups", n=n)
        t, c = d["test"], d["comparators"]
        margin = self.threshold("margin")
        grid = ""
        if ratio < self.threshold("epoch_ratio"):
            grid = (f"epochs span {ratio:.3g}x, less than {self.threshold('epoch_ratio'):g}x: the clock cannot be told "
                    "from the epoch count")
        elif c["same_order"]:
            grid = (f"the clock orders the groups exactly as {', '.join(c['same_order'])} does: the grid cannot tell "
                    "them apart")
        laws = (c["clock"], c["strongest"])
        sim = simulate(points, margin, self.oc_sims, laws=laws) if self.oc_sims and not grid else None
        if sim is not None and sim.level != c["difference"]["level"]:
            c = {**c, "difference": interval_of(c["per_group"], sim.level)}
        diff, strongest = c["difference"], c["strongest"]
        errors = ", ".join(f"{k} {fg.fmt_ci(v, ' pts', seeds=False)}" for k, v in c["errors"].items())
        o = d["ordering"]
        seeds = sorted({s for p in points for s in p["seeds"]})
        measured = (f"{n} groups, epochs {min(epochs):g}-{max(epochs):g}, seeds {fg.span(seeds)}; held-out error: "
                    f"clock, {c['clock']} {fg.fmt_ci(c['clock_error'], ' pts', seeds=False)}; {errors}; strongest "
                    f"non-clock predictor: {strongest}; clock - strongest {fg.fmt_ci(diff, ' pts', seeds=False)} "
                    f"({100 * diff['level']:g}% percentile bootstrap over groups; the strongest chosen on the same "
                    f"splits, which favours it); {t['splits']} {'(all)' if t['exact'] else 'random'} half splits; "
                    f"Spearman rho(log clock, spread) {o['rho'][0]:.2f}, {'exact' if o['exact'] else 'Monte Carlo'} "
                    f"permutation p {o['p_less']:.3g} (falling)")
        if sim is not None:
            oc = sim.oc
            measured += (f"; simulated ({oc.sims} tiers per world, n = {oc.n}, {SIM_SPLITS} half splits each; worlds: "
                         f"{sim.true_law} / {sim.false_law} plus each group's spread noise): P(agrees | false) "
                         f"{oc.agree_false:.3f}, P(disagrees | true) {oc.disagree_true:.3f}, P(inconclusive | true) "
                         f"{oc.inconclusive_true:.3f}; coverage of the interval {sim.coverage:.3f}"
                         + ("" if sim.covered else " (below 95% at every level tried)"))
        numbers = {"n": n, "difference": diff["estimate"], "lo": diff["lo"], "hi": diff["hi"], "strongest": strongest,
                   "error_clock": c["clock_error"]["estimate"], "error_strongest": c["errors"][strongest]["estimate"],
                   "error_epochs": t["predictors"]["epochs"]["error"]["estimate"], "epoch_ratio": ratio,
                   "simulation": sim}
        if grid:
            verdict = inconclusive(grid, measured, **numbers)
        elif diff["hi"] < 0:
            verdict = agrees(f"the clock predicts held-out spreads better than every non-clock predictor (the "
                             f"strongest, {strongest}: CI of the difference below 0)", measured, **numbers)
        elif diff["lo"] > -margin:
            verdict = disagrees(f"the clock does not predict held-out spreads even {margin:g} point better than "
                                f"{strongest} (CI of the difference above -{margin:g})", measured, **numbers)
        else:
            verdict = inconclusive(f"the CI of the difference from {strongest} straddles 0 and -{margin:g} points",
                                   measured, **numbers)
        needed = None
        if sim is not None and sim.oc.wrong > float(mr.MAX_WRONG):
            needed = mr.seeds_needed(lambda k: simulate(points, margin, SEARCH_SIMS, n=k, level=sim.level, laws=laws).oc,
                                     sim.oc.n)
            verdict = inconclusive(f"underpowered (P(agrees | false) {sim.oc.agree_false:.3f}, P(disagrees | true) "
                                   f"{sim.oc.disagree_true:.3f} > {float(mr.MAX_WRONG):g}; rule gave {verdict.verdict}; "
                                   f"seeds needed: {needed or '> 64'})", measured, **numbers)
        stability = fg.stability(d.get("halves"), verdict.verdict)
        oc = sim.oc if sim else None
        nan = math.nan
        estimate = mr.Estimate(f"held-out error, clock - strongest non-clock predictor ({strongest}; pts; {n} groups, "
                               "CI over groups)", diff["estimate"], diff["lo"], diff["hi"],
                               sim.coverage if sim else nan, min(len(p["seeds"]) for p in points), o["p_less"],
                               oc.agree_false if oc else nan, oc.disagree_true if oc else nan,
                               oc.inconclusive_true if oc else nan, needed, "end", mr.seed_text(seeds), stability)
        reason = verdict.reason + (f"; stability: {stability}" if stability else "")
        return Verdict(verdict.verdict, reason, verdict.measured, {**verdict.numbers, "estimate": estimate})

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        from implicitbias.claims.forgetting.figures import collapse_figure
        from implicitbias.figures import markdown_table

        d = evidence.data
        if "test" not in d:
            return ""
        name = f"c7_{(evidence.label or 'runs').replace(': ', '_').replace(' ', '_')}"
        path = collapse_figure(ctx, d, name)
        t = d["test"]
        rows = [[p["label"], f"{p['clock']:.4g}", p["epochs"], f"{p['steps']:g}",
                 fg.fmt_ci(p["spread"], seeds=False), f"{t['predictors']['clock']['predicted'][i]:.2f}",
                 f"{t['predictors']['epochs']['predicted'][i]:.2f}", p["n_diverged"]]
                for i, p in enumerate(d["points"])]
        return "\n".join([f"![C7 {evidence.label}]({ctx.link(path)})", "",
                          markdown_table(["group", d["clock"], "epochs", "steps", "spread end [CI]",
                                          "held-out from clock", "held-out from epochs", "diverged"], rows)])


def law_of(evidence: Evidence, verdict: Verdict) -> dict:
    """The calibrated law of one family's evidence (what ``implicitbias predict`` ships): the
    monotone fit of the spread on log clock over all its groups, the band (90% of the held-out
    absolute errors), the calibrated range and the groups that calibrated it."""
    from implicitbias.numerics.metrics.clock_collapse import BAND_QUANTILE, fit_monotone

    d = evidence.data
    points = d["points"]
    law = fit_monotone([math.log(p["clock"]) for p in points], [p["spread"]["estimate"] for p in points])
    clocks = [p["clock"] for p in points]
    return {
        "family": d["family"], "clock": d["clock"], "optimizers": sorted({p["optimizer"] for p in points}),
        "log_clock_knots": list(law.u), "spread_knots": list(law.y),
        "range": [min(clocks), max(clocks)], "band": d["test"]["predictors"]["clock"]["band"],
        "band_quantile": BAND_QUANTILE, "held_out_error": d["test"]["predictors"]["clock"]["error"],
        "verdict": verdict.verdict, "measured": verdict.measured,
        "groups": [{"label": p["label"], "clock": p["clock"], "epochs": p["epochs"], "steps": p["steps"],
                    "spread": p["spread"]["estimate"], "lo": p["spread"]["lo"], "hi": p["spread"]["hi"]}
                   for p in points],
    }


CLAIM = C7()
