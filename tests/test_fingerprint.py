"""Results are tied to the code that made them: a changed cell (or a helper it imports) is
recomputed, a record of older code is never served, and documentation-only edits keep results."""

import importlib
import sys
import textwrap

import pytest

from implicitbias.fingerprint import code_fingerprint
from implicitbias.store import Store


@pytest.fixture
def cellpkg(tmp_path, monkeypatch):
    """A throw-away package ``cellpkg`` (cell module + helper) that the test rewrites on disk."""
    root = tmp_path / "src"
    pkg = root / "cellpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(root))

    def write(cell_body: str, helper_body: str):
        (pkg / "cell.py").write_text(textwrap.dedent(cell_body))
        (pkg / "helper.py").write_text(textwrap.dedent(helper_body))
        for name in ("cellpkg.cell", "cellpkg.helper"):
            sys.modules.pop(name, None)
        importlib.invalidate_caches()
        return importlib.import_module("cellpkg.cell").cell

    yield write
    for name in ("cellpkg", "cellpkg.cell", "cellpkg.helper"):
        sys.modules.pop(name, None)


CELL = '''
"""A cell."""
from cellpkg.helper import scale

def cell(config):
    """Doc."""
    return {"value": scale() * config["x"]}
'''
HELPER = '''
def scale():
    return 2
'''


def _values(store, fn):
    return [r["value"] for r in store.map("cell", fn, [{"x": 1}, {"x": 3}], progress=False)]


def test_changed_cell_is_recomputed(store, cellpkg):
    assert _values(store, cellpkg(CELL, HELPER)) == [2, 6]
    changed = CELL.replace('scale() * config["x"]', 'scale() * config["x"] + 1')
    assert _values(store, cellpkg(changed, HELPER)) == [3, 7]
    assert store.counts("cell") == {"done": 2}  # stale records replaced, not kept beside


def test_changed_dependency_is_recomputed(store, cellpkg):
    assert _values(store, cellpkg(CELL, HELPER)) == [2, 6]
    assert _values(store, cellpkg(CELL, HELPER.replace("return 2", "return 5"))) == [5, 15]


def test_documentation_edit_keeps_results(store, cellpkg):
    fn = cellpkg(CELL, HELPER)
    assert _values(store, fn) == [2, 6]
    reworded = CELL.replace('"""Doc."""', '"""Reworded doc."""\n    # a comment')
    fn2 = cellpkg(reworded, HELPER)
    assert code_fingerprint(fn2) == code_fingerprint(fn)
    calls = []

    def spy(config):
        calls.append(config)
        return fn2(config)

    assert [r["value"] for r in store.map("cell", spy, [{"x": 1}], progress=False, code=code_fingerprint(fn2))] == [2]
    assert calls == []


def test_stale_record_is_never_served(store, cellpkg):
    old = cellpkg(CELL, HELPER)
    _values(store, old)
    code_old = code_fingerprint(old)  # fingerprints read the source on disk: take it before the edit
    code_new = code_fingerprint(cellpkg(CELL.replace("scale()", "(scale() + 1)"), HELPER))
    assert code_old != code_new
    assert store.status("cell", {"x": 1}, code=code_new) == "stale"
    assert store.get("cell", {"x": 1}, code=code_new) is None
    assert store.records("cell", code=code_new) == []
    assert len(store.records("cell", code=code_old)) == 2


def test_store_of_older_schema_is_upgraded(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(  # the first layout of this package's store, before fingerprints (and schema markers)
        "CREATE TABLE records (key TEXT PRIMARY KEY, kind TEXT NOT NULL, config TEXT NOT NULL, status TEXT NOT NULL,"
        " record TEXT, started REAL, finished REAL);"
        "CREATE INDEX records_kind ON records(kind, status);"
        "CREATE TABLE epochs (key TEXT NOT NULL, epoch INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (key, epoch));"
        "INSERT INTO records VALUES ('k', 'cell', '{}', 'done', '{\"value\": 1}', 0, 0);"
    )
    db.commit()
    db.close()
    with Store(path) as store:  # an old record has no fingerprint: stale for every code
        assert store.records("cell", code="anything") == []
        assert store.counts("cell") == {"done": 1}


def test_fingerprint_follows_package_modules():
    from implicitbias.numerics.maxmargin import phase

    assert code_fingerprint(phase.phase_column) == code_fingerprint(phase.boundary)  # same module
    assert code_fingerprint(phase.phase_column) != code_fingerprint(code_fingerprint)
