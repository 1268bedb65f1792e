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

__all__ = ["parse_list", "output_folder", "check_free_space"]


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
