"""Shared by the head-rank claims (Spec A, section 5, on real networks): the training grids, their
measurement through the store and the figure panels.  This module holds no claim.

Runs (``implicitbias.validation.head_rank.execute``): a ResNet-20 body at width 0.25 and a linear
head of L weight matrices (L counts weight matrices; with the body's features N = L + 1 factors),
Adam, unregularised cross-entropy; the Roy-Vetterli effective rank of the K x K mean-logit matrix
on the training set at the end of training.  Tier ``default`` trains the offline digits grid;
tiers ``gpu`` and ``full`` add the Fashion-MNIST grid (Debian's ``dataset-fashion-mnist``), whose
evidence is "not run" on a machine without its files.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from implicitbias.claims import Claim, Evidence, Verdict, not_run
from implicitbias.claims.rules import trend_verdict
from implicitbias.figures import markdown_table, save_figure, subplots
from implicitbias.validation import head_rank as hr
from implicitbias.validation.data import dataset_path_problem

GRIDS = {  # dataset -> list of (base config, axes); the second digits entry is the small-init comparison
    "digits": [
        ({"dataset": "digits", "epochs": 20, "batch_size": 256, "width": 0.25, "lr": 3e-3},
         {"depths": [1, 2, 4, 6], "widths": [16, 64], "seeds": [0, 1]}),
        ({"dataset": "digits", "epochs": 20, "batch_size": 256, "width": 0.25, "lr": 3e-3, "head_init_scale": 0.1},
         {"depths": [1, 2, 4], "widths": [64], "seeds": [0], "head_inits": ["small"]}),
    ],
    "fashion_mnist": [
        ({"dataset": "fashion_mnist", "train_size": 4000, "val_size": 1000, "test_size": 2000,
          "epochs": 10, "batch_size": 256, "width": 0.25, "lr": 3e-3},
         {"depths": [1, 2, 4, 6], "widths": [16, 64], "seeds": [0, 1]}),
    ],
}


@dataclass(frozen=True)
class Config:
    datasets: tuple[str, ...] = ("digits",)


@dataclass(frozen=True)
class Measured:
    """A head-rank claim's evidence on one dataset: the summary rows of its grids, every head init
    (none when the dataset's files are missing: then ``Evidence.missing`` says why)."""

    dataset: str
    rows: tuple[hr.HeadRankRow, ...]


CONFIGS = {"default": Config(), "gpu": Config(datasets=("digits", "fashion_mnist"))}
CONFIGS["full"] = CONFIGS["gpu"]


class HeadRankClaim(Claim):
    """A claim judged on the head-rank grids: one piece of evidence per dataset, "not run" where the
    dataset's files are missing.  Subclasses define ``rule`` (the verdict on present data) and
    ``figure`` (Markdown)."""

    section = "head_rank"
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    configs = CONFIGS
    small_init = False  # judged only on the grids with the small-init comparison

    def measure(self, ctx, config: Config) -> list[Evidence]:
        return measure(ctx, config, small_init=self.small_init)

    def judge(self, evidence: Evidence) -> Verdict:
        if evidence.missing is not None:
            return not_run(evidence.missing)
        return self.rule(evidence)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        return "" if evidence.missing is not None else self.figure(ctx, evidence)

    def rule(self, evidence: Evidence) -> Verdict:
        raise NotImplementedError

    def line_trend(self, changes: dict, label: str, *, rises: str, falls: str, each: str) -> Verdict:
        """``trend_verdict`` on one change per line (``changes``: line key -> change in the direction the
        claim predicts) against ``trend_step``: agrees when every line moves that way by more than the
        step, disagrees when some line moves the other way by more.  ``label`` names the change in the
        measured text; ``rises`` / ``falls`` say what moves, ``each`` what a line is."""
        tol = self.threshold("trend_step")
        shown = ", ".join(f"{k}: {d:+.2f}" for k, d in changes.items())
        return trend_verdict(
            list(changes.values()), tol, f"{label}: {shown}",
            holds=f"{rises} by more than {tol:g} at every {each}",
            reversed=f"{falls} by more than {tol:g} at some {each}",
            unclear=f"some {each} changes by less than {tol:g} (or no line to judge)",
            changes={str(k): d for k, d in changes.items()})

    def figure(self, ctx, evidence: Evidence) -> str:
        raise NotImplementedError


def setting(dataset: str) -> str:
    """The check run, in words."""
    base, axes = GRIDS[dataset][0]
    return (f"{dataset}, ResNet-20 body x{base['width']}, linear heads of depth {axes['depths']} and width "
            f"{axes['widths']}, Adam lr {base['lr']}, {base['epochs']} epochs, {len(axes['seeds'])} seeds, "
            "no regularisation")


def train(ctx, dataset: str) -> tuple[list[dict], list[dict]]:
    """The configs of ``dataset``'s grids (every head init) and their run records, trained or read
    from the store (``ctx.map``)."""
    configs = [c for base, axes in GRIDS[dataset] for c in hr.grid(base, **axes)]
    run = functools.partial(hr.execute, options={"threads": 1})
    return configs, ctx.map(hr.KIND, run, configs, desc=f"head rank ({dataset})")


def train_grids(ctx, config: Config) -> None:
    """Train (or find in the store) the grids of every dataset of ``config`` whose files are on this
    machine; nothing is summarised (the report's prefetch, ``implicitbias.report``)."""
    for dataset in config.datasets:
        if dataset_path_problem(dataset, None) is None:
            train(ctx, dataset)


def measure(ctx, config: Config, *, small_init: bool = False) -> list[Evidence]:
    """One Evidence per dataset: ``Measured`` (``hr.cell_rows`` rows, every head init), without rows
    and with ``missing`` set when the dataset's files are not on this machine.  ``small_init``: only
    the datasets whose grids include the small-initialisation comparison."""
    out = []
    for dataset in config.datasets:
        if small_init and len(GRIDS[dataset]) < 2:
            continue
        problem = dataset_path_problem(dataset, None)
        if problem is not None:
            out.append(Evidence(setting(dataset), Measured(dataset, ()), dataset, missing=problem))
            continue
        configs, records = train(ctx, dataset)
        out.append(Evidence(setting(dataset), Measured(dataset, tuple(hr.cell_rows(configs, records))), dataset))
    return out


def he_rows(evidence: Evidence) -> list[hr.HeadRankRow]:
    return [r for r in evidence.data.rows if r.head_init == "he"]


def table(rows: Sequence[hr.HeadRankRow]) -> str:
    return markdown_table(
        ["head init", "depth L", "width", "seeds", "eff. rank of Zbar", "test acc", "min train acc", "NC1"],
        [[r.head_init, r.depth, r.width or "-", r.seeds, f"{r.rank_mean:.2f} ± {r.rank_std:.2f}",
          f"{r.test_acc_mean:.3f}", f"{r.train_acc_min:.3f}", f"{r.nc1_mean:.3f}"] for r in rows],
    )


def line_figure(ctx, name: str, lines: dict, xlabel: str, title: str, log_x: bool = False) -> str:
    """Markdown image of the rank along ``lines`` ({label: [(x, rank)]}), PNG + CSV under ``name``."""
    fig, ax = subplots(figsize=(6, 3.8))
    columns: dict[str, list] = {"line": [], "x": [], "effective_rank": []}
    for label, points in lines.items():
        xs, ys = zip(*points)
        ax.plot(xs, ys, "o-", label=label)
        columns["line"] += [label] * len(xs)
        columns["x"] += list(xs)
        columns["effective_rank"] += list(ys)
    ax.set(xlabel=xlabel, ylabel="effective rank of Zbar (Roy-Vetterli)", title=title)
    if log_x:
        ax.set_xscale("log")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    path = save_figure(fig, ctx.path(name), columns)
    return f"![{title}]({ctx.link(path)})"
