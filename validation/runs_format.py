"""Runs trained elsewhere: the documented run format, its import, and the record both share with
``validation.meter`` (Spec B, section 1, on a researcher's own training code).

The format (one row per run and evaluated epoch; CSV, Parquet or JSON lines, read with pandas):

    required  run_id, sigma_w, seed, optimizer, batch_size, weight_decay, n_train, epoch, lr,
              train_acc, val_loss, val_acc, test_acc, kernel_norm
    optional  schedule, train_loss, test_loss, dataset, arch, num_classes, T_SGD, T_L2, T_adapt,
              and one column ``kernel_norm.<layer>`` per kernel (its ||W||_F)

``sigma_w``, ``seed``, ``optimizer`` (one of ``theory.clocks.OPTIMIZERS``), ``batch_size`` (b),
``weight_decay`` (lambda), ``n_train`` (N), ``schedule``, ``dataset``, ``arch`` and
``num_classes`` hold the same value on every row of a run.  ``epoch`` counts epochs from 1 (0: the
initialisation, optional); each at most once per run.  Accuracies are fractions in [0, 1], losses
cross-entropies, ``kernel_norm`` the total sqrt(sum_l ||W_l||_F^2) over the kernels (conv and
linear weights) that sigma_w scaled.  No required value may be missing or NaN (a run that
diverged: leave its epochs from the divergence on out); the optional ``schedule``, losses, labels and
``num_classes`` may be left empty (not given).

How the clocks T_SGD = (1/b) sum eta_k^2, T_L2 = lambda sum eta_k, T_adapt = sum eta_k are
obtained, in this order (the record says which: ``summary.clocks_from``):

1. ``T_SGD``, ``T_L2``, ``T_adapt`` columns (all three): the cumulative clocks at the end of each
   epoch as recorded per step during training (``ForgettingMeter.rows`` writes them); ``lr`` is then
   the epoch's largest rate, and only labels and groups the run.
2. a ``schedule`` column (one of ``theory.schedules.SCHEDULES``): reconstructed from that schedule
   with peak rate ``lr`` over ceil(N / b) steps per epoch (``theory.clocks.forgetting_clocks``).
3. otherwise ``lr`` is the rate of every step of its epoch (an epoch-wise scheduler), so every
   epoch 1..E must be present; reconstructed with ceil(N / b) steps per epoch.

Bad input is one ``ParameterError`` naming the file, the row (1-based, counting data rows) and
the column.  A run becomes a record like those of ``validation.run.execute`` (same history rows
and summary, ``summary.trained = "elsewhere"``, its ``run_id`` and ``clocks_from``) under the
config :func:`config_of` (``describe``-able by the analysis: optimiser, lr = the peak rate,
batch, decay, schedule, epochs), stored as kind ``KIND`` with code ``CODE`` so that
``implicitbias analyse`` judges them beside the package's own runs.  Divergence: the package's
rule (``validation.run.divergence``) where a run gives ``train_loss`` and ``num_classes``,
else a non-finite value (the meter's records).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from implicitbias.numerics.metrics.forgetting_metrics import run_summary
from implicitbias.theory import params
from implicitbias.theory.clocks import CLOCKS, MAX_RATE, OPTIMIZERS, forgetting_clocks, governing_clock, steps_per_epoch
from implicitbias.theory.schedules import SCHEDULES, schedule
from implicitbias.validation.groups import setting_key
from implicitbias.validation.records import EpochLog, RunRecord, RunSummary
from implicitbias.validation.run import divergence, warmup_epochs

__all__ = ["KIND", "CODE", "REQUIRED", "OPTIONAL", "NORM_PREFIX", "config_of", "history_row", "build_record",
           "read_runs", "store_runs", "import_runs", "imported_runs", "clocks_line"]

KIND = "validation.imported_run"
CODE = "run-format-1"  # the format's version: records of a run trained elsewhere depend on no code of this package
REQUIRED = ("run_id", "sigma_w", "seed", "optimizer", "batch_size", "weight_decay", "n_train", "epoch", "lr",
            "train_acc", "val_loss", "val_acc", "test_acc", "kernel_norm")
OPTIONAL = ("schedule", "train_loss", "test_loss", "dataset", "arch", "num_classes", *CLOCKS)
NORM_PREFIX = "kernel_norm."
MAY_BE_EMPTY = ("schedule", "train_loss", "test_loss", "dataset", "arch", "num_classes")  # an empty cell: not given
PER_RUN = ("sigma_w", "seed", "optimizer", "batch_size", "weight_decay", "n_train", "schedule", "dataset", "arch",
           "num_classes")
READERS = {".csv": "read_csv", ".parquet": "read_parquet", ".jsonl": "read_json", ".ndjson": "read_json"}
FROM_STEPS = "recorded per step"


def config_of(*, sigma_w: float, seed: int, optimizer: str, batch_size: int, weight_decay: float, n_train: int,
              epochs: int, lr: float, schedule: str, lr_per_epoch: Sequence[float] | None = None,
              dataset: str | None = None, arch: str | None = None) -> dict:
    """The config a run trained elsewhere is stored and grouped under: the keys the analysis reads
    (``validation.analysis.describe``, ``claims.forgetting.roles``) and ``trained = "elsewhere"``.
    ``lr`` is the peak rate, ``schedule`` a name, ``per epoch`` or ``recorded`` (the meter's);
    ``lr_per_epoch`` (mean rate of each epoch) tells apart runs of one peak rate whose schedules
    differ."""
    return {"trained": "elsewhere", "dataset": dataset or "unnamed", "arch": arch or "unnamed", "width": 1.0,
            "optimizer": optimizer, "lr": lr, "schedule": schedule,
            "lr_per_epoch": None if lr_per_epoch is None else list(lr_per_epoch), "batch_size": batch_size,
            "weight_decay": weight_decay, "epochs": epochs, "n_train": n_train, "sigma_w": sigma_w, "seed": seed}


def history_row(epoch: int, metrics: Mapping, norms: Mapping[str, float], clocks: Mapping[str, float]) -> dict:
    """One history row as ``validation.run.train`` writes it (``validation.records.EpochLog.row``, no seconds): the metrics (``train_loss`` and
    ``test_loss`` None when not given), ``kernel_norm`` (total, as given in ``norms["total"]``),
    ``kernel_norms`` per layer and the cumulative ``clocks``."""
    return EpochLog(epoch, metrics.get("train_loss"), metrics["train_acc"], val_loss=metrics["val_loss"],
                    val_acc=metrics["val_acc"], test_loss=metrics.get("test_loss"), test_acc=metrics["test_acc"],
                    kernel_norm=norms["total"], kernel_norms={k: v for k, v in norms.items() if k != "total"},
                    clocks=dict(clocks)).row()


def _why_diverged(row: Mapping, initial_loss: float, num_classes: int | None, warmup: int) -> str | None:
    if row["train_loss"] is not None and num_classes is not None:
        # a test loss not given is not measured (the engine's rows hold None only for a non-finite one)
        measured = row if row["test_loss"] is not None else {k: v for k, v in row.items() if k != "test_loss"}
        return divergence(measured, initial_loss=initial_loss, num_classes=num_classes, epoch=row["epoch"],
                          warmup=warmup)
    values = [row[k] for k in ("train_acc", "val_loss", "val_acc", "test_acc", "kernel_norm")]
    return None if all(v is not None and math.isfinite(v) for v in values) else "non-finite loss, accuracy or weights"


def build_record(history: Sequence[dict], *, optimizer: str, weight_decay: float, n_train: int, steps_per_epoch: int,
                 run_id: str, clocks_from: str, num_classes: int | None = None) -> dict:
    """The record of a run trained elsewhere from its history rows (:func:`history_row`, epoch
    order): ``validation.run.train``'s status, summary and history, the first row where the run
    diverged ending it, plus ``run_id``, ``trained`` and ``clocks_from`` in the summary."""
    epochs = history[-1]["epoch"]
    warmup = warmup_epochs(epochs)
    initial_loss = history[0]["train_loss"] if history[0]["epoch"] == 0 and history[0]["train_loss"] else math.inf
    kept, diverged = [], (None, None)
    for row in history:
        why = _why_diverged(row, initial_loss, num_classes, warmup)
        if why:
            diverged = (row["epoch"], why)
            break
        kept.append(row)
    summary = RunSummary(
        **(run_summary(kept) if kept else {}), diverged_epoch=diverged[0], diverged_reason=diverged[1],
        epochs_run=history[-1]["epoch"] if diverged[0] is None else diverged[0], clocks=dict(history[-1]["clocks"]),
        governing_clock=governing_clock(optimizer, weight_decay), steps_per_epoch=steps_per_epoch, n_train=n_train,
        final_kernel_norms=(kept or history)[-1]["kernel_norms"], run_id=run_id, trained="elsewhere",
        clocks_from=clocks_from,
    )
    history = kept + ([] if diverged[0] is None else [next(r for r in history if r["epoch"] == diverged[0])])
    status = "done" if diverged[0] is None else "diverged"
    return RunRecord(status, summary, tuple(map(EpochLog.from_row, history))).to_dict()


# -- reading a file of runs ------------------------------------------------------------------------


def _frame(path: Path):
    """The file as a pandas DataFrame of Python objects (``ParameterError`` naming the file when it
    cannot be read)."""
    if not path.is_file():
        raise params.ParameterError(f"runs file must be an existing CSV, Parquet or JSON-lines file; {path} is not")
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise params.ParameterError(f"runs file must end in {', '.join(READERS)}; got {path.name}")
    import pandas as pd

    if reader == "read_parquet":
        try:
            import pyarrow  # noqa: F401  (pandas reads Parquet through it)
        except ImportError:
            raise params.ParameterError(f"{path}: reading Parquet needs pyarrow: pip install 'implicitbias[parquet]' "
                                        "(or save the runs as CSV)") from None
    try:
        frame = getattr(pd, reader)(path, **({"lines": True} if reader == "read_json" else {}))
    except Exception as exc:  # a malformed file, whatever the parser's exception: named, one line
        text = " ".join(str(exc).split())[:200]
        raise params.ParameterError(f"{path}: not a {path.suffix[1:]} file of runs pandas can read ({text})") from None
    return frame.astype(object).where(frame.notna(), None)


def _cell(where: str, column: str, value):
    """One value of the file checked against its column's range (``where``: file and row)."""
    name = f"{where}, column {column}"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise params.ParameterError(f"{name} must hold a value, got none (missing or NaN)")
    if column in ("train_acc", "val_acc", "test_acc"):
        return params.real(name, value, minimum=0.0, maximum=1.0)
    if column in ("train_loss", "val_loss", "test_loss", "weight_decay", *CLOCKS):
        return params.real(name, value, minimum=0.0)
    if column == "lr":  # the clocks' bound on a rate, checked here so that the error names file, row and column
        return params.real(name, value, minimum=0.0, open_minimum=True, maximum=MAX_RATE)
    if column in ("sigma_w", "kernel_norm") or column.startswith(NORM_PREFIX):
        return params.real(name, value, minimum=0.0, open_minimum=True)
    if column == "seed":
        return params.seed(name, value)
    if column in ("batch_size", "n_train"):
        return params.integer(name, value, minimum=1)
    if column == "num_classes":
        return params.integer(name, value, minimum=2)
    if column == "epoch":
        return params.integer(name, value, minimum=0, maximum=10**6)
    if column == "optimizer":
        return params.choice(name, value, OPTIMIZERS)
    if column == "schedule":
        return params.choice(name, value, SCHEDULES)
    if not isinstance(value, str) or not value.strip():  # run_id, dataset, arch: labels
        if column == "run_id" and isinstance(value, int | float) and not isinstance(value, bool):
            return str(int(value)) if float(value).is_integer() else str(value)
        raise params.ParameterError(f"{name} must be a non-empty name, got {value!r}")
    return value.strip()


def _check_columns(path: Path, columns: Sequence[str]) -> None:
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise params.ParameterError(f"{path}: column {missing[0]} is missing (required: {', '.join(REQUIRED)})")
    unknown = [c for c in columns if c not in REQUIRED + OPTIONAL and not str(c).startswith(NORM_PREFIX)]
    if unknown:
        raise params.ParameterError(f"{path}: column {unknown[0]!r} is not part of the run format (columns: "
                                    f"{', '.join(REQUIRED + OPTIONAL)} and {NORM_PREFIX}<layer>)")
    clocks = [c for c in CLOCKS if c in columns]
    if clocks and len(clocks) < len(CLOCKS):
        raise params.ParameterError(f"{path}: clock columns come together ({', '.join(CLOCKS)}); "
                                    f"{next(c for c in CLOCKS if c not in columns)} is missing")


def _check_run_rows(path: Path, run_id: str, rows: list[tuple[int, dict]]) -> None:
    """One value per run in every ``PER_RUN`` column, and each epoch once (``ParameterError`` naming the
    file, row and column otherwise)."""
    first_n, first = rows[0]
    for n, row in rows[1:]:
        for column in PER_RUN:
            if row.get(column) != first.get(column):
                raise params.ParameterError(
                    f"{path} row {n}, column {column}: run {run_id} must keep one value on every row, got "
                    f"{row.get(column)!r} here and {first.get(column)!r} on row {first_n}")
    seen: dict[int, int] = {}
    for n, row in rows:
        if row["epoch"] in seen:
            raise params.ParameterError(f"{path} row {n}, column epoch: run {run_id} has epoch {row['epoch']} twice "
                                        f"(rows {seen[row['epoch']]} and {n})")
        seen[row["epoch"]] = n


def _run_of(path: Path, run_id: str, rows: list[tuple[int, dict]]) -> tuple[dict, dict]:
    """(config, record) of one run's checked rows ``(row number, values)``."""
    first_n, first = rows[0]
    _check_run_rows(path, run_id, rows)
    rows = sorted(rows, key=lambda nr: nr[1]["epoch"])
    epochs = rows[-1][1]["epoch"]
    if epochs < 1:
        raise params.ParameterError(f"{path} row {first_n}, column epoch: run {run_id} must have an epoch >= 1 "
                                    "(0 is the initialisation)")
    b, n_train, opt, wd = first["batch_size"], first["n_train"], first["optimizer"], first["weight_decay"]
    if b > n_train:
        raise params.ParameterError(f"{path} row {first_n}, column batch_size: must be <= n_train ({n_train}), got {b}")
    spe = steps_per_epoch(n_train, b)
    lr_of = {row["epoch"]: row["lr"] for _, row in rows if row["epoch"] >= 1}
    lr_per_epoch = None
    if "T_SGD" in first:
        clocks_from, peak, sched = FROM_STEPS, max(lr_of.values()), "recorded"
        lr_per_epoch = [lr_of[e] for e in sorted(lr_of)]
        cumulative = {e: {c: row[c] for c in CLOCKS} for _, row in rows for e in [row["epoch"]]}
    else:
        if first.get("schedule") is not None:
            peak, sched = first["lr"], first["schedule"]
            for n, row in rows:
                if row["lr"] != peak:
                    raise params.ParameterError(f"{path} row {n}, column lr: with a schedule, lr is the peak rate on "
                                                f"every row of run {run_id}; got {row['lr']:g} and {peak:g}")
            eta = schedule(sched, peak, spe * epochs)
            clocks_from = f"reconstructed from the {sched} schedule (peak lr {peak:g}, {spe} steps per epoch)"
        else:
            absent = [e for e in range(1, epochs + 1) if e not in lr_of]
            if absent:
                raise params.ParameterError(
                    f"{path} row {first_n}, column epoch: run {run_id} has no row for epoch {absent[0]}; without a "
                    f"schedule or clock columns every epoch 1..{epochs} needs its lr")
            peak = max(lr_of.values())
            constant = len(set(lr_of.values())) == 1
            sched = "constant" if constant else "per epoch"
            lr_per_epoch = None if constant else [lr_of[e] for e in range(1, epochs + 1)]
            eta = (lambda k: lr_of[k // spe + 1])
            clocks_from = f"reconstructed from the per-epoch learning rates ({spe} steps per epoch)"
        clocks = forgetting_clocks(opt, eta, b, n_train, epochs, wd)
        cumulative = {e: {c: clocks.cumulative[c][e - 1] for c in CLOCKS} for e in range(1, epochs + 1)}
    cumulative[0] = dict.fromkeys(CLOCKS, 0.0)
    history = []
    for _, row in rows:
        norms = {k[len(NORM_PREFIX):]: v for k, v in row.items() if k.startswith(NORM_PREFIX)}
        history.append(history_row(row["epoch"], row, {**norms, "total": row["kernel_norm"]}, cumulative[row["epoch"]]))
    config = config_of(sigma_w=first["sigma_w"], seed=first["seed"], optimizer=opt, batch_size=b, weight_decay=wd,
                       n_train=n_train, epochs=epochs, lr=peak, schedule=sched, lr_per_epoch=lr_per_epoch,
                       dataset=first.get("dataset"), arch=first.get("arch"))
    record = build_record(history, optimizer=opt, weight_decay=wd, n_train=n_train, steps_per_epoch=spe,
                          run_id=run_id, clocks_from=clocks_from, num_classes=first.get("num_classes"))
    return config, record


def read_runs(path: str | os.PathLike) -> list[tuple[dict, dict]]:
    """The runs of a file in the run format (module docstring) as ``(config, record)`` pairs, in the
    order their ids first appear; every value checked (``ParameterError`` naming file, row, column)."""
    if not isinstance(path, str | os.PathLike) or not str(path).strip():
        raise params.ParameterError(f"path must be the path of a CSV, Parquet or JSON-lines file, got {path!r}")
    path = Path(path).expanduser()
    frame = _frame(path)
    columns = [str(c) for c in frame.columns]
    _check_columns(path, columns)
    if frame.empty:
        raise params.ParameterError(f"{path}: holds no rows (one row per run and epoch)")
    runs: dict[str, list[tuple[int, dict]]] = {}
    for n, values in enumerate(frame.to_dict("records"), start=1):
        where = f"{path} row {n}"
        row = {str(c): _cell(where, str(c), v) for c, v in values.items() if not (str(c) in MAY_BE_EMPTY and v is None)}
        runs.setdefault(row["run_id"], []).append((n, row))
    pairs, seen = [], {}
    for run_id, rows in runs.items():
        config, record = _run_of(path, run_id, rows)
        key = setting_key(config, free=())
        if key in seen:
            raise params.ParameterError(
                f"{path} row {rows[0][0]}, column run_id: runs {seen[key]} and {run_id} have the same setting, sigma_w "
                "and seed (give them different seeds, or drop one)")
        seen[key] = run_id
        pairs.append((config, record))
    return pairs


def store_runs(pairs: Sequence[tuple[dict, dict]], store) -> None:
    """Put checked runs (:func:`read_runs`' pairs) in ``store`` (kind ``KIND``, code ``CODE``; a run
    stored again replaces itself)."""
    store.require_writable(f"importing {len(pairs)} runs")
    for config, record in pairs:
        store.put(KIND, config, record, code=CODE)


def import_runs(path: str | os.PathLike, store) -> list[tuple[dict, dict]]:
    """Read the runs of ``path`` (:func:`read_runs`, every row checked before anything is stored)
    and put them in ``store`` (:func:`store_runs`)."""
    pairs = read_runs(path)
    store_runs(pairs, store)
    return pairs


def imported_runs(store) -> list[tuple[dict, dict]]:
    """Every run trained elsewhere in ``store`` (imported or saved by the meter), oldest first."""
    return store.records(KIND, code=CODE)


def clocks_line(runs: Sequence[tuple[dict, Mapping]]) -> str:
    """One sentence on the runs trained elsewhere among ``runs``: how many and how their clocks were
    obtained ("" when there are none)."""
    ways: dict[str, int] = {}
    for _, record in runs:
        if record and record["summary"].get("trained") == "elsewhere":
            way = record["summary"]["clocks_from"]
            way = FROM_STEPS if way == FROM_STEPS else way.split(" (")[0]
            ways[way] = ways.get(way, 0) + 1
    if not ways:
        return ""
    total = sum(ways.values())
    how = "; ".join(f"{n} {way}" for way, n in ways.items())
    return (f"{total} of these runs were trained elsewhere (imported or recorded by ForgettingMeter), not by this "
            f"package; their clocks were {how}.")

