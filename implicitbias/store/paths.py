"""Where the store file is: the path a user names, checked before anything opens or creates it, and
the default location.

A store is a file you named (``docs/guarantees.md``): ``:memory:`` (which keeps nothing), ``file:``
URIs (which SQLite reads as URIs, not as the path checked) and paths longer than SQLite opens are
refused in one line before anything runs.  The default store follows the XDG base directory
specification; an empty or relative ``HOME`` is refused, never the filesystem root.
"""

from __future__ import annotations

import os
from pathlib import Path

from implicitbias.store.errors import StoreError

__all__ = ["MAX_PATH_BYTES", "check_store_path", "default_store_path", "check_creatable"]

# SQLite's unix files take paths of at most 512 bytes, and its journal's name ("-journal" added) must
# fit too: a longer store path fails at open with "unable to open database file"
MAX_PATH_BYTES = 504


def check_store_path(path: str | os.PathLike) -> Path:
    """The store file ``path`` names (``~`` expanded), checked before anything opens or creates it
    (a StoreError otherwise): not empty, not SQLite's ``:memory:`` (which keeps nothing), not a
    ``file:`` URI (SQLite reads it as a URI, not as the path the package checks), and short enough
    for SQLite to open (``MAX_PATH_BYTES``)."""
    text = os.fspath(path)
    if not text.strip():
        raise StoreError("store must be the path of an SQLite file (created if missing), got ''")
    if text == ":memory:" or text.startswith("file:"):
        raise StoreError(f"store must be the path of an SQLite file on disk, got {text!r}: ':memory:' keeps nothing "
                         "and 'file:' URIs are not paths; pass a plain path such as ./store.sqlite")
    found = Path(text).expanduser()
    size = len(os.fsencode(found.resolve()))
    if size > MAX_PATH_BYTES:
        raise StoreError(f"store path must be at most {MAX_PATH_BYTES} bytes long (SQLite cannot open longer ones), "
                         f"got {size} bytes: {text[:40]}...; pass a shorter path")
    return found


def default_store_path() -> Path:
    """``$IMPLICITBIAS_STORE`` (set but empty: a StoreError), else
    ``$XDG_CACHE_HOME/implicitbias/store.sqlite``, else ``$HOME/.cache/implicitbias/store.sqlite``.
    As the XDG base directory specification says, an ``XDG_CACHE_HOME`` that is empty or relative
    is ignored; a ``HOME`` that is empty or relative is refused (a StoreError: it would put the store
    at the filesystem root, or wherever the command happens to run)."""
    if "IMPLICITBIAS_STORE" in os.environ:
        if not os.environ["IMPLICITBIAS_STORE"].strip():
            raise StoreError("IMPLICITBIAS_STORE is set but empty; set it to the path of an SQLite file, or unset it "
                             "for the default store")
        return Path(os.environ["IMPLICITBIAS_STORE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "implicitbias" / "store.sqlite"
    home = os.environ.get("HOME")
    if home is not None and not os.path.isabs(home):
        raise StoreError(f"HOME must be an absolute path for the default store ($HOME/.cache/implicitbias), got "
                         f"{home!r}; set HOME or XDG_CACHE_HOME, or pass --store (or IMPLICITBIAS_STORE) a path")
    try:
        return Path.home() / ".cache" / "implicitbias" / "store.sqlite"
    except RuntimeError:  # no HOME and no home directory in the password database
        raise StoreError("the default store needs HOME or XDG_CACHE_HOME; pass --store (or IMPLICITBIAS_STORE) a "
                         "path") from None


def check_creatable(path: Path) -> None:
    """StoreError unless a store could be created at ``path`` (which does not exist): its nearest
    existing ancestor is a folder this process can write in.  Creates nothing."""
    parent = next((q for q in path.parents if q.exists()), Path("."))
    if not parent.is_dir():
        raise StoreError(f"store {path} cannot be created: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise StoreError(f"store {path} cannot be created: folder {parent} is read-only; pass --store a writable path")
