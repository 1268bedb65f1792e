"""The public API's docstrings: numpydoc sections on every public object, their Examples run as
doctests (the seconds-long ones here, the sweep's in the slow tier), and the API reference page
(docs/api.md) lists every public object once."""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import implicitbias.theory.clocks
import implicitbias.theory.params
import implicitbias.validation.meter
import pytest

import implicitbias
import implicitbias.api
import implicitbias.session

# the API's modules, and the science layer's module whose function the API re-exports as it is
MODULES = [
    implicitbias,
    implicitbias.api,
    implicitbias.session,
    implicitbias.theory.clocks,
    implicitbias.theory.params,
    implicitbias.validation.meter,
]
SLOW = {"implicitbias.api.sweep", "implicitbias.api.analyse"}  # each trains networks: seconds to a minute
API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def _examples(module) -> list[doctest.DocTest]:
    return [t for t in doctest.DocTestFinder().find(module) if t.examples]


def _run(tests: list[doctest.DocTest]) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted > 0
    assert failed == 0, f"{failed} of {attempted} doctest examples failed (printed above)"


def _public() -> dict[str, object]:
    """implicitbias.__all__ (the API's names) by name, and the public functions of the session module."""
    names = {n: getattr(implicitbias, n) for n in implicitbias.__all__ if n not in {"__version__", "claims"}}
    names["claims"] = implicitbias.api.claims
    names["session_store"] = implicitbias.session.session_store
    return names


def test_examples_run_as_doctests(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tests = [t for m in MODULES for t in _examples(m) if t.name not in SLOW]
    assert {t.name.rsplit(".", 1)[-1] for t in tests} >= {
        "phase_diagram",
        "check",
        "MarginProblem",
        "nc_metrics",
        "forgetting_clocks",
    }
    _run(tests)


@pytest.mark.slow
def test_sweep_examples_run_as_doctests(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _run([t for t in _examples(implicitbias.api) if t.name in SLOW])


@pytest.mark.parametrize("name", sorted(_public()))
def test_numpydoc_sections(name):
    """Every public callable says what its parameters mean, what it returns or holds, and has an
    example (run by the tests above) or a pointer to where one is."""
    obj = _public()[name]
    doc = inspect.getdoc(obj) or ""
    assert doc, f"{name} has no docstring"

    def has(section: str) -> bool:
        return re.search(rf"^{section}\n-+$", doc, re.MULTILINE) is not None

    if inspect.isclass(obj):
        fields = getattr(obj, "__dataclass_fields__", {})
        assert has("Attributes") or has("Parameters") or not fields, f"{name}: no Attributes or Parameters section"
    else:
        takes = [p for p in inspect.signature(obj).parameters.values() if p.name != "self"]
        assert has("Parameters") or not takes, f"{name}: no Parameters section"
        assert has("Returns") or has("Yields"), f"{name}: no Returns section"
    assert has("Examples") or has("See Also"), f"{name}: neither Examples nor See Also"


def _page_objects() -> list[object]:
    """The objects docs/api.md's autosummary tables list (names relative to ``implicitbias``)."""
    import importlib

    names = re.findall(r"^   ([A-Za-z_][\w.]*)$", API_PAGE.read_text(), re.MULTILINE)
    objects = []
    for name in names:
        *path, attr = f"implicitbias.{name}".split(".")
        for cut in range(len(path), 0, -1):
            try:
                owner = importlib.import_module(".".join(path[:cut]))
            except ImportError:
                continue
            for part in path[cut:]:
                owner = getattr(owner, part)
            objects.append(getattr(owner, attr))
            break
    return objects


def test_api_reference_lists_every_public_object_once():
    listed = _page_objects()
    assert len(listed) == len({id(o) for o in listed}), "an object is listed twice on docs/api.md"
    missing = [n for n, o in _public().items() if all(o is not x for x in listed)]
    assert not missing, f"docs/api.md lists no page for {missing}"
    from implicitbias.theory.params import ParameterError

    from implicitbias.executors import open_executor
    from implicitbias.store import Store

    for obj in (Store, ParameterError, open_executor):
        assert any(obj is x for x in listed), f"docs/api.md lists no page for {obj.__name__}"
