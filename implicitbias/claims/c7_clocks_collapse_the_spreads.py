"""C7: forgetting is governed by cumulative clocks, not epoch counts: within each optimiser family
the spread across sigma_w collapses onto a monotone function of the family's governing clock,
which predicts held-out groups better than the epoch count, the steps, the learning rate or any
two of them do.

    T_SGD   = (1/b) sum_k eta_k^2   (plain SGD, heavy ball, Nesterov without decay)
    T_L2    = lambda sum_k eta_k    (SGD family with coupled L2 decay)
    T_adapt = sum_k eta_k           (Adam, AdamW, RMSProp, sign descent, Muon)

Source: Spec B s. 2, C7 and s. 3; Das et al., arXiv 2605.29152.

Data: the toy tier's groups (``validation/specs/default.toml``) and the clock-collapse grid
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
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive, not_run
from implicitbias.claims import forgetting as fg
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
                       "n_diverged": s["n_diverged"], "n_runs": s["n_runs"]})
    return points


def _values(points: Sequence[Mapping], name: str) -> list[float]:
    """A predictor's value per point; ``lr_epochs`` is lr x epochs."""
    return [p["lr"] * p["epochs"] if name == "lr_epochs" else p[name] for p in points]


def linear_errors(columns: Sequence[Sequence[float]], y: Sequence[float], masks) -> list[float]:
    """Per group, the mean over the half splits holding it out of |y_g - prediction| of the least-squares
    fit y = a + sum_i b_i log x_i on the split's fitting half (numpy.linalg.lstsq: minimum-norm when
    columns are collinear)."""
    import numpy as np

    X = np.column_stack([np.ones(len(y))] + [np.log(np.asarray(c, dtype=float)) for c in columns])
    y = np.asarray(y, dtype=float)
    error, count = np.zeros(len(y)), np.zeros(len(y))
    for mask in masks:
        coef = np.linalg.lstsq(X[mask], y[mask], rcond=None)[0]
        error[~mask] += np.abs(X[~mask] @ coef - y[~mask])
        count[~mask] += 1
    return (error / np.maximum(count, 1)).tolist()


def comparators(points: Sequence[Mapping], test: Mapping) -> dict:
    """Held-out errors per group of the clock (best of its monotone and linear fits) and of every
    non-clock predictor (``SINGLE``: monotone or linear, whichever is better; ``PAIRS``: linear), on the
    same half splits as ``test`` (``clock_collapse.collapse``); the strongest comparator and the
    difference clock - strongest per group with its bootstrap CI over groups."""
    import numpy as np

    from implicitbias.numerics.metrics.clock_collapse import half_splits, held_out_errors
    from implicitbias.numerics.metrics.resampling import mean_ci

    y = [p["spread"]["estimate"] for p in points]
    masks, _ = half_splits(len(points))

    def best_single(name):
        x = _values(points, name)
        fits = {"monotone": held_out_errors(x, y, masks)[0].tolist(), "linear": linear_errors([x], y, masks)}
        fit = min(fits, key=lambda f: np.mean(fits[f]))
        return f"log {name.replace('lr_epochs', 'lr x epochs')} ({fit})", fits[fit]

    clock_name, clock = best_single("clock")
    errors = dict(best_single(name) for name in SINGLE if all(v > 0 for v in _values(points, name)))
    for a, b in PAIRS:
        errors[f"log {a} + log {b} (linear)"] = linear_errors([_values(points, a), _values(points, b)], y, masks)
    strongest = min(errors, key=lambda k: np.mean(errors[k]))
    d = np.asarray(clock) - np.asarray(errors[strongest])
    tied = [name for name in SINGLE if _same_order(_values(points, name), [p["clock"] for p in points])]
    return {"clock": clock_name, "clock_error": mean_ci(clock), "errors": {k: mean_ci(v) for k, v in errors.items()},
            "strongest": strongest, "difference": mean_ci(d.tolist()), "same_order": tied}


