"""The typed run data (``validation.records``) against the dicts the store holds.

A run's store key is the hash of its canonical dict: ``RunConfig.canonical()`` must give exactly
that dict (key for key, value for value), whether the config came from a spec, a dict or a
``RunConfig``, or no stored record keeps its identity.  ``RunRecord.from_dict(r).to_dict()``
must give back the record the engine and the run format write.
"""

import ast
import json
from pathlib import Path

import pytest

from implicitbias.store import config_key
from implicitbias.validation import run as run_mod
from implicitbias.validation.records import EpochLog, RunConfig, RunRecord
from implicitbias.validation.runs_format import build_record, history_row
from implicitbias.validation.sweep import load_spec

MLP = {"dataset": "synthetic", "data_size": 120, "arch": "mlp", "width": 0.125, "epochs": 2, "batch_size": 32,
       "eval_every": 2, "sigma_w": 1.5, "seed": 3}


def test_defaults_are_the_run_configs_fields_in_order():
    assert list(run_mod.DEFAULTS) == [f for f in RunConfig.__dataclass_fields__]
    assert RunConfig(**run_mod.DEFAULTS) == RunConfig()


@pytest.mark.parametrize("spec", ["default", "horizon", "tiny", "clock_lines"])
def test_store_keys_are_unchanged_through_run_config(spec):
    """Independent route: the key of the spec's canonical dict vs the key of its typed round trip."""
    for config in load_spec(spec).configs:
        typed = run_mod.run_config(config)
        assert typed.canonical() == config and list(typed.canonical()) == list(config)
        assert config_key(run_mod.KIND, typed.canonical()) == config_key(run_mod.KIND, config)
        assert run_mod.canonical_config(typed) == config


def test_a_stored_config_key_is_pinned():
    """A key computed before RunConfig existed (the tiny spec's first run, 2026-12-03): a change to the
    canonical dict (a renamed or added default, another value) would move every record."""
    config = load_spec("tiny").configs[0]
    assert json.dumps(RunConfig(**config).canonical(), sort_keys=True) == json.dumps(config, sort_keys=True)
    stored = "3e825b58193796d8f4f7fd3c95fc6361"  # its key in a store written by the code before RunConfig
    assert config_key(run_mod.KIND, run_mod.run_config(config).canonical()) == stored


@pytest.mark.parametrize("lr", [0.05, 80.0])  # 80: the run diverges and its summary has no metrics of a valid row
def test_engine_records_round_trip(lr):
    record = run_mod.execute({**MLP, "lr": lr}, options={"threads": 1})
    typed = RunRecord.from_dict(record)
    assert typed.to_dict() == record
    assert all(isinstance(r, EpochLog) and r.seconds is not None for r in typed.history)
    assert typed.diverged == (record["status"] == "diverged")
    assert [r.epoch for r in typed.history] == [row["epoch"] for row in record["history"]]


def test_run_format_records_round_trip_without_seconds():
    clocks = {"T_SGD": 0.0, "T_L2": 0.0, "T_adapt": 0.0}
    rows = [history_row(e, {"train_acc": 0.5 + 0.2 * e, "val_loss": 1.0 - 0.1 * e, "val_acc": 0.5, "test_acc": 0.4},
                        {"total": 2.0, "body.1": 2.0}, clocks) for e in (1, 2)]
    assert all("seconds" not in row for row in rows)
    record = build_record(rows, optimizer="sgd", weight_decay=0.0, n_train=100, steps_per_epoch=4, run_id="a",
                          clocks_from="columns")
    assert RunRecord.from_dict(record).to_dict() == record


def test_no_function_of_the_recipe_is_over_60_lines():
    tree = ast.parse(Path(run_mod.__file__).read_text())
    long = [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and n.end_lineno - n.lineno + 1 > 60]
    assert long == []
