"""Report section: initialisation memory of BatchNorm ResNets and the forgetting clocks (Spec B, C1-C7).

Tier ``default`` runs the packaged ``default`` sweep spec (offline digits, tiny ResNet-9; cached
in the store, so a second report is fast); tiers ``gpu`` and ``full`` analyse every run record
already in the store (e.g. from ``implicitbias sweep fashion_mnist_cpu`` or ``gpu_h200``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from implicitbias.executors import InlineExecutor
from implicitbias.figures import markdown_table, plt, save_figure
from implicitbias.report import Claim, Section
from implicitbias.theory.clocks import CLOCKS
from implicitbias.validation.analysis import claims, clock_fits, group_runs
from implicitbias.validation.run import KIND, execute
from implicitbias.validation.sweep import load_spec, run_sweep

NAME = "validation"
ORDER = 40
TITLE = "Forgetting clocks: initialisation memory of ResNets (Spec B, C1-C7)"
REAL_DATASETS = ("cifar10", "mnist", "fashion_mnist")  # tiers gpu/full prefer these runs when present

_COLOURS = {"sgd": "tab:red", "sgd_l2": "tab:green", "adaptive": "tab:blue"}
_NAMES = {"sgd": "SGD", "sgd_l2": "SGD + L2", "adaptive": "adaptive"}
_PANELS = (*CLOCKS, "governing")


def _clock(group, panel: str) -> float:
    return group.clocks[group.governing if panel == "governing" else panel]


def _spread_figure(groups, path: Path) -> Path:
    fits = clock_fits(groups)
    fig, axes = plt.subplots(1, len(_PANELS), figsize=(4 * len(_PANELS), 3.6), sharey=True)
    cols: dict[str, list] = {"label": [], "family": [], "governing": [], "spread_points": [], **{c: [] for c in CLOCKS}}
    for g in groups:
        cols["label"].append(g.describe())
        cols["family"].append(g.family)
        cols["governing"].append(g.governing)
        cols["spread_points"].append(round(g.spread_points, 3))
        for c in CLOCKS:
            cols[c].append(g.clocks[c])
    for ax, panel in zip(axes, _PANELS):
        for family, colour in _COLOURS.items():
            pts = [(_clock(g, panel), g.spread_points) for g in groups if g.family == family and _clock(g, panel) > 0]
            if pts:
                ax.scatter(*zip(*pts), c=colour, label=_NAMES[family])
        f = fits[panel]
        if f["n"] >= 3 and not math.isnan(f["slope"]):
            xs = sorted(_clock(g, panel) for g in groups if _clock(g, panel) > 0)
            ax.plot(xs, [f["intercept"] + f["slope"] * math.log10(x) for x in xs], "k--", lw=1)
            ax.set_title(f"{panel}: Spearman {f['rho']:.2f} (n = {f['n']})", fontsize=9)
        else:
            ax.set_title(f"{panel} (n = {f['n']})", fontsize=9)
        ax.set_xscale("log")
        ax.set_xlabel("each group's governing clock" if panel == "governing" else f"{panel} at end of training")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("test-acc spread across sigma_w (points)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Spread of validation-selected test accuracy against each forgetting clock")
    return save_figure(fig, path, cols)


def _norm_figure(groups, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(5, 3.8))
    cols: dict[str, list] = {"label": [], "sigma_w": [], "initial_norm": [], "final_norm": []}
    for g in groups:
        init = [r["summary"]["initial_kernel_norm"] for r in g.records]
        final = [r["summary"]["final_kernel_norm"] for r in g.records]
        ax.plot(g.sigma_w, final, marker="o", c=_COLOURS[g.family], label=g.describe(), alpha=0.8,
                ls=["-", "--", "-.", ":"][groups.index(g) % 4])
        for s, a, b in zip(g.sigma_w, init, final):
            cols["label"].append(g.describe())
            cols["sigma_w"].append(s)
            cols["initial_norm"].append(a)
            cols["final_norm"].append(b)
    if groups:
        ax.plot(groups[0].sigma_w, [r["summary"]["initial_kernel_norm"] for r in groups[0].records], "k:", label="initial norm")
    ax.set_xscale("log")
    ax.set_yscale("log")
    if groups:
        ax.set_xticks(groups[0].sigma_w, [f"{s:g}" for s in groups[0].sigma_w])
        ax.minorticks_off()
    ax.set_xlabel("sigma_w")
    ax.set_ylabel("total kernel norm ||W||_F at the end")
    ax.legend(fontsize=7)
    ax.set_title("Radial memory: final vs initial kernel norm")
    return save_figure(fig, path, cols)


def analysis_markdown(runs, figure_path: Callable[[str], Path], link: Callable[[Path], str]) -> tuple[str, list[dict]]:
    """Groups table, figures and claims rows of ``(label, config, record)`` runs."""
    groups = group_runs(runs)
    rows = claims(groups)
    if not groups:
        return "No sigma_w groups in the store yet (run `implicitbias sweep SPEC`).", rows
    table = markdown_table(
        ["group", "label", "spread (pts)", "all interpolate", "min final train acc", "log-norm slope",
         "T_SGD", "T_L2", "T_adapt", "governing"],
        [[g.describe(), g.label, f"{g.spread_points:.1f}", "yes" if g.summary["all_interpolate"] else "no",
          f"{g.min_final_train_acc:.3f}", f"{g.summary['norm_slope']:.2f}",
          *(f"{g.clocks[c]:.3g}" for c in CLOCKS), g.governing] for g in groups],
    )
    spread_png = _spread_figure(groups, figure_path("validation_spread_vs_clock.png"))
    norm_png = _norm_figure(groups, figure_path("validation_radial_memory.png"))
    c = groups[0].config
    md = "\n".join([
        f"Runs: {sum(len(g.records) for g in groups)} in {len(groups)} sigma_w groups "
        f"({c['arch']}, width {c['width']:g}, {c['dataset']}). Spread = best minus worst test accuracy across "
        "sigma_w, each at the epoch of minimum validation loss; log-norm slope = d log||W_final|| / d log sigma_w "
        "(1: final norm coupled to the initial one; 0: common final norm).",
        "", table, "",
        f"![spread vs clock]({link(spread_png)}) ([CSV]({link(spread_png.with_suffix('.csv'))}))", "",
        f"![radial memory]({link(norm_png)}) ([CSV]({link(norm_png.with_suffix('.csv'))}))", "",
        "The clocks are organising principles from linear and scale-invariant arguments (spec section 2), "
        "not theorems for these networks; verdicts use the thresholds in `implicitbias.validation.analysis`.",
    ])
    return md, rows


def build(ctx) -> Section:
    if ctx.tier == "default":
        spec = load_spec("default")
        executor = None if ctx.executor is None or isinstance(ctx.executor, InlineExecutor) else ctx.executor
        records = run_sweep(spec, ctx.store, executor=executor, progress=ctx.progress)
        runs = [(label, config, r) for (label, config), r in zip(spec.runs, records)]
        intro = f"Embedded default sweep `{spec.name}`: {spec.description}.\n\n"
    else:
        runs = [("store", config, r) for config, r in ctx.store.records(KIND, code=ctx.store.code_of(execute))]
        real = [run for run in runs if run[1]["dataset"] in REAL_DATASETS]
        runs = real or runs
        intro = (f"Every finished run in the store (tier `{ctx.tier}`)"
                 f"{' on real images' if real else ''}.\n\n")
    md, rows = analysis_markdown(runs, ctx.path, ctx.link)
    return Section(TITLE, intro + md, [Claim(r["claim"], r["statement"], r["check"], r["measured"], r["verdict"]) for r in rows])
