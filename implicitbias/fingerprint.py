"""Fingerprints of code: which version of the code a stored record was computed by.

A cell's record is only as good as the code that made it.  ``code_fingerprint(fn)`` digests the
source of the module that defines ``fn`` and of every module of the same package family it
imports, transitively (imports anywhere in a module count, lazy ones inside functions too).  The
store keeps the fingerprint beside each record and serves a record only to a caller whose code
has the same fingerprint, so a fix to a cell, or to anything it calls, recomputes it.

Sources are normalised before hashing: the abstract syntax tree without docstrings (comments
never reach it), so rewording documentation does not throw results away, while any change to
what the code does, a constant included, does.  The standard library's ``ast`` and ``hashlib``
do the work; nothing here is specific to one cell.

Followed imports: modules under ``implicitbias`` and under the top-level package of the cell's
own module (so a cell defined outside the package, in a test or a user's script, is tracked
through its own helpers too).  Third-party libraries are not fingerprinted: their versions are
the environment's business.

This is the package's one cache-invalidation mechanism.  A record's kind names what the record
is (``maxmargin.phase-column``, ``validation.run``), never a version of the code that made it:
no kind carries a hand-made version suffix (``tests/test_fingerprint.py`` checks every kind in
the package), because the fingerprint already changes with every change to what a cell does,
and a record of other code is never served.  (The store's ``SCHEMA_VERSION`` is the layout of
its SQLite file, not the validity of the records in it.)
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable

__all__ = ["code_fingerprint", "module_fingerprint", "tracked_modules"]

_ROOT = "implicitbias"


def code_fingerprint(fn: Callable, modules: Iterable[str] = ()) -> str:
    """Hex digest (16 characters) of the code ``fn`` depends on (see the module docstring).

    ``functools.partial`` objects are unwrapped, their bound arguments belong to the config.
    A callable without a source file (defined interactively) is digested from its bytecode.
    ``modules``: modules that ``fn`` reaches only by name at run time (a user's model factory or
    data loader named in a config, ``implicitbias.validation.external``), each digested with
    :func:`module_fingerprint` into the result; without them the digest is ``fn``'s alone.
    """
    digest = _callable_fingerprint(fn)
    names = sorted(set(modules))
    if not names:
        return digest
    text = "\n".join([digest, *(f"{name}:{module_fingerprint(name)}" for name in names)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _callable_fingerprint(fn: Callable) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = getattr(fn, "__func__", fn)  # bound methods
    module = getattr(fn, "__module__", None)
    if module is None or _path_of(module) is None:
        code = getattr(fn, "__code__", None)
        if code is None:
            raise TypeError(f"cannot fingerprint {fn!r}: no module source and no bytecode")
        return hashlib.sha256(code.co_code + repr(code.co_consts).encode()).hexdigest()[:16]
    return module_fingerprint(module)


def module_fingerprint(module: str) -> str:
    """Hex digest (16 characters) of ``module`` and the tracked modules it imports, transitively."""
    seen = tracked_modules(module)
    text = "\n".join(f"{name}:{seen[name]}" for name in sorted(seen))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def tracked_modules(module: str) -> dict[str, str]:
    """The modules ``module``'s fingerprint digests (itself and the tracked modules it imports,
    transitively; names that are not modules digest as ``no-source``), each with its digest."""
    family = (_ROOT, module.split(".")[0])
    seen: dict[str, str] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        digest, imports = _digest(name)
        seen[name] = digest
        todo += [m for m in imports if m.split(".")[0] in family and m not in seen]
    return seen


def _path_of(module: str) -> str | None:
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None) if mod is not None else None
    if path is None:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            return None
        path = spec.origin if spec is not None and spec.has_location else None
    return str(path) if path is not None and str(path).endswith(".py") else None


def _digest(module: str) -> tuple[str, tuple[str, ...]]:
    """Digest of one module's normalised source and the modules its import statements name."""
    path = _path_of(module)
    try:
        stat = os.stat(path) if path else None
    except OSError:
        stat = None
    if stat is None:
        return "no-source", ()
    return _digest_file(module, path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=None)
def _digest_file(module: str, path: str, mtime_ns: int, size: int) -> tuple[str, tuple[str, ...]]:
    """``_digest`` of a file, cached while the file is unchanged (same modification time and size)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    imports: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
        elif isinstance(node, ast.Import):
            imports += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node.module, node.level)
            if base is None:
                continue
            imports.append(base)
            imports += [f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}")]
    text = ast.dump(tree, annotate_fields=False, include_attributes=False)
    return hashlib.sha256(text.encode()).hexdigest(), tuple(dict.fromkeys(imports))


def _absolute(module: str, name: str | None, level: int) -> str | None:
    if level == 0:
        return name
    parts = module.split(".")
    # the module itself is a package when it has an __init__ source; relative imports start there
    anchor = parts if _is_package(module) else parts[:-1]
    anchor = anchor[: len(anchor) - (level - 1)] if level > 1 else anchor
    if not anchor:
        return None
    return ".".join(anchor + ([name] if name else []))


def _is_package(module: str) -> bool:
    mod = sys.modules.get(module)
    return bool(mod is not None and hasattr(mod, "__path__"))


@functools.lru_cache(maxsize=None)
def _is_module(name: str) -> bool:
    if name.split(".")[0] != _ROOT and name.split(".")[0] not in sys.modules:
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        return False
