"""Spreads across sigma_w, spread against the forgetting clocks, and the C1-C7 claims table (Spec B).

A *group* is the runs of one setting that differ only in sigma_w (same seed).  Per group
(``implicitbias.numerics.metrics.forgetting_metrics``):

    spread      = max - min over sigma_w of the validation-selected test accuracy (points)
    norm_slope  = d log ||W_final|| / d log sigma_w (1: the final norm stays coupled to the initial
                  one, "radial memory"; 0: a common final norm)
    clocks      = T_SGD = (1/b) sum eta_k^2, T_L2 = lambda sum eta_k, T_adapt = sum eta_k at the
                  end of training; the governing clock per optimiser (``theory.clocks``)

Spread against each clock: least-squares fit of the spread on log10(clock) and Spearman's rank
correlation (scipy.stats), over the groups where that clock is positive.

Claims (Spec B, section 2), each judged only from what the analysed runs contain (``not run``
when they hold no runs that bear on it).  Families: *SGD* = sgd / sgd_momentum / nesterov
without decay, *low-lr SGD* = SGD groups at the smallest SGD learning rate, *SGD + L2* = the
SGD family with weight_decay > 0, *adaptive* = adam, adamw, rmsprop, sign, muon.

- C1: every low-lr SGD run interpolates (train acc >= 99.5%) and the spread is >= 5 points ->
  agrees, < 5 points -> disagrees; inconclusive if some run does not interpolate (the spread may
  then be under-training).
- C2: low-lr SGD spread at the full horizon vs. at half of it (validation selection restricted to
  the first half; constant schedules only): agrees if it keeps >= 75% of its size; inconclusive
  when some run has not interpolated by half the horizon (the claim is about interpolating runs).
- C3: adaptive spread <= half the low-lr SGD spread and adaptive log-norm slope below low-lr
  SGD's (the final norm is less coupled to sigma_w) -> agrees.
- C4: SGD + L2 and higher-lr SGD spreads <= half the low-lr SGD spread -> agrees.
  (C3, C4: inconclusive when the low-lr SGD spread itself is < 5 points: nothing to forget.)
- C5: SGD groups differing only in batch size: Spearman(b, spread) > 0 -> agrees.
- C6: ResNet-56/110 groups: the largest sigma_w fails to interpolate while the smallest does.
- C7: Spearman(spread, governing clock) over all groups: <= -0.5 agrees, >= 0.5 disagrees.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from implicitbias.numerics.metrics.forgetting_metrics import INTERPOLATION_THRESHOLD, group_summary, spread
from implicitbias.theory.clocks import ADAPTIVE, CLOCKS

__all__ = ["Group", "group_runs", "clock_fits", "claims", "CLAIMS", "SPREAD_LARGE", "history_prefix_spread"]

SPREAD_LARGE = 5.0  # points of test accuracy: what counts as "remembering" in C1
CLAIMS = {
    "C1": "low-lr SGD remembers sigma_w: large test-acc spread although every run interpolates",
    "C2": "training longer leaves the low-lr SGD spread essentially unchanged",
    "C3": "adaptive methods (Adam, AdamW, Muon) forget: small spread, common final norm",
    "C4": "SGD forgets with a larger lr or with L2 decay (spread ~ 0 at lambda = 1e-2)",
    "C5": "larger batches slow SGD's forgetting: spread grows with b",
    "C6": "deep nets (ResNet-56/110) at large sigma_w fail to interpolate",
    "C7": "spread is organised by the cumulative clock (T_SGD, T_L2, T_adapt), not epochs",
}
_SGD = ("sgd", "sgd_momentum", "nesterov")


@dataclass
class Group:
    """One sigma_w sweep: its label, the shared config (sigma_w removed) and the runs' records."""

    label: str
    config: dict
    sigma_w: list[float]
    records: list[dict]
    summary: dict = field(default_factory=dict)

    @property
    def family(self) -> str:
        opt = self.config["optimizer"]
        if opt in ADAPTIVE:
            return "adaptive"
        return "sgd_l2" if self.config["weight_decay"] > 0 else "sgd"

    @property
    def spread_points(self) -> float:
        return 100.0 * self.summary["spread"]

    @property
    def clocks(self) -> dict[str, float]:
        return self.records[0]["summary"]["clocks"]

    @property
    def governing(self) -> str:
        return self.records[0]["summary"]["governing_clock"]

    @property
    def min_final_train_acc(self) -> float:
        return min(r["summary"]["final_train_acc"] for r in self.records)

    def describe(self) -> str:
        c = self.config
        wd = f", wd {c['weight_decay']:g}" if c["weight_decay"] else ""
        return f"{c['optimizer']} lr {c['lr']:g}, b {c['batch_size']}{wd}, {c['epochs']} ep"


