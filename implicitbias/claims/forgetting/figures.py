"""Figures of Spec B's claims (C1-C7), drawn from group summaries (``validation.analysis.summarise``).

Each function saves a PNG next to the CSV of the numbers it plots (``implicitbias.figures``) and
returns the PNG's path.  Accuracies and spreads are in points (percent).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib import colormaps
from matplotlib.ticker import NullFormatter

from implicitbias.figures import save_figure, subplots
from implicitbias.numerics.metrics.resampling import Interval
from implicitbias.validation.analysis import GroupSummary, mean_by_sigma

_FAMILY_COLOURS = {"sgd": "tab:red", "sgd_l2": "tab:green", "adaptive": "tab:blue"}


def _columns(*names: str) -> dict[str, list]:
    return {n: [] for n in names}


def _sigma_axis(ax, sigmas: Sequence[float]) -> None:
    """Log-scaled sigma_w axis with a tick at each sigma_w of the grid."""
    ax.set_xscale("log")
    ax.set_xticks(list(sigmas), [f"{s:g}" for s in sigmas])
    ax.minorticks_off()
    ax.set_xlabel("sigma_w")


def accuracy_figure(ctx, summary: GroupSummary, name: str) -> Path:
    """Left: selected and final test accuracy against sigma_w, each seed and the seed mean.
    Right: training accuracy against epoch, one line per run, with the 99.5% line."""
    fig, (ax1, ax2) = subplots(1, 2, figsize=(10, 3.8))
    cols = _columns("sigma_w", "seed", "selected_test_acc", "final_test_acc", "tau_interp", "kept")
    for r in summary.runs:
        for k, v in (("sigma_w", r.sigma_w), ("seed", r.seed), ("selected_test_acc", r.selected_test_acc),
                     ("final_test_acc", r.final_test_acc), ("tau_interp", r.tau_interp), ("kept", r.kept)):
            cols[k].append(v)
        if r.selected_test_acc is not None:
            ax1.plot(r.sigma_w, r.selected_test_acc, "o", color="tab:blue", alpha=0.35 if r.kept else 0.1, ms=4)
            ax1.plot(r.sigma_w, r.final_test_acc, "s", color="tab:orange", alpha=0.35 if r.kept else 0.1, ms=4)
        curve = np.array([[e, a] for e, a, _ in r.curve], dtype=float)
        if len(curve):
            colour = colormaps["viridis"](summary.sigma_w.index(r.sigma_w) / max(1, len(summary.sigma_w) - 1))
            ax2.plot(curve[:, 0], 100 * curve[:, 1], color=colour, lw=0.8, alpha=0.7,
                     label=f"sigma_w {r.sigma_w:g}" if r.seed == summary.seeds[0] else None)
    for key, style, text in (("selected_test_acc", "o-", "selected (min val loss)"), ("final_test_acc", "s--", "end")):
        means = mean_by_sigma(summary, key)
        ax1.plot(list(means), list(means.values()), style, color="tab:blue" if key.startswith("sel") else "tab:orange",
                 label=f"{text}, seed mean")
    _sigma_axis(ax1, summary.sigma_w)
    ax1.set_ylabel("test accuracy (%)")
    ax1.legend(fontsize=7)
    ax1.set_title(summary.label, fontsize=9)
    ax2.axhline(99.5, color="k", lw=0.8, ls=":")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("training accuracy (%)")
    ax2.legend(fontsize=7)
    return save_figure(fig, ctx.path(f"{name}.png"), cols)


def horizon_figure(ctx, short: GroupSummary, long: GroupSummary, name: str) -> Path:
    """Seed-mean test accuracy against sigma_w at horizon E and kE, selected and at the end."""
    fig, ax = subplots(figsize=(5.5, 3.8))
    cols = _columns("horizon", "kind", "sigma_w", "test_acc")
    for summary, colour in ((short, "tab:blue"), (long, "tab:red")):
        for key, style in (("selected_test_acc", "o-"), ("final_test_acc", "s--")):
            means = mean_by_sigma(summary, key)
            ax.plot(list(means), list(means.values()), style, color=colour,
                    label=f"{summary.horizon} epochs, {'selected' if key.startswith('sel') else 'end'}")
            for s, v in means.items():
                for k, x in (("horizon", summary.horizon), ("kind", key), ("sigma_w", s), ("test_acc", v)):
                    cols[k].append(x)
    _sigma_axis(ax, short.sigma_w)
    ax.set_ylabel("test accuracy, seed mean (%)")
    ax.legend(fontsize=7)
    return save_figure(fig, ctx.path(f"{name}.png"), cols)


def _errorbar(ax, x, ci: Interval, colour: str, marker: str = "o") -> None:
    if ci.n and not math.isnan(ci.estimate):
        ax.errorbar([x], [ci.estimate], yerr=[[ci.estimate - ci.lo], [ci.hi - ci.estimate]],
                    fmt=marker, color=colour, capsize=3)


def groups_figure(ctx, summaries: Sequence[GroupSummary], name: str) -> Path:
    """Left: spread (selected, with CI) per group.  Right: final kernel norm against sigma_w (log-log)."""
    fig, (ax1, ax2) = subplots(1, 2, figsize=(11, 3.8))
    cols = _columns("group", "spread_selected", "lo", "hi", "spread_final", "norm_slope", "seeds", "diverged")
    for i, s in enumerate(summaries):
        colour = _FAMILY_COLOURS[s.family]
        _errorbar(ax1, i, s.spread_selected, colour)
        _errorbar(ax1, i + 0.2, s.spread_final, colour, "s")
        norms = mean_by_sigma(s, "final_norm")
        ax2.plot(list(norms), list(norms.values()), marker="os^vD"[i % 5], ls=("-", "--", "-.", ":")[i % 4],
                 color=colour, alpha=0.8, label=f"{s.label} (slope {s.norm_slope.estimate:.2f})")
        for k, v in (("group", s.label), ("spread_selected", s.spread_selected.estimate),
                     ("lo", s.spread_selected.lo), ("hi", s.spread_selected.hi),
                     ("spread_final", s.spread_final.estimate), ("norm_slope", s.norm_slope.estimate),
                     ("seeds", s.spread_selected.n), ("diverged", s.n_diverged)):
            cols[k].append(v)
    initial = mean_by_sigma(summaries[0], "initial_norm")
    ax2.plot(list(initial), list(initial.values()), "k:", label="initial norm")
    ax1.set_xticks(range(len(summaries)), [s.label for s in summaries], rotation=30, ha="right", fontsize=7)
    ax1.set_ylabel("spread across sigma_w (points)\no: selected, s: end; 95% CI over seeds")
    _sigma_axis(ax2, summaries[0].sigma_w)
    ax2.set_yscale("log")
    ax2.set_ylabel("final total kernel norm")
    ax2.legend(fontsize=6)
    return save_figure(fig, ctx.path(f"{name}.png"), cols)


def batch_figure(ctx, data, name: str, checkpoint: str = "all") -> Path:
    """Memory m beyond seed noise (points) and the raw spread against the batch size, at ``checkpoint``
    (``data``: C5's evidence, its groups and their memories)."""
    fig, ax = subplots(figsize=(5.5, 3.8))
    cols = _columns("batch_size", "memory", "noise", "raw_spread", "seeds")
    for s, m in zip(data.groups, data.memory[checkpoint]):
        for k, v in (("batch_size", s.setting["batch_size"]), ("memory", m.m), ("noise", m.sigma),
                     ("raw_spread", m.spread), ("seeds", m.n)):
            cols[k].append(v)
    ax.plot(cols["batch_size"], cols["memory"], "o-", color="tab:red", label="memory m (beyond seed noise)")
    ax.plot(cols["batch_size"], cols["raw_spread"], "s:", color="tab:grey", label="raw spread of seed means")
    ax.legend(fontsize=7)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size b")
    ax.set_ylabel(f"test accuracy across sigma_w (points), {checkpoint} checkpoint")
    return save_figure(fig, ctx.path(f"{name}.png"), cols)


def curves_figure(ctx, summaries: Sequence[GroupSummary], name: str) -> Path:
    """Training accuracy against epoch at the smallest and largest sigma_w of each group."""
    fig, axes = subplots(1, len(summaries), figsize=(5 * len(summaries), 3.6), squeeze=False)
    cols = _columns("group", "sigma_w", "seed", "epoch", "train_acc")
    for ax, s in zip(axes[0], summaries):
        lo, hi = min(s.sigma_w), max(s.sigma_w)
        labelled = set()
        for r in s.runs:
            if r.sigma_w not in (lo, hi) or not r.curve:  # a run diverged at initialisation has no curve
                continue
            curve = np.array([[e, a] for e, a, _ in r.curve], dtype=float)
            ax.plot(curve[:, 0], 100 * curve[:, 1], color="tab:blue" if r.sigma_w == lo else "tab:red", lw=0.9,
                    label=None if r.sigma_w in labelled else f"sigma_w {r.sigma_w:g}")
            labelled.add(r.sigma_w)
            for e, a in curve:
                for k, v in (("group", s.label), ("sigma_w", r.sigma_w), ("seed", r.seed), ("epoch", e),
                             ("train_acc", a)):
                    cols[k].append(v)
        ax.axhline(99.5, color="k", lw=0.8, ls=":")
        ax.set_title(f"{s.setting['arch']}: {s.label}", fontsize=8)
        ax.set_xlabel("epoch")
        ax.set_ylabel("training accuracy (%)")
        ax.legend(fontsize=7)
    return save_figure(fig, ctx.path(f"{name}.png"), cols)


def clock_figure(ctx, points: Sequence, name: str) -> Path:
    """End-of-training spread (CI) against each group's governing clock, one panel per family (``points``:
    C7's ``ClockPoint``)."""
    families = sorted({p.family for p in points})
    fig, axes = subplots(1, len(families), figsize=(4.5 * len(families), 3.6), squeeze=False)
    cols = _columns("group", "family", "governing", "clock", "spread_final", "lo", "hi")
    for ax, f in zip(axes[0], families):
        for p in (p for p in points if p.family == f):
            _errorbar(ax, p.clock, p.spread, _FAMILY_COLOURS[f])
            ax.annotate(p.label, (p.clock, p.spread.estimate), fontsize=6, xytext=(3, 3),
                        textcoords="offset points")
            for k, v in (("group", p.label), ("family", f), ("governing", p.governing), ("clock", p.clock),
                         ("spread_final", p.spread.estimate), ("lo", p.spread.lo), ("hi", p.spread.hi)):
                cols[k].append(v)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        governing = next(p.governing for p in points if p.family == f)
        ax.set_xlabel(f"{governing} at the end of training")
        ax.set_title(f, fontsize=9)
    axes[0][0].set_ylabel("end-of-training spread (points)")
    return save_figure(fig, ctx.path(f"{name}.png"), cols)


def direction_figure(ctx, data, angle: str, name: str) -> Path:
    """C7 on one family, side by side: each group's radial memory (mean over seeds, bar: sd) against
    the family's clock, one line per horizon (left), and against the steps, one line per clock value
    (right); memory governed by the clock puts every horizon on one curve on the left and draws flat
    lines on the right.  ``data``: C7's evidence on the family; ``angle``: the direction test's summary (title)."""
    points, table = data.points, np.asarray(data.table, dtype=float)
    mean = table.mean(0)
    sd = table.std(0, ddof=1) if len(table) > 1 else np.zeros_like(mean)  # one seed: no bar
    batch = [a[1] for a in data.axes]
    common = max(set(batch), key=batch.count)
    fig, axes = subplots(1, 2, figsize=(11, 4), sharey=True)
    # left: one line per horizon (epochs, at the grid's batch size); right: one line per clock value
    panels = ((axes[0], "clock", f"{data.clock} at the end of training",
               lambda p, b: f"{p.epochs} epochs" + ("" if b == common else f", b {b}")),
              (axes[1], "steps", "optimiser steps", lambda p, b: f"{data.clock} {p.clock:.3g}"))
    for ax, key, xlabel, line_of in panels:
        lines: dict[str, list[int]] = {}
        for i, p in enumerate(points):
            lines.setdefault(line_of(p, batch[i]), []).append(i)
        colours = colormaps["plasma"](np.linspace(0, 0.85, len(lines)))
        for colour, (label, idx) in zip(colours, lines.items()):
            idx = sorted(idx, key=lambda i: getattr(points[i], key))
            ax.errorbar([getattr(points[i], key) for i in idx], mean[idx], yerr=sd[idx], fmt="o-", color=colour, ms=4, lw=1,
                        capsize=2, label=label)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(xlabel)
        ax.legend(fontsize=6)
    axes[0].set_ylabel("radial memory d log||W_end|| / d log sigma_w")
    fig.suptitle(f"{data.family}: {angle}", fontsize=8)
    cols = _columns("group", "clock", "epochs", "steps", "lr", "batch_size", "memory", "sd", "spread_final")
    for i, p in enumerate(points):
        for k, v in (("group", p.label), ("clock", p.clock), ("epochs", p.epochs), ("steps", p.steps),
                     ("lr", p.lr), ("batch_size", data.axes[i][1]), ("memory", mean[i]), ("sd", sd[i]),
                     ("spread_final", p.spread.estimate)):
            cols[k].append(v)
    return save_figure(fig, ctx.path(f"{name}.png"), cols)