def _same_order(a: Sequence[float], b: Sequence[float]) -> bool:
    """True when the two predictors order the groups identically (ties included): the clock cannot be
    told from the other on these groups."""
    from scipy.stats import rankdata

    return bool((rankdata(a) == rankdata(b)).all()) and len(set(a)) > 1


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
    thresholds = {
        "min_groups": Threshold(6, "groups per family: a half split then fits the monotone law on 3 groups and predicts "
                                   "3, the fewest that can show a trend and test it"),
        "epoch_ratio": Threshold(4, "largest over smallest epoch count in the family: the collapse grids vary epochs "
                                    "4x at equal clock; less and epochs cannot be told from the clock"),
        "margin": Threshold(1.0, "points of held-out error: a seed-mean spread over 4 seeds carries 1-2 points of "
                                 "test-set noise, so a clock less than a point better than epochs is no better"),
    }
    _toy = CollapsePlan(((fg.TOY, None), (COLLAPSE, None)), "toy")
    configs = {"default": CollapseConfig((_toy,)), "gpu": CollapseConfig((_toy,)),
               "full": CollapseConfig((CollapsePlan(((fg.TOY, None), (COLLAPSE, None), (COLLAPSE_LONG, None)), "toy"),
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
                data["comparators"] = comparators(points, data["test"])
        name = f"{label}: {family}" if label else family
        return Evidence(f"{family} family ({FAMILY_CLOCK[family]}), {len(points)} groups: held-out end-of-training "
                        f"spread from a monotone law in log {FAMILY_CLOCK[family]} vs in log epochs", data, name)

    def judge(self, evidence: Evidence) -> Verdict:
        d = evidence.data
        if not d["points"]:
            return not_run("no groups with a positive governing clock")
        n = len(d["points"])
        epochs = [p["epochs"] for p in d["points"]]
        ratio = max(epochs) / min(epochs)
        if n < self.threshold("min_groups") or "comparators" not in d:
            return inconclusive(f"{n} groups in the {d['family']} family, fewer than {self.threshold('min_groups'):g}",
                                f"{n} groups", n=n)
        t, c = d["test"], d["comparators"]
        diff, strongest = c["difference"], c["strongest"]
        errors = ", ".join(f"{k} {fg.fmt_ci(v, ' pts', seeds=False)}" for k, v in c["errors"].items())
        o = d["ordering"]
        measured = (f"{n} groups, epochs {min(epochs):g}-{max(epochs):g}; held-out error: clock, {c['clock']} "
                    f"{fg.fmt_ci(c['clock_error'], ' pts', seeds=False)}; {errors}; strongest non-clock predictor: "
                    f"{strongest}; clock - strongest {fg.fmt_ci(diff, ' pts', seeds=False)} (95% CI over groups; the "
                    f"strongest chosen on the same splits, which favours it); {t['splits']} "
                    f"{'(all)' if t['exact'] else 'random'} half splits; Spearman rho(log clock, spread) "
                    f"{o['rho'][0]:.2f}, {'exact' if o['exact'] else 'Monte Carlo'} permutation p {o['p_less']:.3g} (falling)")
        from implicitbias.claims.memory_rules import Estimate

        estimate = Estimate(f"held-out error, clock - strongest non-clock predictor ({strongest}; pts; {n} groups, "
                            "CI over groups)", diff["estimate"], diff["lo"], diff["hi"], p=o["p_less"])
        numbers = {"estimate": estimate, "n": n, "difference": diff["estimate"], "lo": diff["lo"], "hi": diff["hi"],
                   "strongest": strongest, "error_clock": c["clock_error"]["estimate"],
                   "error_strongest": c["errors"][strongest]["estimate"],
                   "error_epochs": t["predictors"]["epochs"]["error"]["estimate"], "epoch_ratio": ratio}
        if ratio < self.threshold("epoch_ratio"):
            return inconclusive(f"epochs span {ratio:.3g}x, less than {self.threshold('epoch_ratio'):g}x: the clock "
                                "cannot be told from the epoch count", measured, **numbers)
        if c["same_order"]:
            return inconclusive(f"the clock orders the groups exactly as {', '.join(c['same_order'])} does: the grid "
                                "cannot tell them apart", measured, **numbers)
        margin = self.threshold("margin")
        if diff["hi"] < 0:
            return agrees(f"the clock predicts held-out spreads better than every non-clock predictor (the strongest, "
                          f"{strongest}: CI of the difference below 0)", measured, **numbers)
        if diff["lo"] > -margin:
            return disagrees(f"the clock does not predict held-out spreads even {margin:g} point better than {strongest} "
                             f"(CI of the difference above -{margin:g})", measured, **numbers)
        return inconclusive(f"the CI of the difference from {strongest} straddles 0 and -{margin:g} points", measured,
                            **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        from implicitbias.claims.forgetting_figures import collapse_figure
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
