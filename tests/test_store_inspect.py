"""Looking into a store (``implicitbias.store.inspection``, ``implicitbias store ...``): every table is
checked against what was written through the store's own API (``put``, ``put_epoch``, ``get``,
``counts``, ``status``), never against the inspection's own output."""

import json
import math
import time

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from implicitbias.cli import main
from implicitbias.store import Store
from implicitbias.theory.params import ParameterError

CODE, OLD = "c0de" * 4, "01d0" * 4


def _history(n, seed):
    return [{"epoch": e, "train_acc": 0.1 * e + seed, "test": {"loss": 2.0 / (e + 1)}, "note": "text"} for e in range(n)]


@pytest.fixture
def filled(store):
    """Runs of kind ``run`` (three done with histories, one of a user's model, one failed, one
    interrupted with epoch rows), cells of kind ``cell`` by old code then new code."""
    for seed in range(3):
        store.put("run", {"seed": seed}, {"status": "done", "history": _history(3 + seed, seed)}, code=CODE)
    store.put("run", {"seed": 9, "arch": "mypkg.models:net"}, {"history": _history(2, 9)}, code=OLD)
    store.put("run", {"seed": 7}, {"error": "boom"}, code=CODE, status="failed")
    assert store.claim("run", {"seed": 8}, code=CODE) == "claimed"
    for e in range(2):
        store.put_epoch("run", {"seed": 8}, e, {"epoch": e, "train_acc": 0.5 + e})
    store.put("cell", {"K": 4}, {"value": 1.0}, code=OLD)
    time.sleep(0.01)
    store.put("cell", {"K": 8}, {"value": 2.0}, code=CODE)
    return store


def test_summary_counts_what_the_store_counts(filled):
    frame = filled.summary_frame()
    for kind in ("run", "cell"):
        mine = frame[frame["kind"] == kind]
        assert dict(zip(mine["status"], mine["records"])) == filled.counts(kind)
    run_done = frame[(frame["kind"] == "run") & (frame["status"] == "done")].iloc[0]
    assert run_done["fingerprints"] == 2 and (frame["age"] >= pd.Timedelta(0)).all()
    assert frame["bytes"].gt(0).all() and frame.loc[frame["status"] == "running", "epoch_rows"].item() == 2
    assert len(filled.records_frame()) == sum(sum(filled.counts(k).values()) for k in ("run", "cell"))


def test_history_is_the_records_history_in_long_format(filled):
    long = filled.history_frame("run")
    assert list(long.columns) == ["run", "kind", "epoch", "metric", "value"]
    for seed in range(3):
        config = {"seed": seed}
        wanted = filled.get("run", config, code=CODE)["history"]
        key = next(k for k in filled.records_frame("run")["key"] if filled.record_of(k).config == config)
        mine = long[long["run"] == key].pivot(index="epoch", columns="metric", values="value")
        assert list(mine.index) == [row["epoch"] for row in wanted]
        assert mine["train_acc"].tolist() == [row["train_acc"] for row in wanted]
        assert mine["test.loss"].tolist() == [row["test"]["loss"] for row in wanted]
        assert "note" not in mine  # text is no metric
    # the interrupted run's history is its epoch rows
    interrupted = long[long["metric"].eq("train_acc") & long["epoch"].isin([0, 1])]
    rows = filled.epochs("run", {"seed": 8})
    assert any(sorted(g["value"]) == [r["train_acc"] for r in rows] for _, g in interrupted.groupby("run"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(histories=st.lists(st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]),
                                                   st.floats(allow_nan=False, allow_infinity=False), min_size=1),
                                   max_size=5), min_size=1, max_size=4))
def test_history_round_trips_any_histories(tmp_path_factory, histories):
    """Whatever numbers the histories hold, the long table has one row per (epoch, metric) number,
    the epochs numbered from 0 where the rows carry none."""
    with Store(tmp_path_factory.mktemp("h") / "s.sqlite") as store:
        for i, history in enumerate(histories):
            store.put("run", {"i": i}, {"history": history}, code=CODE)
        long = store.history_frame()
        assert len(long) == sum(len(row) for h in histories for row in h)
        for i, history in enumerate(histories):
            key = store.records_frame()["key"][i]
            got = {(r.epoch, r.metric): r.value for r in long[long["run"] == key].itertuples()}
            assert got == {(e, m): v for e, row in enumerate(history) for m, v in row.items()}


def test_runs_frame_flattens_configs_and_scalars(filled):
    runs = filled.runs_frame("cell")
    assert sorted(runs["config.K"]) == [4, 8] and sorted(runs["record.value"]) == [1.0, 2.0]
    assert "record.history" not in filled.runs_frame("run")


