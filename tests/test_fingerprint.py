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


# The cells whose kinds carried hand-made versions (phase-column-v3, gd-census-v1, gd-crosscheck-v2,
# modified_flow/v1) before the fingerprint became the one invalidation mechanism, each with a module it
# depends on only through another module (what a hand-made version was bumped for).
def _versioned_cells():
    from implicitbias.claims.forgetting import modified_flows
    from implicitbias.numerics.maxmargin import gd_census, gd_crosscheck, phase

    return {
        "phase column": (phase.KIND, phase.phase_column, "implicitbias.theory.representation_cost"),
        "phase search": (phase.SEARCH_KIND, phase.search_column, "implicitbias.numerics.maxmargin.spherical"),
        "GD census": (gd_census.KIND, gd_census.census_cell, "implicitbias.numerics.maxmargin.symmetry"),
        "GD cross-check": (gd_crosscheck.KIND, gd_crosscheck.gd_crosscheck, "implicitbias.theory.polytopes"),
        "modified flow": (modified_flows.KIND, modified_flows.flow_record, "implicitbias.theory.display"),
    }


@pytest.mark.parametrize("name", list(_versioned_cells()))
def test_fingerprint_covers_everything_the_cell_uses(name):
    """Every package object a fingerprinted module holds is defined in a fingerprinted module."""
    from implicitbias.fingerprint import tracked_modules

    _, fn, _ = _versioned_cells()[name]
    tracked = tracked_modules(fn.__module__)
    for module in [m for m, digest in tracked.items() if digest != "no-source"]:
        for attr, value in vars(importlib.import_module(module)).items():
            home = value.__name__ if isinstance(value, type(sys)) else getattr(value, "__module__", None)
            if home == f"{module}.{attr}":
                continue  # a package's submodule, set by whichever import loaded it (imports are followed as written)
            if isinstance(home, str) and home.startswith("implicitbias."):
                assert home in tracked, f"{module}.{attr} comes from {home}, which {name}'s fingerprint misses"


@pytest.mark.parametrize("name", list(_versioned_cells()))
def test_a_change_deep_in_a_cells_imports_changes_its_fingerprint(name, monkeypatch):
    import implicitbias.fingerprint as fp

    _, fn, deep = _versioned_cells()[name]
    before = code_fingerprint(fn)
    digest = fp._digest

    def edited(module, target):
        def _digest(name):
            found, imports = digest(name)
            return ("edited" if name == target else found), imports
        return _digest

    monkeypatch.setattr(fp, "_digest", edited(fn.__module__, "implicitbias.report"))  # not imported by the cell
    assert code_fingerprint(fn) == before
    monkeypatch.setattr(fp, "_digest", edited(fn.__module__, deep))
    assert code_fingerprint(fn) != before


@pytest.mark.parametrize("name", list(_versioned_cells()))
def test_a_record_of_another_fingerprint_is_not_served(name, store):
    kind, fn, _ = _versioned_cells()[name]
    config = {"K": 4, "L": 2}
    store.put(kind, config, {"made by": "older code"}, code="0123456789abcdef")
    assert store.status(kind, config, code=code_fingerprint(fn)) == "stale"
    assert store.get(kind, config, code=code_fingerprint(fn)) is None
    calls = []
    (record,) = store.map(kind, lambda c: calls.append(c) or {"made by": "this code"}, [config], progress=False,
                          code=code_fingerprint(fn))
    assert calls == [config] and record == {"made by": "this code"}


def _kinds_in_source():
    """Every string a module of the package assigns to a name ending in KIND, or passes to a ``map``."""
    import ast
    from pathlib import Path

    import implicitbias

    root = Path(implicitbias.__file__).parent.parent
    found = []
    for path in [p for top in ("implicitbias", "numerics", "validation", "theory") for p in (root / top).rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("KIND") for t in node.targets):
                values = [node.value]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "map" and node.args:
                values = [node.args[0]]
            else:
                continue
            found += [(path.name, v.value) for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return found


def test_no_kind_carries_a_hand_made_version():
    import re

    kinds = _kinds_in_source()
    assert {"maxmargin.phase-column", "maxmargin.gd-census", "validation.run"} <= {k for _, k in kinds}
    versioned = [(f, k) for f, k in kinds if re.search(r"[-_./]v\d+$", k)]
    assert versioned == [], f"kinds with a version suffix (the code fingerprint invalidates records): {versioned}"