def group_runs(runs: Sequence[tuple[str, Mapping, Mapping]]) -> list[Group]:
    """Group ``(label, config, record)`` triples by everything but sigma_w; groups of >= 2 sigma_w.

    Diverged runs count with their history up to divergence.  Groups are in first-seen order.
    """
    buckets: dict[str, Group] = {}
    for label, config, record in runs:
        if record is None:
            continue
        rest = {k: v for k, v in config.items() if k != "sigma_w"}
        key = json.dumps(rest, sort_keys=True)
        g = buckets.setdefault(key, Group(label, rest, [], []))
        g.sigma_w.append(float(config["sigma_w"]))
        g.records.append(record)
    groups = [g for g in buckets.values() if len(set(g.sigma_w)) >= 2]
    for g in groups:
        order = np.argsort(g.sigma_w)
        g.sigma_w = [g.sigma_w[i] for i in order]
        g.records = [g.records[i] for i in order]
        g.summary = group_summary(g.sigma_w, [_valid(r) for r in g.records])
    return groups


def _valid(record: Mapping) -> list[dict]:
    d = record["summary"].get("diverged_epoch")
    return [row for row in record["history"] if row["epoch"] != d]


def _valid_tau(record: Mapping) -> int | None:
    return record["summary"]["tau_interp"]


def history_prefix_spread(group: Group, last_epoch: int) -> float:
    """Spread (points) with each run's validation selection restricted to epochs <= last_epoch."""
    selected = []
    for r in group.records:
        rows = [row for row in _valid(r) if row["epoch"] <= last_epoch]
        selected.append(min(rows, key=lambda row: row["val_loss"])["test_acc"])
    return 100.0 * spread(selected)


def clock_fits(groups: Sequence[Group]) -> dict[str, dict]:
    """Per clock: slope/intercept of spread on log10(clock), Spearman rho and p, number of groups."""
    out = {}
    for clock in CLOCKS:
        pts = [(g.clocks[clock], g.spread_points) for g in groups if g.clocks[clock] > 0]
        out[clock] = _fit(pts)
    gov = [(g.clocks[g.governing], g.spread_points) for g in groups if g.clocks[g.governing] > 0]
    out["governing"] = _fit(gov)
    return out


