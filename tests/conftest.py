"""Shared fixtures: every test gets its own store, never the user's."""

import os

import matplotlib
import pytest

matplotlib.use("Agg")


@pytest.fixture
def store(tmp_path):
    from implicitbias.store import Store

    with Store(tmp_path / "store.sqlite") as s:
        yield s


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    monkeypatch.setenv("IMPLICITBIAS_STORE", str(tmp_path / "default-store.sqlite"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    yield
    os.environ.pop("IMPLICITBIAS_STORE", None)
