"""Spreads across sigma_w with their seeds, CIs and failures: the measurements Spec B's claims judge.

A *group* is the runs of one setting (``validation.groups``): every sigma_w x seed of the same
data, architecture, optimiser, learning rate, batch size, decay and horizon.  For each seed the
runs form one sigma_w sweep; per seed (``numerics.metrics.forgetting_metrics``, ``numerics.metrics.resampling``):

    spread_selected  max - min over sigma_w of the test accuracy at the epoch of minimum
                     validation loss (the validation-selected predictor), in points
    spread_final     the same with the test accuracy of the last epoch
    norm_slope       d log ||W_final|| / d log sigma_w (1: the final norm stays coupled to the
                     initial one, "radial memory"; 0: a common final norm)

Over seeds, the judged spread is the spread of the seed-mean accuracies (max over sigma_w of the
mean over seeds minus the min), with a percentile bootstrap CI that resamples seeds
(``resampling.bootstrap``).  A per-seed spread carries the test-set noise of every run: five
accuracies each +-1.5 points (1,000 test images) have an expected range of about 3.5 points with
no sigma_w effect at all, which would hide forgetting; the seed mean shrinks that floor by
sqrt(seeds).  The per-seed spreads are kept for display; the norm slope is the mean of the
per-seed slopes with its CI.  A run that
diverged (``validation.run.divergence``) is counted, named with its epoch and reason, and left
out of spreads and slopes; ``interpolating_only`` also leaves out runs that never reach 99.5%
training accuracy (C1 judges interpolating runs only).  A seed keeps a spread only if at least
two of its sigma_w remain.  ``horizon`` truncates every history at that epoch (the spread "had
training stopped at epoch E"; with a constant learning rate that is exactly the run of E epochs).

Clocks per group: T_SGD = (1/b) sum eta_k^2, T_L2 = lambda sum eta_k, T_adapt = sum eta_k at the
horizon (``theory.clocks``), and the clock that governs the optimiser.

Radial memory per group at a checkpoint (``radial_memory_of``, ``numerics.metrics.radial_memory``):
the norm slope there and the clock in units of the initial norm of the setting's radial law
(``law_of``, ``theory.radial``) at the smallest and largest sigma_w, read from the history row of
the checkpoint (its ``kernel_norm``, ``kernel_norms`` and cumulative ``clocks``).
"""

from __future__ import annotations

import functools
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from implicitbias.numerics.metrics.forgetting_metrics import (INTERPOLATION_THRESHOLD, norm_slope, run_summary,
                                                              selected_epoch, spread)
from implicitbias.numerics.metrics.radial_memory import RadialMemory, RadialRun, radial_memory, seed_slopes
from implicitbias.numerics.metrics.resampling import Interval, bootstrap, mean_ci
from implicitbias.theory import params
from implicitbias.theory.clocks import ADAPTIVE, CLOCKS
from implicitbias.theory.radial import derive
from implicitbias.validation.groups import group_by_setting, setting
from implicitbias.validation.records import EpochLog, RunRecord

__all__ = ["Run", "Group", "group_runs", "summarise", "GroupSummary", "RunRow", "SeedSpreads", "spread_of_means", "seed_tables", "seed_matrix", "mean_by_sigma",
           "family", "describe", "CHECKPOINTS", "memory_of", "slopes_of", "clock_at", "law_of", "radial_memory_of",
           "invariant_slopes"]

Run = tuple[dict, dict]  # (canonical run config, record)


def family(config: Mapping) -> str:
    """``adaptive`` (Adam, AdamW, RMSProp, sign, Muon), ``sgd_l2`` (SGD family with coupled decay) or ``sgd``."""
    if config["optimizer"] in ADAPTIVE:
        return "adaptive"
    return "sgd_l2" if config["weight_decay"] > 0 else "sgd"