def _fit(pts) -> dict:
    if len(pts) < 3 or len({x for x, _ in pts}) < 2:
        return {"n": len(pts), "slope": math.nan, "intercept": math.nan, "rho": math.nan, "p": math.nan}
    x = np.log10([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    fit = stats.linregress(x, y)
    rho, p = stats.spearmanr(x, y)
    return {"n": len(pts), "slope": float(fit.slope), "intercept": float(fit.intercept), "rho": float(rho), "p": float(p)}


def _fmt(groups: Sequence[Group]) -> str:
    return "; ".join(f"{g.describe()}: {g.spread_points:.1f} pts" for g in groups)


def _scale(groups: Sequence[Group]) -> str:
    c = groups[0].config
    n = groups[0].records[0]["summary"]["n_train"]
    return f"{c['arch']} width {c['width']:g} on {c['dataset']} ({n} train), sigma_w {groups[0].sigma_w}"


def _relative_verdict(smaller: bool, low_spread: float) -> str:
    """Forgetting relative to low-lr SGD is only judged when low-lr SGD remembered (spread large)."""
    if low_spread < SPREAD_LARGE:
        return "inconclusive"
    return "agrees" if smaller else "disagrees"


def claims(groups: Sequence[Group]) -> list[dict]:
    """The C1-C7 rows: claim, statement, check (data and scale), measured, verdict."""
    rows = []

    def add(cid, check, measured, verdict):
        rows.append({"claim": cid, "statement": CLAIMS[cid], "check": check, "measured": measured, "verdict": verdict})

    sgd = [g for g in groups if g.family == "sgd"]
    low_lr = min((g.config["lr"] for g in sgd), default=None)
    low = [g for g in sgd if g.config["lr"] == low_lr]
    low_spread = float(np.mean([g.spread_points for g in low])) if low else math.nan
    scale = _scale(groups) if groups else ""

    if low:
        interp = all(g.summary["all_interpolate"] for g in low)
        slopes = ", ".join(f"{g.summary['norm_slope']:.2f}" for g in low)
        verdict = "inconclusive" if not interp else "agrees" if low_spread >= SPREAD_LARGE else "disagrees"
        add("C1", f"low-lr SGD, {scale}",
            f"{_fmt(low)}; min final train acc {min(g.min_final_train_acc for g in low):.3f}; "
            f"log-norm slope {slopes}", verdict)
        constant = [g for g in low if g.config["schedule"] == "constant" and g.config["epochs"] >= 2]
        if constant:
            g = constant[0]
            half = history_prefix_spread(g, g.config["epochs"] // 2)
            interpolated = all((_valid_tau(r) or math.inf) <= g.config["epochs"] // 2 for r in g.records)
            verdict = "inconclusive" if not interpolated else "agrees" if g.spread_points >= 0.75 * half else "disagrees"
            add("C2", f"{g.describe()}: spread at epoch {g.config['epochs'] // 2} vs {g.config['epochs']} (2x, not 25x)",
                f"{half:.1f} -> {g.spread_points:.1f} pts", verdict)
        else:
            add("C2", "needs a constant-schedule low-lr SGD group", "-", "not run")
    else:
        add("C1", "needs a plain SGD group", "-", "not run")
        add("C2", "needs a plain SGD group", "-", "not run")

    adaptive = [g for g in groups if g.family == "adaptive"]
    if adaptive and low:
        low_slope = min(g.summary["norm_slope"] for g in low)
        ok = all(g.spread_points <= 0.5 * low_spread and g.summary["norm_slope"] < low_slope for g in adaptive)
        slopes = ", ".join(f"{g.config['optimizer']} {g.summary['norm_slope']:.2f}" for g in adaptive)
        add("C3", f"adaptive vs low-lr SGD ({low_spread:.1f} pts), {scale}",
            f"{_fmt(adaptive)}; log-norm slope {slopes}", _relative_verdict(ok, low_spread))
    else:
        add("C3", "needs adaptive and low-lr SGD groups", "-", "not run")

    forget = [g for g in groups if g.family == "sgd_l2"] + [g for g in sgd if g.config["lr"] != low_lr]
    if forget and low:
        ok = all(g.spread_points <= 0.5 * low_spread for g in forget)
        add("C4", f"SGD + L2 / larger lr vs low-lr SGD ({low_spread:.1f} pts)", _fmt(forget), _relative_verdict(ok, low_spread))
    else:
        add("C4", "needs SGD + L2 or larger-lr SGD groups next to low-lr SGD", "-", "not run")

    by_rest: dict[str, list[Group]] = {}
    for g in sgd:
        key = json.dumps({k: v for k, v in g.config.items() if k != "batch_size"}, sort_keys=True)
        by_rest.setdefault(key, []).append(g)
    batch_sets = [gs for gs in by_rest.values() if len({g.config["batch_size"] for g in gs}) >= 2]
    if batch_sets:
        gs = max(batch_sets, key=len)
        rho = stats.spearmanr([g.config["batch_size"] for g in gs], [g.spread_points for g in gs])[0] if len(gs) > 2 else (
            math.copysign(1.0, (gs[-1].spread_points - gs[0].spread_points) * (gs[-1].config["batch_size"] - gs[0].config["batch_size"])))
        add("C5", "SGD groups differing only in b", _fmt(gs) + f"; Spearman {rho:.2f}",
            "agrees" if rho > 0 else "disagrees" if rho < 0 else "inconclusive")
    else:
        add("C5", "needs SGD groups differing only in batch size", "-", "not run")

    deep = [g for g in groups if g.config["arch"] in ("resnet56", "resnet110")]
    if deep:
        measured, ok = [], True
        for g in deep:
            accs = [r["summary"]["final_train_acc"] for r in g.records]
            measured.append(f"{g.config['arch']} {g.describe()}: final train acc {accs[0]:.3f} (sigma_w {g.sigma_w[0]:g}) "
                            f"-> {accs[-1]:.3f} (sigma_w {g.sigma_w[-1]:g})")
            ok &= accs[0] >= INTERPOLATION_THRESHOLD > accs[-1]
        add("C6", "deep CIFAR ResNets across sigma_w", "; ".join(measured), "agrees" if ok else "disagrees")
    else:
        add("C6", "needs ResNet-56/110 groups", "-", "not run")

    fit = clock_fits(groups)["governing"] if groups else {"n": 0}
    if fit["n"] >= 3 and not math.isnan(fit["rho"]):
        verdict = "agrees" if fit["rho"] <= -0.5 else "disagrees" if fit["rho"] >= 0.5 else "inconclusive"
        add("C7", f"spread vs governing clock over {fit['n']} groups",
            f"Spearman {fit['rho']:.2f} (p {fit['p']:.2g}); fit {fit['slope']:.1f} pts per decade", verdict)
    else:
        add("C7", "needs >= 3 groups with a positive governing clock", "-", "not run" if not groups else "inconclusive")
    return rows
