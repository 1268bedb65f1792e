"""Runs trained elsewhere (validation/runs_format.py, ``implicitbias import``, ``ib.import_runs``):
clocks reconstructed from a schedule or per-epoch rates against the calculator on a schedule built
here; malformed files refused in one line naming file, row and column; imported runs judged by
``implicitbias analyse`` with the statement of where they come from."""

import math
import subprocess
import sys

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import implicitbias as ib
from implicitbias.theory.clocks import CLOCKS, forgetting_clocks
from implicitbias.theory.params import ParameterError
from implicitbias.theory.schedules import schedule
from implicitbias.validation.runs_format import read_runs



def _rows(*, optimizers=(("sgd", 0.01),), sigmas=(0.25, 1.0, 2.0), seeds=(0, 1, 2), epochs=4, **extra):
    """A synthetic file's rows: test accuracy falls with sigma_w for SGD (memory), not for Adam."""
    rows = []
    for opt, lr in optimizers:
        for s in sigmas:
            for seed in seeds:
                for e in range(epochs + 1):
                    rows.append(dict(
                        run_id=f"{opt}-{s}-{seed}", sigma_w=s, seed=seed, optimizer=opt, batch_size=32,
                        weight_decay=0.0, n_train=1000, epoch=e, lr=lr, train_acc=min(1.0, 0.3 + 0.25 * e),
                        val_loss=1.0 / (e + 1) + 0.01 * seed, val_acc=0.5 + 0.1 * e,
                        test_acc=0.5 + 0.05 * e - (0.1 * s if opt == "sgd" else 0.0) + 0.001 * seed,
                        kernel_norm=10 * s + e, **{"kernel_norm.conv1": 5 * s, "kernel_norm.fc": 2.0}, **extra))
    return rows


def _write(tmp_path, rows, name="runs.csv"):
    path = tmp_path / name
    frame = pd.DataFrame(rows)
    if name.endswith(".csv"):
        frame.to_csv(path, index=False)
    elif name.endswith(".jsonl"):
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path)
    return path


