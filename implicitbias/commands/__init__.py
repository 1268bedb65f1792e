"""One module per CLI command; each defines ``register(subparsers)``.

A command module imports at its top only what its parser needs (names of choices, light
modules); the science it calls is imported inside its ``run``.  Every command checks all of its
options (lists, output folder, seeds, device...) before it prints or computes anything, so bad
input is one line and nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path

from implicitbias.theory import params

__all__ = ["parse_list", "output_folder"]


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


def output_folder(name: str, text: str) -> Path:
    """The output folder ``text`` of option ``name``, checked (not created): it must be a folder or
    not exist yet, not lie inside a file, and be writable (``os.access`` sees read-only
    filesystems and immutable folders, for root too)."""
    if not str(text).strip():
        raise params.ParameterError(f"{name} must be a folder path (created if missing), got {text!r}")
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise params.ParameterError(f"{name} {path} is a file; it must be a folder (created if missing)")
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise params.ParameterError(f"{name} {path} lies inside the file {existing}; it must be a folder path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise params.ParameterError(f"{name} {path}: folder {existing} is read-only; pass a writable folder")
    return path
