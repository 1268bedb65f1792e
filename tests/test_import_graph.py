"""The package has no import circle: read as import statements (top-level and inside functions), no
module of ``implicitbias`` reaches itself.  Imports under ``if TYPE_CHECKING:`` never run and do not
count; neither do ``importlib.import_module`` calls (the claims registry and the lazy API).
The graph is built from the sources with ``ast``; ``graphlib`` (standard library) finds a cycle.
"""

import ast
import graphlib
import importlib
import importlib.util
import pkgutil
import tomllib
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent


def _packages() -> list[str]:
    """The packages the distribution installs (pyproject.toml's list; folders are mapped into them)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]


def _modules() -> dict[str, str]:
    """Every module of the installed packages and its source path."""
    out = {}
    for name in _packages():
        package = importlib.import_module(name)
        out[name] = package.__file__
        for info in pkgutil.iter_modules(package.__path__, f"{name}."):
            if not info.ispkg:
                out[info.name] = importlib.util.find_spec(info.name).origin
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (typing only, never executed)."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skipped


def import_graph(sources: dict[str, str], packages: set[str]) -> dict[str, set[str]]:
    """Module -> the modules of ``sources`` it imports (``from X import y``: X, and X.y when that is a
    module); relative imports resolved (a name in ``packages`` is a package, its ``__init__``)."""
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, source in sources.items():
        tree = ast.parse(source)
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = name.split(".") if name in packages else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [base, *(f"{base}.{a.name}" for a in node.names)]
            else:
                continue
            graph[name] |= {t for t in targets if t in sources and t != name}
    return graph


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order, the first repeated at the end), or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(reversed(exc.args[1]))
    return None


def test_the_circle_check_can_fail():
    sources = {"pkg": "", "pkg.a": "def f():\n    from pkg import b\n", "pkg.b": "from pkg.c import x\n",
               "pkg.c": "from . import a\nx = 1\n", "pkg.d": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
               "    from pkg import a\n"}
    graph = import_graph(sources, {"pkg"})
    assert graph["pkg.c"] == {"pkg", "pkg.a"} and graph["pkg.d"] == set()
    found = circle(graph)
    assert found is not None and set(found) == {"pkg.a", "pkg.b", "pkg.c"} and found[0] == found[-1]
    del sources["pkg.c"]
    assert circle(import_graph(sources, {"pkg"})) is None


@pytest.fixture(scope="module")
def package_graph():
    modules = _modules()
    packages = {n for n, path in modules.items() if path.endswith("__init__.py")}
    sources = {n: open(path, encoding="utf-8").read() for n, path in modules.items()}
    return import_graph(sources, packages)


def test_every_package_folder_is_installed():
    """A folder of package sources that pyproject.toml does not list would be left out of a wheel."""
    listed = {Path(importlib.import_module(name).__file__).parent for name in _packages()}
    for top in {path for path in listed if path.parent == ROOT}:
        for init in top.rglob("__init__.py"):
            assert init.parent in listed, f"{init.parent.relative_to(ROOT)} is not in pyproject.toml's packages"


def test_the_graph_reads_the_package(package_graph):
    assert len(package_graph) > 100
    assert "implicitbias.numerics.maxmargin.phase" in package_graph["implicitbias.claims.depth.theorem_3_1"]
    assert "implicitbias.session" in package_graph["implicitbias.claims"]  # an import inside a method


def test_no_import_circle(package_graph):
    found = circle(package_graph)
    assert found is None, "import circle: " + " -> ".join(found)
