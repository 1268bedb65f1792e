"""The store file as users leave it, read before SQLite writes anything, and the connection to it.

Opening checks the file first: a folder, a file that is not SQLite and a truncated file (shorter
than its header's page count, with no write-ahead log beside it) are each a one-line
``StoreError`` and the file is left untouched.  What a full disk leaves (a checkpoint that
rewrote page 1 and could not extend the file, the committed pages still in the write-ahead log)
is not truncation: SQLite reads the log, and the store finishes the checkpoint on open.  A store
that cannot be written (read-only file or folder, read-only filesystem) is connected read-only:
stored records are served, and anything that must write says so in one line.

The files this process has open are counted here.  SQLite's locks on a file are POSIX advisory
locks, which belong to the process: closing any descriptor of the file here releases them all
(another process could then take the file exclusively and remove the log under the open
connections: "How To Corrupt An SQLite Database File", s. 2.2).  So a file already open here is
not read again before SQLite connects; it was checked when it was first opened.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from implicitbias.store.errors import UNTOUCHED, StoreError
from implicitbias.store.paths import check_creatable

__all__ = ["OPEN_LOCK", "is_open", "count_in", "count_out", "check_file", "must_read_only", "connect"]

_SQLITE_MAGIC = b"SQLite format 3\x00"
_WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")  # a write-ahead log's header, either byte order
_OPEN_FILES: dict[Path, int] = {}  # resolved path -> how many Stores of this process hold it
OPEN_LOCK = threading.Lock()  # held while the counts are read or changed


def is_open(file: Path) -> bool:
    """Whether a Store of this process holds ``file`` (a resolved path); call under ``OPEN_LOCK``."""
    return bool(_OPEN_FILES.get(file))


def count_in(file: Path) -> None:
    """Count one more Store holding ``file``; call under ``OPEN_LOCK``."""
    _OPEN_FILES[file] = _OPEN_FILES.get(file, 0) + 1


def count_out(file: Path) -> None:
    """Count one Store fewer holding ``file``; call under ``OPEN_LOCK``."""
    left = _OPEN_FILES.get(file, 1) - 1
    if left:
        _OPEN_FILES[file] = left
    else:
        _OPEN_FILES.pop(file, None)


def check_file(p: Path) -> bool:
    """Reject, before SQLite touches it, a path that is a folder, not SQLite, or truncated.

    Returns whether the file is a torn checkpoint: its header counts more pages than the file
    holds, and a write-ahead log lies beside it.  That is what a full disk leaves (a checkpoint
    rewrote page 1, then could not extend the file); the log still holds every committed page,
    so SQLite reads them from it and the checkpoint is finished on open.  Without a log such a
    file is really truncated, and refused.
    """
    if p.is_dir():
        raise StoreError(f"store {p} is a folder; --store must name an SQLite file (created if missing)")
    if not p.exists():
        check_creatable(p)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"store {p} cannot be created ({exc.strerror}); pass --store a writable path") from None
        return False
    if not p.is_file():
        raise StoreError(f"store {p} is not a regular file; --store must name an SQLite file")
    try:
        with open(p, "rb") as fh:
            header = fh.read(100)
        size = p.stat().st_size
    except OSError as exc:
        raise StoreError(f"store {p} cannot be read ({exc.strerror})") from None
    if not header:
        return False  # an empty file is an empty database: SQLite lays the store out in it
    if not header.startswith(_SQLITE_MAGIC):
        raise StoreError(f"store {p} is not an SQLite database (it starts with {header[:16]!r}); {UNTOUCHED}")
    if len(header) < 100:
        raise StoreError(f"store {p} is truncated ({size} bytes, shorter than an SQLite header); {UNTOUCHED}")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # the in-header page count is valid when its version-valid-for number equals the change counter
    if header[92:96] == header[24:28] and size < pages * page_size:
        if _has_log(p):
            return True
        raise StoreError(
            f"store {p} is truncated ({size} bytes, its header says {pages * page_size}, and no write-ahead "
            f"log holds the rest); {UNTOUCHED}"
        )
    return False


def _has_log(path: Path) -> bool:
    """Whether a write-ahead log with at least its header lies beside ``path``."""
    try:
        with open(f"{path}-wal", "rb") as fh:
            head = fh.read(32)
    except OSError:
        return False
    return len(head) == 32 and head[:4] in _WAL_MAGIC


def must_read_only(path: Path) -> bool:
    """True when SQLite cannot write here: the file, or its folder (WAL files live beside it),
    is read-only (``os.access`` also sees read-only filesystems and immutable files)."""
    return path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def connect(path: Path, readonly: bool) -> sqlite3.Connection:
    """An autocommit connection to ``path`` (each statement its own transaction unless one is begun);
    read-only ones by URI."""
    if not readonly:
        return sqlite3.connect(path, timeout=60, isolation_level=None)
    uri = path.resolve().as_uri()
    # mode=ro needs the WAL index beside a WAL database; immutable=1 reads a file nobody can
    # write (it cannot be, here) without it
    for query in ("mode=ro", "immutable=1"):
        db = sqlite3.connect(f"{uri}?{query}", uri=True, timeout=60, isolation_level=None)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            db.close()
        except sqlite3.DatabaseError as exc:
            db.close()
            raise StoreError(f"store {path} cannot be used ({exc}); {UNTOUCHED}") from None
    raise StoreError(f"store {path} is read-only and SQLite cannot read it; copy it to a writable folder")