def test_per_epoch_rates_give_the_calculators_clocks(tmp_path):
    rows = [r for r in _rows(sigmas=(1.0,), seeds=(0,)) if r["epoch"] >= 1]
    rates = {1: 0.1, 2: 0.1, 3: 0.01, 4: 0.001}  # an epoch-wise step schedule
    for r in rows:
        r["lr"], r["weight_decay"] = rates[r["epoch"]], 5e-4
    [(config, record)] = read_runs(_write(tmp_path, rows))
    spe = 32  # ceil(1000 / 32)
    expected = forgetting_clocks("sgd", lambda k: rates[k // spe + 1], 32, 1000, 4, 5e-4)
    assert [r["clocks"] for r in record["history"]] == [{c: expected.cumulative[c][e] for c in CLOCKS}
                                                        for e in range(4)]
    s = record["summary"]
    assert s["clocks_from"].startswith("reconstructed from the per-epoch learning rates") and s["trained"] == "elsewhere"
    assert s["governing_clock"] == "T_L2" and s["steps_per_epoch"] == spe and s["n_train"] == 1000
    assert config["schedule"] == "per epoch" and config["lr"] == 0.1 and config["lr_per_epoch"] == [0.1, 0.1, 0.01, 0.001]
    assert record["history"][0]["kernel_norms"] == {"conv1": 5.0, "fc": 2.0}


@pytest.mark.parametrize("name", ["cosine", "warmup", "onecycle"])
def test_a_named_schedule_gives_the_calculators_clocks(tmp_path, name):
    rows = [r for r in _rows(sigmas=(1.0,), seeds=(0,), schedule=name)]
    for r in rows:
        r["lr"] = 0.2
    [(config, record)] = read_runs(_write(tmp_path, rows, "runs.jsonl"))
    expected = forgetting_clocks("sgd", schedule(name, 0.2, 32 * 4), 32, 1000, 4)
    assert record["summary"]["clocks"] == {c: expected.cumulative[c][-1] for c in CLOCKS}
    assert record["history"][0]["clocks"] == dict.fromkeys(CLOCKS, 0.0)
    assert config["schedule"] == name and record["summary"]["clocks_from"].startswith(f"reconstructed from the {name}")


def test_recorded_clocks_are_kept_and_epochs_may_be_thinned(tmp_path):
    rows = [r for r in _rows(sigmas=(1.0,), seeds=(0,)) if r["epoch"] in (0, 2, 4)]
    for r in rows:
        r.update(T_SGD=1e-4 * r["epoch"], T_L2=0.0, T_adapt=0.1 * r["epoch"])
    [(_, record)] = read_runs(_write(tmp_path, rows, "runs.parquet"))
    assert [r["clocks"]["T_adapt"] for r in record["history"]] == [0.0, 0.2, 0.4]
    assert record["summary"]["clocks_from"] == "recorded per step"


BAD = {
    "missing column": (lambda rows: [{k: v for k, v in r.items() if k != "val_loss"} for r in rows],
                       r"runs.csv: column val_loss is missing \(required: run_id"),
    "NaN": (lambda rows: [{**r, "val_acc": math.nan} if i == 6 else r for i, r in enumerate(rows)],
            r"runs.csv row 7, column val_acc must hold a value, got none \(missing or NaN\)"),
    "duplicate epoch": (lambda rows: rows + [rows[2]], r"runs.csv row 46, column epoch: run sgd-0.25-0 has epoch 2 twice "
                                                       r"\(rows 3 and 46\)"),
    "unknown optimiser": (lambda rows: [{**r, "optimizer": "lamb"} if i == 3 else r for i, r in enumerate(rows)],
                          r"runs.csv row 4, column optimizer must be one of sgd, .*; got 'lamb'"),
    "unknown column": (lambda rows: [{**r, "val_los": 1.0} for r in rows], r"column 'val_los' is not part of the run format"),
    "percent accuracy": (lambda rows: [{**r, "test_acc": 87.0} if i == 1 else r for i, r in enumerate(rows)],
                         r"runs.csv row 2, column test_acc must be a finite number >= 0 and <= 1, got 87"),
    "changing batch": (lambda rows: [{**r, "batch_size": 64} if i == 4 else r for i, r in enumerate(rows)],
                       r"runs.csv row 5, column batch_size: run sgd-0.25-0 must keep one value on every row"),
    "missing epoch": (lambda rows: [r for i, r in enumerate(rows) if i != 2],
                      r"run sgd-0.25-0 has no row for epoch 2; without a schedule or clock columns"),
    "two runs one setting": (lambda rows: [{**r, "seed": 0} for r in rows],
                             r"runs sgd-0.25-0 and sgd-0.25-1 have the same setting, sigma_w and seed"),
    "text in a number": (lambda rows: [{**r, "sigma_w": "big"} if i == 0 else r for i, r in enumerate(rows)],
                         r"runs.csv row 1, column sigma_w must be a finite number > 0, got 'big'"),
    "one clock column": (lambda rows: [{**r, "T_SGD": 0.1} for r in rows], r"clock columns come together"),
    "batch above n": (lambda rows: [{**r, "batch_size": 2000} for r in rows],
                      r"row 1, column batch_size: must be <= n_train \(1000\), got 2000"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_malformed_files_are_refused_in_one_line(tmp_path, case):
    change, message = BAD[case]
    path = _write(tmp_path, change(_rows(sigmas=(0.25, 1.0, 2.0), seeds=(0, 1, 2))))
    with pytest.raises(ParameterError, match=message) as info:
        read_runs(path)
    assert "\n" not in str(info.value)


def test_unreadable_files_are_refused(tmp_path):
    (tmp_path / "runs.txt").write_text("a,b\n")
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    (tmp_path / "empty.csv").write_text(",".join(_rows()[0]) + "\n")
    for path, message in ((tmp_path / "nope.csv", "is not"), (tmp_path / "runs.txt", "must end in .csv"),
                          (tmp_path / "broken.parquet", "not a parquet file of runs"),
                          (tmp_path / "empty.csv", "holds no rows"), (tmp_path, "is not")):
        with pytest.raises(ParameterError, match=message):
            read_runs(path)
    for bad in (None, 3, "", [tmp_path]):
        with pytest.raises(ParameterError, match="path must be"):
            read_runs(bad)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(row=st.integers(0, 9), column=st.sampled_from(["run_id", "sigma_w", "seed", "optimizer", "batch_size",
                                                       "weight_decay", "n_train", "epoch", "lr", "train_acc",
                                                       "val_loss", "kernel_norm", "kernel_norm.fc"]),
       value=st.one_of(st.none(), st.floats(allow_nan=True), st.integers(-10**12, 10**12), st.text(max_size=4),
                       st.booleans()))
@example(row=1, column="lr", value=1.0000000005e100)  # just beyond the clocks' bound on a rate: refused naming the file
def test_any_corrupted_cell_reads_or_is_refused_in_one_line(tmp_path_factory, row, column, value):
    rows = _rows(sigmas=(1.0, 2.0), seeds=(0,), epochs=4)
    rows[row] = {**rows[row], column: value}
    path = _write(tmp_path_factory.mktemp("fuzz"), rows, "runs.jsonl")
    try:
        read_runs(path)
    except ParameterError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "implicitbias", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


# slow (24 s): the same path through the API is test_api_import_and_analyse; the CLI's refusals stay in the default tier
@pytest.mark.slow
def test_cli_import_then_analyse(tmp_path, capsys):
    """In-process (``cli.main``; the entry point in a fresh interpreter is the next test's)."""
    from implicitbias.cli import main

    path = _write(tmp_path, _rows(optimizers=(("sgd", 0.01), ("adam", 0.001))))
    store = str(tmp_path / "store.sqlite")
    assert main(["--store", store, "import", str(path), "--dry-run"]) == 0
    assert "18 runs (0 diverged), all values valid" in capsys.readouterr().out
    assert not (tmp_path / "store.sqlite").exists()
    assert main(["--store", store, "import", str(path)]) == 0
    out = capsys.readouterr().out
    assert "imported 18 runs" in out and "reconstructed from the per-epoch learning rates" in out
    assert main(["--store", store, "analyse", "--out", str(tmp_path / "analysis")]) == 0
    text = (tmp_path / "analysis" / "analysis.md").read_text()
    assert "(18 trained elsewhere)" in text and "18 of these runs were trained elsewhere" in text
    assert "| C1 |" in text and "sgd lr 0.01, b 32, 4 ep, trained elsewhere" in text


def test_cli_refuses_a_bad_file_in_one_line(tmp_path):
    path = _write(tmp_path, BAD["NaN"][0](_rows()))
    store = tmp_path / "store.sqlite"
    done = _cli("--store", str(store), "import", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "row 7, column val_acc" in done.stderr
    assert not store.exists()  # checked before the store is opened
    missing = _cli("--store", str(store), "import", str(tmp_path / "nope.parquet"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_api_import_and_analyse(tmp_path):
    path = _write(tmp_path, _rows(optimizers=(("sgd", 0.01), ("adam", 0.001))), "runs.parquet")
    runs = ib.import_runs(path, store=tmp_path / "s.sqlite")
    assert len(runs) == 18 and runs.diverged == 0 and "reconstructed" in runs.clocks
    analysis = ib.analyse(runs, store=tmp_path / "s.sqlite")
    assert analysis.verdicts()["c1"] == "agrees"
    assert "runs of runs.parquet: 18 finished runs" in analysis.markdown


def test_imported_runs_frame_is_the_file_in_long_format(tmp_path):
    """``ImportedRuns.to_frame`` holds each file cell once, under (run, epoch, metric); the notebook
    shows one row per run with its final test accuracy."""
    rows = _rows(sigmas=(0.5, 2.0), seeds=(0,), epochs=2)
    runs = ib.import_runs(_write(tmp_path, rows), store=tmp_path / "s.sqlite")
    frame = runs.to_frame()
    for row in rows:
        run = next(i for i, (c, r) in enumerate(runs.runs) if r["summary"]["run_id"] == row["run_id"])
        got = frame[(frame.run == run) & (frame.epoch == row["epoch"])].set_index("metric")["value"]
        assert got["test_acc"] == pytest.approx(row["test_acc"])
        assert got["kernel_norm"] == pytest.approx(row["kernel_norm"])
    assert len(frame) == len(frame.drop_duplicates(["run", "epoch", "metric"]))
    html = runs._repr_html_()
    assert "ImportedRuns runs.csv: 2 runs, 0 diverged" in html and html.count("<tr") == 3  # header, 2 runs


def test_scheduled_runs_of_two_optimisers_play_their_roles(tmp_path):
    """Runs whose per-epoch rates differ (lr_per_epoch in their configs) still pair as the low-lr SGD
    baseline and its adaptive counterpart (C3 judged, not 'not run')."""
    rows = _rows(optimizers=(("sgd", 0.01), ("adam", 0.001)))
    for r in rows:
        r["lr"] = r["lr"] / max(r["epoch"], 1)
    runs = ib.import_runs(_write(tmp_path, rows), store=tmp_path / "s.sqlite")
    assert {c["schedule"] for c, _ in runs.runs} == {"per epoch"}
    assert ib.analyse(runs, store=tmp_path / "s.sqlite").verdicts()["c3"] != "not run"


def test_the_report_judges_the_runs_trained_elsewhere(tmp_path):
    """The clocks section's part on runs trained elsewhere (claims layer): C1-C7 by the same rules,
    with the sentence on where the runs come from; nothing when the store holds none."""
    from implicitbias.claims import Context
    from implicitbias.claims.forgetting.analyse import runs_trained_elsewhere
    from implicitbias.store import Store

    with Store(tmp_path / "s.sqlite") as store:
        ctx = Context(store=store, out=tmp_path, progress=False)
        assert runs_trained_elsewhere(ctx) == ""
        ib.import_runs(_write(tmp_path, _rows()), store=store)
        text = runs_trained_elsewhere(ctx)
    assert text.startswith("### Runs trained elsewhere: 9 runs trained elsewhere")
    assert "9 of these runs were trained elsewhere" in text and "\n#### Claims" in text and "| C1 (elsewhere) |" in text