def describe(config: Mapping) -> str:
    """A short name of a setting: optimiser, lr, batch, decay (and where it acts), schedule (unless constant), horizon, and
    for runs trained elsewhere (``validation.runs_format``) their arch and dataset labels."""
    c = config
    wd = f", L2 {c['weight_decay']:g}" if c["weight_decay"] and c["optimizer"] not in ("adamw", "muon") else (
        f", wd {c['weight_decay']:g}" if c["weight_decay"] else "")
    wd += " on scale-invariant kernels" if wd and c.get("decay_on") == "scale_invariant" else ""
    sched = f", {c['schedule']}" if c.get("schedule", "constant") != "constant" else ""
    where = ""
    if c.get("trained") == "elsewhere":  # validation.runs_format: a run of the user's own training code
        named = " ".join(c[k] for k in ("arch", "dataset") if c.get(k) not in (None, "unnamed"))
        where = f", {named} trained elsewhere" if named else ", trained elsewhere"
    return f"{c['optimizer']} lr {c['lr']:g}, b {c['batch_size']}{wd}{sched}, {c['epochs']} ep{where}"


@dataclass
class Group:
    """The runs of one setting (configs differing only in sigma_w and seed); its summaries
    (:func:`summarise`) are computed once per horizon and are kept here."""

    setting: dict
    runs: list[Run]
    summaries: dict[tuple[int, bool], GroupSummary] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def sigma_w(self) -> list[float]:
        return sorted({c["sigma_w"] for c, _ in self.runs})

    @property
    def seeds(self) -> list[int]:
        return sorted({c["seed"] for c, _ in self.runs})

    @property
    def label(self) -> str:
        return describe(self.setting)

    @functools.cached_property
    def records(self) -> list[RunRecord]:
        """The runs' records read by attribute (``validation.records``), in the order of ``runs``; read once."""
        return [RunRecord.from_dict(record) for _, record in self.runs]

    def typed_runs(self) -> list[tuple[dict, RunRecord]]:
        """``(config, record)`` of each run, the record typed."""
        return [(config, record) for (config, _), record in zip(self.runs, self.records)]

    @functools.cached_property
    def seed_halves(self) -> tuple[Group, Group]:
        """The runs of the first half of the group's sorted seeds (``len // 2`` of them) and of the
        rest, each a group of the same setting; built once, so each half's summaries are too."""
        first = set(self.seeds[: len(self.seeds) // 2])
        return (Group(self.setting, [(c, r) for c, r in self.runs if c["seed"] in first]),
                Group(self.setting, [(c, r) for c, r in self.runs if c["seed"] not in first]))


def group_runs(runs: Sequence[Run]) -> list[Group]:
    """``(config, record)`` pairs grouped by setting (first-seen order); missing records dropped."""
    present = [(c, r) for c, r in runs if r is not None]
    return [Group(setting(grp[0][0]), grp) for grp in group_by_setting(present, config=lambda run: run[0])]


def _truncate(record: RunRecord, horizon: int | None) -> tuple[list[EpochLog], int | None, str | None]:
    """The record's valid rows up to ``horizon`` and its divergence (epoch, reason) if it happened by then."""
    epoch = record.summary.diverged_epoch
    rows = [r for r in record.history if horizon is None or r.epoch <= horizon]
    if epoch is not None and (horizon is None or epoch <= horizon):
        return [r for r in rows if r.epoch != epoch], epoch, record.summary.diverged_reason or "non-finite values"
    return rows, None, None


def _interpolating_selected(rows: Sequence[EpochLog]) -> EpochLog | None:
    """The row of minimum validation loss among the interpolating checkpoints (training accuracy
    >= 99.5%; first on ties), None if the run never interpolates."""
    interpolating = [r for r in rows if r.train_acc >= INTERPOLATION_THRESHOLD and r.val_loss is not None]
    return min(interpolating, key=lambda r: r.val_loss) if interpolating else None


def _per_seed(values: Mapping[int, Mapping[float, float]], fn: Callable) -> dict[int, float]:
    out = {}
    for seed, by_sigma in values.items():
        if len(by_sigma) >= 2:
            s = sorted(by_sigma)
            out[seed] = fn(s, [by_sigma[k] for k in s])
    return out


@dataclass(frozen=True)
class RunRow:
    """One run of a group summary, up to the horizon: accuracies in points, norms, the interpolation
    epoch ``tau_interp`` (None: never reached 99.5% training accuracy), the selected epochs (minimum
    validation loss over every checkpoint, and among the interpolating ones), divergence, whether
    the run is ``kept`` in spreads and slopes, and ``curve`` = (epoch, train acc, test acc) per row."""

    sigma_w: float
    seed: int
    diverged_epoch: int | None
    diverged_reason: str | None
    tau_interp: int | None = None
    selected_test_acc: float | None = None
    selected_epoch: int | None = None
    interp_selected_epoch: int | None = None
    interp_selected_test_acc: float | None = None
    final_test_acc: float | None = None
    final_train_acc: float | None = None
    initial_norm: float | None = None
    final_norm: float | None = None
    kept: bool = False
    curve: tuple[tuple[int, float, float], ...] = ()

    @property
    def interpolates(self) -> bool:
        """Reached 99.5% training accuracy and did not diverge."""
        return self.tau_interp is not None and self.diverged_epoch is None


@dataclass(frozen=True)
class SeedSpreads:
    """One seed's spreads (selected, final; points) and norm slope; None where fewer than two sigma_w remain."""

    seed: int
    spread_selected: float | None
    spread_final: float | None
    norm_slope: float | None


@dataclass(frozen=True)
class GroupSummary:
    """The numbers of one group at one horizon (module docstring; accuracies and spreads in points):
    its runs (``RunRow``, by seed then sigma_w), the counts of runs, diverged and interpolating runs,
    the per-seed spreads and slope, the spreads of seed means and the mean norm slope with their CIs,
    the cumulative clocks at the horizon and the governing clock's name.  ``setting`` is the group's
    store config (``validation.groups.setting``)."""

    label: str
    setting: dict
    family: str
    horizon: int
    sigma_w: tuple[float, ...]
    seeds: tuple[int, ...]
    runs: tuple[RunRow, ...]
    interpolating_only: bool
    per_seed: tuple[SeedSpreads, ...]
    spread_selected: Interval
    spread_final: Interval
    norm_slope: Interval
    clocks: dict[str, float]
    governing: str | None

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    @property
    def n_diverged(self) -> int:
        return sum(r.diverged_epoch is not None for r in self.runs)

    @property
    def n_interpolated(self) -> int:
        return sum(r.interpolates for r in self.runs)

    @property
    def all_interpolate(self) -> bool:
        return all(r.interpolates for r in self.runs)


def _run_row(config: Mapping, record: RunRecord, horizon: int, interpolating_only: bool) -> tuple[list[EpochLog], RunRow]:
    """A run's valid rows up to ``horizon`` and its ``RunRow``."""
    rows, div_epoch, reason = _truncate(record, horizon)
    measured = {}
    if rows:
        s = run_summary([r.row() for r in rows])
        interp = _interpolating_selected(rows)
        measured = dict(tau_interp=s["tau_interp"], selected_test_acc=100 * s["selected_test_acc"],
                        selected_epoch=s["selected_epoch"], interp_selected_epoch=interp and interp.epoch,
                        interp_selected_test_acc=interp and 100 * interp.test_acc,
                        final_test_acc=100 * s["final_test_acc"], final_train_acc=100 * s["final_train_acc"],
                        initial_norm=s["initial_kernel_norm"], final_norm=s["final_kernel_norm"])
    kept = div_epoch is None and bool(rows) and (not interpolating_only or measured["tau_interp"] is not None)
    return rows, RunRow(config["sigma_w"], config["seed"], div_epoch, reason, **measured, kept=kept,
                        curve=tuple((r.epoch, r.train_acc, r.test_acc) for r in rows))


def summarise(group: Group, *, horizon: int | None = None, interpolating_only: bool = False) -> GroupSummary:
    """The ``GroupSummary`` of one group (module docstring) up to ``horizon`` (default and at most
    the group's epochs), of every run or (``interpolating_only``) of the runs that interpolate.

    Computed once per group, horizon and ``interpolating_only`` and kept in ``Group.summaries``
    (the claims judge the same groups); the summary is frozen, so every caller shares it.
    """
    horizon = group.setting["epochs"] if horizon is None else min(int(horizon), group.setting["epochs"])
    key = (horizon, bool(interpolating_only))
    if key not in group.summaries:
        group.summaries[key] = _summary(group, horizon, interpolating_only)
    return group.summaries[key]


def _summary(group: Group, horizon: int, interpolating_only: bool) -> GroupSummary:
    runs, selected, final, norms = [], {}, {}, {}
    clocks, governing = {c: math.nan for c in CLOCKS}, None
    for config, record in sorted(group.typed_runs(), key=lambda run: (run[0]["seed"], run[0]["sigma_w"])):
        rows, row = _run_row(config, record, horizon, interpolating_only)
        runs.append(row)
        if row.kept:
            selected.setdefault(row.seed, {})[row.sigma_w] = row.selected_test_acc
            final.setdefault(row.seed, {})[row.sigma_w] = row.final_test_acc
            norms.setdefault(row.seed, {})[row.sigma_w] = row.final_norm
        if rows and rows[-1].clocks is not None and rows[-1].epoch == horizon:
            clocks = dict(rows[-1].clocks)
        governing = record.summary.governing_clock or governing
    sel = _per_seed(selected, lambda s, v: spread(v))
    fin = _per_seed(final, lambda s, v: spread(v))
    slope = _per_seed(norms, norm_slope)
    with_spread = [k for k in sorted(selected) if len(selected[k]) >= 2]
    sigmas = group.sigma_w
    seeds = tuple(sorted({r.seed for r in runs}))
    return GroupSummary(
        label=group.label, setting=group.setting, family=family(group.setting), horizon=horizon,
        sigma_w=tuple(sigmas), seeds=seeds, runs=tuple(runs), interpolating_only=interpolating_only,
        per_seed=tuple(SeedSpreads(k, sel.get(k), fin.get(k), slope.get(k)) for k in seeds),
        spread_selected=bootstrap([_matrix([selected[k] for k in with_spread], sigmas)], spread_of_means),
        spread_final=bootstrap([_matrix([final[k] for k in with_spread], sigmas)], spread_of_means),
        norm_slope=mean_ci(list(slope.values())), clocks=clocks, governing=governing)


def _matrix(tables: Sequence[Mapping[float, float]], sigmas: Sequence[float]) -> np.ndarray:
    """One row per seed, one column per sigma_w (NaN where a seed lacks that sigma_w)."""
    return np.array([[t.get(s, math.nan) for s in sigmas] for t in tables], dtype=float).reshape(len(tables), len(sigmas))


def spread_of_means(rows: np.ndarray) -> np.ndarray:
    """max - min over sigma_w of the mean over seeds; ``rows`` (..., seeds, sigma_w), NaN = missing.

    A sigma_w missing from some seeds is averaged over the seeds that have it; NaN when fewer than
    two sigma_w remain.  Vectorised over leading axes (bootstrap batches).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: handled below
        means = np.nanmean(np.asarray(rows, dtype=float), axis=-2)
        spread_ = np.nanmax(means, axis=-1) - np.nanmin(means, axis=-1)
    return np.where((~np.isnan(means)).sum(-1) >= 2, spread_, np.nan)


def seed_matrix(summary: GroupSummary, key: str = "selected_test_acc", seeds: Sequence[int] | None = None) -> np.ndarray:
    """(seeds, sigma_w) matrix of a per-run quantity (a ``RunRow`` field) of the kept runs of a group
    summary (NaN: missing)."""
    tables = seed_tables(summary, key)
    return _matrix([tables.get(k, {}) for k in (sorted(tables) if seeds is None else seeds)], summary.sigma_w)


def seed_tables(summary: GroupSummary, key: str = "selected_test_acc") -> dict[int, dict[float, float]]:
    """{seed: {sigma_w: value}} of a per-run quantity (a ``RunRow`` field) of the kept runs of a group summary."""
    out: dict[int, dict[float, float]] = {}
    for r in summary.runs:
        value = getattr(r, key)
        if r.kept and value is not None:
            out.setdefault(r.seed, {})[r.sigma_w] = value
    return out


CHECKPOINTS = {  # the checkpoint a claim judges -> the per-run test accuracy it reads (a RunRow field)
    "interpolating": "interp_selected_test_acc",  # min validation loss among checkpoints with >= 99.5% train acc
    "all": "selected_test_acc",  # min validation loss over every checkpoint
    "end": "final_test_acc",  # the last epoch
}


def memory_of(summary: GroupSummary, checkpoint: str = "interpolating", seed: int = 0):
    """``numerics.metrics.memory_stats.memory`` of a group summary's seed x sigma_w table of test
    accuracy (points) at ``checkpoint`` (a key of ``CHECKPOINTS``; runs without it are missing)."""
    from implicitbias.numerics.metrics.memory_stats import memory

    return memory(seed_matrix(summary, CHECKPOINTS[checkpoint], summary.seeds), seed=seed)


_CHECKPOINT_EPOCHS = {"interpolating": "interp_selected_epoch", "all": "selected_epoch"}  # "end": the horizon


def clock_at(group: Group, summary: GroupSummary, checkpoint: str = "interpolating", clock: str | None = None) -> float:
    """The cumulative ``clock`` (default: the group's governing one, ``theory.clocks``) at
    ``checkpoint`` (a key of ``CHECKPOINTS``): the median over the group's kept runs of its value at
    the epoch each run's checkpoint selects (``end``: the horizon), read from the runs' history
    rows (the runs of a setting share a schedule, so an epoch has one clock); NaN when no kept run
    has that checkpoint.  ``summary`` is ``summarise(group)`` (or with its ``horizon``)."""
    name = clock or summary.governing
    by_epoch: dict[int, float] = {}
    for record in group.records:
        for row in record.history:
            if name in (row.clocks or {}):
                by_epoch.setdefault(row.epoch, row.clocks[name])
    epochs = [summary.horizon if checkpoint == "end" else getattr(r, _CHECKPOINT_EPOCHS[checkpoint])
              for r in summary.runs if r.kept]
    values = [by_epoch[e] for e in epochs if e in by_epoch]
    return float(np.median(values)) if values else math.nan


def slopes_of(summary: GroupSummary):
    """The seed x sigma_w table of log final norms of a group summary against log sigma_w
    (``numerics.metrics.memory_stats.SlopeTable``; its ``values`` are the per-seed log-norm slopes of
    the seeds with two or more kept sigma_w, ``per_seed``'s ``norm_slope``)."""
    from implicitbias.numerics.metrics.memory_stats import SlopeTable

    logs = np.log(seed_matrix(summary, "final_norm", summary.seeds))
    return SlopeTable(tuple(math.log(s) for s in summary.sigma_w), tuple(tuple(map(float, row)) for row in logs))


def mean_by_sigma(summary: GroupSummary, key: str) -> dict[float, float]:
    """Mean over seeds of a per-run quantity (a ``RunRow`` field; kept runs) for each sigma_w."""
    out: dict[float, list] = {}
    for r in summary.runs:
        value = getattr(r, key)
        if r.kept and value is not None:
            out.setdefault(r.sigma_w, []).append(value)
    return {s: float(np.mean(v)) for s, v in sorted(out.items())}



def law_of(config: Mapping) -> str:
    """The radial law (``theory.radial``) of a setting's scale-invariant kernels: ``adamw`` (AdamW, or
    Muon, with decoupled decay), ``adam`` (the other adaptive ones), ``heavy_ball_l2`` / ``sgd_l2``
    (SGD family with coupled decay, with / without momentum) or ``sgd``."""
    fam = family(config)
    if fam == "adaptive":
        return "adamw" if config["weight_decay"] > 0 and config["optimizer"] in ("adamw", "muon") else "adam"
    if fam == "sgd_l2":
        return "heavy_ball_l2" if _momentum(config) > 0 else "sgd_l2"
    return "sgd"


def _momentum(config: Mapping) -> float:
    from implicitbias.numerics.optim.optimizers import DEFAULT_MOMENTUM  # torch: imported when needed

    if config["optimizer"] == "sgd":
        return 0.0
    return DEFAULT_MOMENTUM.get(config["optimizer"], 0.0) if config.get("momentum") is None else config["momentum"]


@functools.lru_cache(maxsize=64)
def _kernel_sizes(key: str) -> tuple[tuple[str, int], ...] | None:
    """(name, D) of the scale-invariant kernels of the run config ``key`` (JSON): D its entries, or
    its rows for Muon (its step O sqrt(max(1, rows / cols)) has ||.||_F^2 = rows).  Read off the
    model ``validation.run.build`` makes (the data set is loaded for its input shape); None for a run
    trained elsewhere or whose data files are not here."""
    import torch

    from implicitbias.validation.data import DataUnavailable
    from implicitbias.validation.init import kernel_modules, scale_invariant_kernels
    from implicitbias.validation.run import build, dataset_for

    config = json.loads(key)
    if config.get("trained") == "elsewhere":
        return None
    try:
        model = build(config, dataset_for(config), torch.device("cpu"), torch.float32)
    except DataUnavailable:
        return None
    invariant = set(scale_invariant_kernels(model))
    rows = config["optimizer"] == "muon"
    return tuple((n, m.weight.shape[0] if rows else m.weight.numel()) for n, m in kernel_modules(model) if n in invariant)


def _joint_norm(row: EpochLog, names: Sequence[str]) -> float:
    """sqrt(sum of squares) of the kernels ``names`` in a history row (NaN if it lacks one)."""
    norms = row.kernel_norms or {}
    if not names or any(norms.get(n) is None for n in names):
        return math.nan
    return math.sqrt(sum(norms[n] ** 2 for n in names))


def _checkpoint_row(rows: Sequence[EpochLog], checkpoint: str) -> EpochLog | None:
    """The history row a claim judges at ``checkpoint`` (``CHECKPOINTS``; None if the run has none)."""
    if checkpoint == "interpolating":
        return _interpolating_selected(rows)
    if checkpoint == "end":
        return rows[-1]
    epoch = selected_epoch([r.row() for r in rows])
    return next(r for r in rows if r.epoch == epoch)


def _checkpoint_rows(group: Group, checkpoint: str):
    """``(config, first row, row at checkpoint)`` of each run of ``group`` that did not diverge and has
    ``checkpoint`` (a key of ``CHECKPOINTS``)."""
    params.choice("checkpoint", checkpoint, CHECKPOINTS)
    for config, record in group.typed_runs():
        rows, diverged, _ = _truncate(record, None)
        row = _checkpoint_row(rows, checkpoint) if rows and diverged is None else None
        if row is not None:
            yield config, rows[0], row


def _invariant_kernels(group: Group) -> tuple[tuple[str, int], ...] | None:
    """``_kernel_sizes`` of a group's setting (its first run at sigma_w 1, seed 0)."""
    first = {**group.runs[0][0], "sigma_w": 1.0, "seed": 0}
    return _kernel_sizes(json.dumps(first, sort_keys=True, default=str))


def _radial_runs(group: Group, checkpoint: str) -> list[RadialRun]:
    """Each run of ``group`` at ``checkpoint`` (a key of ``CHECKPOINTS``) as a ``RadialRun``: its total
    kernel norm there, the scale-invariant kernels' joint norm at initialisation and there (NaN where
    a record does not say which kernels those are), their size, the radial law's clock and the
    momentum; diverged runs and runs without the checkpoint left out."""
    clock = derive(law_of(group.setting)).clock
    sizes = _invariant_kernels(group)
    names = [n for n, _ in sizes or ()]
    size = float(sum(d for _, d in sizes)) if sizes else math.nan
    runs = []
    for config, first, row in _checkpoint_rows(group, checkpoint):
        clocks = row.clocks or {}
        t = config["batch_size"] * clocks.get("T_SGD", math.nan) if clock == "sum eta^2" else clocks.get(clock, math.nan)
        runs.append(RadialRun(config["sigma_w"], config["seed"], row.kernel_norm, _joint_norm(first, names),
                              _joint_norm(row, names), size, t, _momentum(config)))
    return runs


def invariant_slopes(group: Group, checkpoint: str = "end") -> dict[int, float]:
    """Per seed, d log ||W_inv|| / d log sigma_w at ``checkpoint`` (a key of ``CHECKPOINTS``): the joint
    norm of the scale-invariant kernels, the quantity the radial laws describe (the total kernel norm
    where a record does not say which kernels those are, e.g. runs trained elsewhere); diverged runs
    and runs without the checkpoint left out; seeds with at least two sigma_w (``radial_memory.seed_slopes``)."""
    return seed_slopes(_radial_runs(group, checkpoint))


def radial_memory_of(group: Group, checkpoint: str = "interpolating") -> RadialMemory | None:
    """The radial memory (``numerics.metrics.radial_memory``) of a group's runs at ``checkpoint`` (a key
    of ``CHECKPOINTS``): the norms and clocks of each run's row there (``_radial_runs``); None when no
    run has it.  Muon's X is the realised one (``radial_memory``'s ``measured``)."""
    runs = _radial_runs(group, checkpoint)
    return radial_memory(law_of(group.setting), checkpoint, runs,
                         measured=group.setting["optimizer"] == "muon") if runs else None
