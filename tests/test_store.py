"""The results store: stable keys, cached records, resumable maps."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from implicitbias.executors import open_executor
from implicitbias.store import Store, config_key

configs = st.dictionaries(
    st.text(min_size=1, max_size=8),
    st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=8), st.booleans()),
    max_size=6,
)


@given(configs)
def test_key_ignores_key_order(config):
    reordered = dict(reversed(list(config.items())))
    assert config_key("cell", config) == config_key("cell", reordered)


def test_key_depends_on_kind_and_values():
    assert config_key("a", {"K": 3}) != config_key("b", {"K": 3})
    assert config_key("a", {"K": 3}) != config_key("a", {"K": 4})
    assert config_key("a", {"K": np.int64(3)}) == config_key("a", {"K": 3})


def _square(config):
    return {"value": config["x"] ** 2, "array": np.arange(config["x"])}


def test_map_computes_once_and_returns_cached(store):
    calls = []

    def fn(c):
        calls.append(c["x"])
        return _square(c)

    first = store.map("sq", fn, [{"x": i} for i in range(5)], progress=False)
    again = store.map("sq", fn, [{"x": i} for i in range(7)], progress=False)
    assert [r["value"] for r in again] == [i * i for i in range(7)]
    assert first == again[:5]
    assert sorted(calls) == list(range(7))  # 0..4 once, 5..6 once
    assert store.counts("sq") == {"done": 7}


CODE = Store.code_of(_square)


def test_interrupted_run_is_recognised_and_rerun(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as s:
        assert s.claim("run", {"x": 1}, code=CODE) == "claimed"
        s.put_epoch("run", {"x": 1}, 0, {"loss": 1.0})
    with Store(path) as s:  # a new process sees the partial record
        assert s.status("run", {"x": 1}, code=CODE) == "running"
        assert s.get("run", {"x": 1}, code=CODE) is None
        assert s.epochs("run", {"x": 1}) == [{"loss": 1.0}]
        (rec,) = s.map("run", _square, [{"x": 1}], progress=False)
        assert rec["value"] == 1 and s.status("run", {"x": 1}, code=CODE) == "done"


@pytest.mark.parametrize("kind", ["inline", "process"])
def test_map_through_executors(store, kind):
    with open_executor(kind, workers=2) as ex:
        recs = store.map("sq", _square, [{"x": i} for i in range(4)], executor=ex, progress=False)
    assert [r["value"] for r in recs] == [0, 1, 4, 9]


def _fails_on_three(config):
    if config["x"] == 3:
        raise RuntimeError("boom")
    return {"value": config["x"]}


@pytest.mark.parametrize("kind", ["inline", "process"])
def test_completed_cells_are_kept_when_a_later_cell_fails(store, kind):
    with open_executor(kind, workers=1) as ex, pytest.raises(RuntimeError, match="boom"):
        store.map("f", _fails_on_three, [{"x": i} for i in range(5)], executor=ex, progress=False)
    code = Store.code_of(_fails_on_three)
    assert [store.status("f", {"x": i}, code=code) for i in range(3)] == ["done"] * 3
    # the cell that raised is recorded as failed with its message, not left running
    assert store.status("f", {"x": 3}, code=code) == "failed"
    assert store.records("f", code=code, status="failed") == [({"x": 3}, {"error": "RuntimeError: boom"})]
    # a rerun retries it (and only it)
    (rec,) = store.map("f", _square, [{"x": 3}], progress=False, code=code)
    assert rec["value"] == 9 and store.status("f", {"x": 3}, code=code) == "done"


def _dies_on_two(config):
    import os

    if config["x"] == 2:
        os._exit(1)  # the worker ends under the cell, as when it is killed
    return _square(config)


def test_a_cell_whose_worker_dies_is_left_unfinished_not_failed(store):
    from implicitbias.store import CellError

    with open_executor("process", workers=1) as ex, pytest.raises(CellError, match="was not finished"):
        store.map("d", _dies_on_two, [{"x": i} for i in range(4)], executor=ex, progress=False)
    code = Store.code_of(_dies_on_two)
    assert [store.status("d", {"x": i}, code=code) for i in range(2)] == ["done"] * 2
    assert store.records("d", code=code, status="failed") == []  # not the cell's failure: a rerun computes it
    (rec,) = store.map("d", _square, [{"x": 2}], progress=False, code=code)
    assert rec["value"] == 4