def test_record_of_by_prefix(filled):
    key = filled.records_frame("cell")["key"][0]
    record = filled.record_of(key[:6].upper())
    assert (record.key, record.config, record.record) == (key, {"K": 4}, filled.get("cell", {"K": 4}, code=OLD))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.one_of(st.text(max_size=40), st.sampled_from(["", "abc", "0", "zzzz", "c", "c0"])))
def test_record_of_refuses_bad_and_ambiguous_keys_with_a_parameter_error(filled, key):
    keys = filled.records_frame()["key"]
    matches = [k for k in keys if k.startswith(key.strip().lower())]
    if len(key.strip()) >= 4 and len(matches) == 1 and all(c in "0123456789abcdef" for c in key.strip().lower()):
        assert filled.record_of(key).key == matches[0]
    else:
        with pytest.raises(ParameterError, match="^key"):
            filled.record_of(key)


def test_prune_dry_run_failed_and_old_code(filled):
    before = {k: filled.counts(k) for k in ("run", "cell")}
    listed = filled.prune(failed=True, old_code=True, dry_run=True)
    assert {k: filled.counts(k) for k in ("run", "cell")} == before  # a dry run deletes nothing
    assert sorted(listed["status"]) == ["done", "failed"] and set(listed["code"]) == {OLD, CODE}
    gone = filled.prune(failed=True, old_code=True)
    assert gone.equals(listed)
    assert filled.status("run", {"seed": 7}, code=CODE) == "missing"  # the failed cell
    assert filled.status("cell", {"K": 4}, code=OLD) == "missing"  # the old code's cell
    assert filled.get("cell", {"K": 8}, code=CODE) == {"value": 2.0}
    # a user's model is its own code group: its runs are not old code because the built-ins' code is newer
    assert filled.get("run", {"seed": 9, "arch": "mypkg.models:net"}, code=OLD) is not None
    assert filled.status("run", {"seed": 8}, code=CODE) == "running" and len(filled.epochs("run", {"seed": 8})) == 2
    with pytest.raises(ParameterError):
        filled.prune()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_writes_the_tables(filled, tmp_path, fmt):
    filled.put("cell", {"K": 4, "L": "inf"}, {"value": 3.0}, code=CODE)  # a key of mixed types (the phase's depths)
    filled.put("cell", {"K": 4, "L": 2}, {"value": 4.0, "nested": {"a": 1}}, code=CODE)
    paths = filled.export(tmp_path / "x", fmt)
    read = (lambda p: pd.read_csv(p, dtype={"config.L": str})) if fmt == "csv" else pd.read_parquet
    history = read(paths["history"])
    assert len(history) == len(filled.history_frame())
    assert history["value"].sum() == pytest.approx(filled.history_frame()["value"].sum())
    runs = read(paths["runs"])
    assert len(runs) == len(filled.records_frame())
    assert sorted(runs["config.L"].dropna().astype(str)) == ["2", "inf"]  # the others have no L: missing, not "nan"


def test_parquet_without_pyarrow_is_one_clear_error(filled, tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__
    monkeypatch.setattr(builtins, "__import__",
                        lambda name, *a, **k: (_ for _ in ()).throw(ImportError(name)) if name == "pyarrow" else
                        real(name, *a, **k))
    with pytest.raises(ParameterError, match="pyarrow"):
        filled.export(tmp_path / "x", "parquet")


# -- the command ------------------------------------------------------------------------------------
def test_store_commands_on_a_store(filled, tmp_path, capsys):
    s = ["--store", str(filled.path)]
    assert main([*s, "store", "ls"]) == 0
    out = capsys.readouterr().out
    assert "| run | done | 4 | 2 |" in out and "| cell | done | 2 | 2 |" in out
    key = filled.records_frame("cell")["key"][1]
    assert main(["store", "show", key[:8], *s, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["config"] == {"K": 8} and shown["record"] == {"value": 2.0}
    assert main([*s, "store", "export", "--out", str(tmp_path / "e")]) == 0
    assert (tmp_path / "e" / "history.csv").is_file()
    assert main([*s, "store", "prune", "--old-code", "--dry-run"]) == 0
    assert "would delete 1 records" in capsys.readouterr().out and filled.counts("cell") == {"done": 2}
    assert main([*s, "store", "prune", "--failed"]) == 0 and "failed" not in filled.counts("run")


def test_store_commands_never_create_a_store(tmp_path, capsys):
    path = tmp_path / "none.sqlite"
    for what in (["ls"], ["show", "abcd"], ["export"], ["prune", "--failed"]):
        assert main(["--store", str(path), "store", *what]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "does not exist" in err
    assert not path.exists()
    assert main(["--store", str(path), "store", "path"]) == 0 and capsys.readouterr().out.strip() == str(path)


def test_ages_are_not_negative_and_nan_free(filled):
    frame = filled.summary_frame()
    assert not frame.isna().any().any() and all(math.isfinite(b) for b in frame["bytes"])
