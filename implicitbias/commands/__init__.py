"""One module per CLI command; each defines ``register(subparsers)``.

A command module imports at its top only what its parser needs (names of choices, light
modules); the science it calls is imported inside its ``run``.  Every command checks all of its
options (lists, output folder, seeds, device...) before it prints or computes anything, so bad
input is one line and nothing else.

One dialect (``implicitbias.cli`` adds the global options ``--store``, ``--executor``,
``--workers``, ``--progress/--no-progress`` and ``--json`` to every command): K classes are
``--K`` (a grid's bounds ``--K-min``/``--K-max``), depths L (weight matrices) ``--L`` (a grid's
bound ``--L-max``, extra real depths ``--L-extra``), ``--seed`` is one seed and ``--seeds`` a
comma-separated list of seeds (a number of repetitions is ``--starts``), a singular name takes one
value (``--scale``, ``--perturbation``) and a plural one a comma-separated list (``--scales``,
``--perturbations``).  Old spellings are kept for one release as hidden aliases (``deprecated``).
With ``--json`` a command prints one JSON document (``emit``).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from implicitbias.plain import plain
from implicitbias.theory import params

__all__ = ["parse_list", "output_folder", "check_free_space", "deprecated", "emit"]

REMOVED_IN = "0.3"  # the release that drops the deprecated spellings


class _Deprecated(argparse.Action):
    """An old spelling of an option: stores like the new one and notes the new name (printed on
    stderr by the command line before the command runs)."""

    def __init__(self, option_strings, dest, new: str, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        notes = list(getattr(namespace, "deprecated", ()))
        notes.append(f"{option_string} is deprecated, use {self.new} (the old spelling goes in {REMOVED_IN})")
        namespace.deprecated = notes


def deprecated(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Accept ``old`` (hidden from the help) as a spelling of ``parser``'s option ``new`` for one release."""
    action = next(a for a in parser._actions if new in a.option_strings)
    parser.add_argument(old, action=_Deprecated, new=new, dest=action.dest, type=action.type, choices=action.choices,
                        default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def emit(as_json: bool, rows: Sequence[Mapping] | None, *, formats: Mapping[str, str] | None = None,
         lines: Sequence[str] = (), **fields) -> None:
    """Print a command's result: a Markdown table of ``rows`` (None: the result is no table; each
    value formatted with ``formats[column]``, a ``format`` spec) followed by ``lines``.
    ``as_json`` (``--json``): one JSON document instead, the rows with their raw values alone (an
    array), or an object of ``fields`` (the files written...) with the rows as ``rows``."""
    if as_json:
        document = list(rows or ()) if not fields else {**({"rows": list(rows)} if rows is not None else {}), **fields}
        print(json.dumps(plain(document), indent=1))
        return
    from implicitbias.figures import markdown_table

    if rows:
        header = list(rows[0])
        formats = formats or {}
        print(markdown_table(header, [[format(r[c], formats.get(c, "")) if r[c] is not None else "" for c in header]
                                      for r in rows]))
    for line in lines:
        print(line)


def parse_list(name: str, text: str, kind=float) -> list:
    """A comma-separated list of numbers (or names, ``kind=str``); an empty list, an empty item
    (``1,,2`` or ``1,2,``) or a bad item is a ParameterError naming ``name``."""
    items = [v.strip() for v in str(text).split(",")]
    what = {int: "integers", str: "names"}.get(kind, "numbers")
    if any(not v for v in items):
        raise params.ParameterError(f"{name} must be a comma-separated list of {what} without empty items, got {text!r}")
    try:
        return [kind(v) for v in items]
    except (ValueError, OverflowError):
        raise params.ParameterError(f"{name} must be a comma-separated list of {what}, got {text!r}") from None


def output_folder(name: str, text: str, files: tuple[str, ...] = ()) -> Path:
    """The output folder ``text`` of option ``name``, checked (not created): it must be a folder or
    not exist yet, not lie inside a file, not be a dangling symbolic link, be writable (``os.access``
    sees read-only filesystems and immutable folders, for root too) and have free space; each of
    ``files`` that the command will write in it must not be a folder or a dangling link either.
    So a command refuses its output before it computes, naming the path."""
    if not str(text).strip():
        raise params.ParameterError(f"{name} must be a folder path (created if missing), got {text!r}")
    path = Path(text).expanduser()
    for p in (path, *(path / f for f in files)):
        if p.is_symlink() and not p.exists():
            raise params.ParameterError(f"{name} {p} is a dangling symbolic link (to {os.readlink(p)}); "
                                        "remove it or pass another folder")
    if path.exists() and not path.is_dir():
        raise params.ParameterError(f"{name} {path} is a file; it must be a folder (created if missing)")
    for f in files:
        if (path / f).is_dir():
            raise params.ParameterError(f"{name} {path}: {path / f} is a folder, where the command writes a file")
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise params.ParameterError(f"{name} {path} lies inside the file {existing}; it must be a folder path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise params.ParameterError(f"{name} {path}: folder {existing} is read-only; pass a writable folder")
    check_free_space(name, path, existing)
    return path


MIN_FREE_BYTES = 1 << 20  # below this a filesystem is full for an output or a store: refused before computing


def check_free_space(name: str, path: Path, existing: Path | None = None) -> None:
    """ParameterError when the filesystem that will hold ``path`` (from its nearest existing folder
    ``existing``) has less than MIN_FREE_BYTES free."""
    existing = existing or next((p for p in (path, *path.parents) if p.is_dir()), Path("."))
    try:
        stat = os.statvfs(existing)
    except OSError:
        return  # nothing to measure: writing will say what is wrong
    free = stat.f_bavail * stat.f_frsize
    if free < MIN_FREE_BYTES:
        raise params.ParameterError(f"{name} {path}: its filesystem is full ({free} bytes free); free space or pass "
                                    "a path on another filesystem")
