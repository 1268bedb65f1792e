"""The store's tables, its schema marker, and what is done to a file that lacks it.

Two tables: ``records`` (one row a ``(kind, config)``: its key, status, record, times, the code
fingerprint that made it, the lease's owner and heartbeat, the record's digest) and ``epochs``
(the per-epoch rows of long runs).  A store of this package carries a schema marker,
``PRAGMA application_id`` = ``APPLICATION_ID`` and ``user_version`` = ``SCHEMA_VERSION``; a file
without it is never written, even with tables named like ours, except a store of this package
from before markers, recognised column by column and upgraded in one transaction.  A corrupt file
(``PRAGMA quick_check``) and a database of another program are each a one-line ``StoreError``,
and the file is left untouched.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from implicitbias.store.errors import UNTOUCHED, StoreError

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "SCHEMA", "check_contents", "lay_out"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT,
    started REAL,
    finished REAL,
    code TEXT,
    owner TEXT,
    heartbeat REAL,
    digest TEXT
);
CREATE INDEX IF NOT EXISTS records_kind ON records(kind, status);
CREATE TABLE IF NOT EXISTS epochs (
    key TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (key, epoch)
);
"""
# stores written before schema markers (user_version 0) have the first 7, 8 or 10 records columns
# (code, then owner and heartbeat were added); layout 1 added digest and the marker
_UNMARKED_WIDTHS = (7, 8, 10)
APPLICATION_ID = 0x49424931  # "IBI1": PRAGMA application_id of every store of this package
SCHEMA_VERSION = 1  # PRAGMA user_version: the layout of SCHEMA


def check_contents(db: sqlite3.Connection, path: Path, readonly: bool) -> str:
    """A corrupt file or a database of another program is refused before anything is written;
    returns ``new`` (no tables yet), ``unmarked`` (a store of this package from before schema
    markers) or ``current``.

    ``PRAGMA quick_check`` runs on every open: it reads every page, so it finds truncation,
    torn and overwritten pages and broken b-trees, and costs 0.10 s (idle) to 0.17 s (load 7)
    for a 171 MB store of 10k run records with the file in the page cache, about 1 s per GB:
    less than importing torch, which every command that computes does
    (``benchmarks/bench_store_open.py``).  ``integrity_check`` also cross-checks every index
    against its table, 1.6x the time, for nothing a user does to a file that quick_check
    misses (an index of this store is rebuilt from its table by REINDEX), so it is not run.

    The schema marker: a store of this package has ``PRAGMA application_id`` = APPLICATION_ID
    and ``user_version`` = its layout's version, and exactly the tables, columns and index of
    that layout.  A store written before markers (both 0) is recognised by its layout, column
    by column (names, types, NOT NULL, keys) and index, and is stamped when opened writable.
    Anything else (another program's file, even with tables named like ours; a version of a
    newer package; a marked file whose layout does not match) is refused and never written.
    """
    check = db.execute("PRAGMA quick_check(1)").fetchone()
    if check is None or check[0] != "ok":
        found = " ".join(str(check and check[0]).split())[:200]
        raise StoreError(f"store {path} is corrupt (SQLite quick_check: {found}); {UNTOUCHED}")
    app = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    objects = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    tables = sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'"))
    width = _layout_width(db)
    if app == APPLICATION_ID and version == SCHEMA_VERSION and width == len(_REFERENCE_COLUMNS):
        return "current"
    if app == APPLICATION_ID and version > SCHEMA_VERSION:
        raise StoreError(f"store {path} was written by a newer implicitbias (store layout {version}, this "
                         f"one reads up to {SCHEMA_VERSION}); upgrade implicitbias, or pass --store another path")
    if app == APPLICATION_ID:
        raise StoreError(f"store {path} is damaged: its schema marker (layout {version}) does not match its "
                         f"tables ({', '.join(tables) or 'none'}); {UNTOUCHED}")
    if app == 0 and version == 0 and objects == 0:
        if readonly:
            raise StoreError(f"store {path} is empty and read-only; pass --store a writable path")
        return "new"
    if app == 0 and version == 0 and width in _UNMARKED_WIDTHS:
        if readonly and width < _UNMARKED_WIDTHS[-1]:
            raise StoreError(f"store {path} is of an older layout and read-only; open it once writable to upgrade it")
        return "unmarked"
    raise StoreError(
        f"store {path} is an SQLite database of another program (application_id {app}, user_version "
        f"{version}, tables: {', '.join(tables) or 'none'}); {UNTOUCHED}"
    )


def lay_out(db: sqlite3.Connection) -> None:
    """Create the tables of a new store, or upgrade an unmarked one (add the columns added since),
    and stamp the schema marker, in one transaction; what another process did first is kept."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            columns = {row[1] for row in db.execute("PRAGMA table_info(records)")}
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            for name, kind, *_ in _REFERENCE_COLUMNS:
                if name not in columns and columns:
                    db.execute(f"ALTER TABLE records ADD COLUMN {name} {kind}")
            db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _table_layout(db: sqlite3.Connection, table: str) -> list[tuple]:
    """``(name, type, notnull, default, pk)`` of each column of ``table``, in order."""
    return [tuple(row[1:]) for row in db.execute(f"PRAGMA table_info({table})")]


def _reference() -> tuple[list[tuple], list[tuple], list[tuple]]:
    """The layout of SCHEMA (records columns, epochs columns, records_kind index columns)."""
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    layout = (_table_layout(db, "records"), _table_layout(db, "epochs"),
              list(db.execute("PRAGMA index_info(records_kind)")))
    db.close()
    return layout


_REFERENCE_COLUMNS, _REFERENCE_EPOCHS, _REFERENCE_INDEX = _reference()


def _layout_width(db: sqlite3.Connection) -> int | None:
    """How many of this package's records columns the database has, in order, when it has exactly
    this package's tables and index and its records columns are the first ones of SCHEMA's;
    ``None`` for anything else."""
    tables = sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'"))
    indexes = sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL"))
    if tables != ["epochs", "records"] or indexes != ["records_kind"]:
        return None
    columns = _table_layout(db, "records")
    if (columns != _REFERENCE_COLUMNS[: len(columns)] or _table_layout(db, "epochs") != _REFERENCE_EPOCHS
            or list(db.execute("PRAGMA index_info(records_kind)")) != _REFERENCE_INDEX):
        return None
    return len(columns)
