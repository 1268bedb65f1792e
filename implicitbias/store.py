"""The results store: SQLite, keyed by a stable hash of a cell's or run's canonical config.

A record is identified by ``(kind, config)``; its key is the SHA-256 of the canonical JSON of
both (sorted keys, no whitespace), so the same config always maps to the same row and a rerun
returns the stored record instead of recomputing it.  Beside it the row keeps the fingerprint of
the code that computed it (``implicitbias.fingerprint``); a record is served only to a caller
whose code has the same fingerprint, so a record made by older code is never served: it counts
as missing and is recomputed (and replaced).  Each write is its own committed transaction (WAL
journal), so a process killed at any moment loses nothing that completed.  Rows carry a status:
``running`` (started, not finished: a partial record of an interrupted run), ``done`` or
``failed`` (the cell raised; its record is ``{"error": message}`` and a rerun retries it);
``status`` reports a done record of other code as ``stale``.  Per-epoch rows of long runs go to
a second table; they are cleared when a run restarts under new code.

Leases.  A ``running`` row names its owner (host, pid, process start time and a token of the
``Store`` object) and a heartbeat time that a background thread renews every
``lease_seconds / 4`` while ``Store.map`` runs.  ``Store.map`` computes a cell only after taking
its lease, so two processes running the same sweep on one store compute each cell once: each
takes the cells nobody holds, then waits for the cells the other holds and reads their records.
A lease is dead, and its cell is taken over, when its heartbeat is older than ``lease_seconds``
(a holder on another host that was killed or lost), at once when its holder is a process of this
host that no longer exists (a SIGKILLed sweep is resumed without waiting), and when its holder
closed the store (a ``Store`` releases its leases on ``close``).

Files as users leave them.  Opening checks the file before SQLite writes anything to it: a folder,
a file that is not SQLite, a truncated file (shorter than its header's page count, with no
write-ahead log beside it), a corrupt file (``PRAGMA quick_check``) and a database of another
program are each a one-line ``StoreError`` and the file is left untouched.  A store of this
package carries a schema marker, ``PRAGMA application_id`` = ``APPLICATION_ID`` and
``user_version`` = ``SCHEMA_VERSION``; a file without it is never written, even with tables named
like ours, except a store of this package from before markers, recognised column by column and
upgraded in one transaction.  What a full disk leaves (a checkpoint that rewrote page 1 and could
not extend the file, the committed pages still in the write-ahead log) is not truncation: SQLite
reads the log and the checkpoint is finished on open.  A store that cannot be written (read-only
file or folder, read-only filesystem) is opened read-only: stored records are served, and
anything that must write says so in one line.

Records damaged inside a sound file (edited, overwritten: a record that is not the JSON written,
whose SHA-256 ``digest`` column no longer matches, or a config that is not the one its key was
made from) are never served: they count as missing, so a rerun recomputes and replaces them, and
``records`` refuses them in one line.

Only the client process writes (workers return records, the client stores them).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, CancelledError, Executor, ProcessPoolExecutor, as_completed, wait
from pathlib import Path

import numpy as np

from implicitbias.fingerprint import code_fingerprint
from implicitbias.store_inspect import StoreInspection
from implicitbias.theory.params import ParameterError

__all__ = ["Store", "StoreError", "CellError", "Interrupted", "config_key", "default_store_path", "canonical_json",
           "check_creatable", "check_store_path"]

_SCHEMA = """
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
SCHEMA_VERSION = 1  # PRAGMA user_version: the layout of _SCHEMA
_SQLITE_MAGIC = b"SQLite format 3\x00"
_WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")  # a write-ahead log's header, either byte order
_DRAIN_S = 0.5  # on an interrupt, how long results already on their way from workers are awaited
_CLOSED: set[str] = set()  # owner tags of the stores this process closed: their leases are over
# The store files this process has open, with how many Stores hold each.  SQLite's locks on a file are POSIX
# advisory locks, which belong to the process: closing any descriptor of the file here releases them all
# (another process could then take the file exclusively and remove the log under the open connections:
# "How To Corrupt An SQLite Database File", s. 2.2).  So a file already open here is not read again before
# SQLite connects (``_check_file``); it was checked when it was first opened.
_OPEN_FILES: dict[Path, int] = {}
_OPEN_LOCK = threading.Lock()
_UNTOUCHED = "it was left untouched; pass --store a new path (or restore the file from a copy)"


class StoreError(ParameterError):
    """A store file that cannot be used as asked: one line naming the file, what is wrong and
    what to do.  A ``ParameterError``, so the command line prints it and exits with status 2."""


class CellError(RuntimeError):
    """A cell of ``Store.map`` raised; it is recorded as ``failed`` with the message."""


class Interrupted(KeyboardInterrupt):
    """``Store.map`` stopped by an interrupt (SIGINT, or SIGTERM turned into one by the command
    line): how many of its cells are in the store and how many are left to a rerun."""

    def __init__(self, kind: str, stored: int, left: int):
        super().__init__(f"{kind}: {stored} stored, {left} left to a rerun")
        self.kind, self.stored, self.left = kind, stored, left


def _jsonable(obj):
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"cannot store a value of type {type(obj).__name__} in the results store")


def canonical_json(obj) -> str:
    """JSON with sorted keys and no whitespace; numpy values become plain Python values."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_jsonable)


def config_key(kind: str, config: Mapping) -> str:
    """Stable key of a config: SHA-256 of the canonical JSON of ``{"kind", "config"}``."""
    text = canonical_json({"kind": kind, "config": config})
    return hashlib.sha256(text.encode()).hexdigest()[:32]


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


class Store(StoreInspection):
    """An SQLite results store.  ``Store()`` opens the embedded default location.

    ``lease_seconds``: how long a lease lives without a heartbeat (see the module docstring).
    Inspection (summary, records, histories as DataFrames, export, prune): ``StoreInspection``.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, lease_seconds: float = 60.0):
        self.path = check_store_path(path if path is not None else default_store_path())
        self.lease_seconds = float(lease_seconds)
        self.owner = _owner_tag()
        self._digest = "digest"  # the records column of digests ("NULL" in a read-only store from before them)
        self._file = self.path.resolve()
        with _OPEN_LOCK:
            torn = False if _OPEN_FILES.get(self._file) else self._check_file()
            self.readonly = self._must_read_only()
            try:
                self._db = self._connect()
            except sqlite3.Error as exc:  # at open: say so, not "failed during the run"
                raise StoreError(f"store {self.path} cannot be opened by SQLite ({exc}); pass --store a path SQLite can "
                                 "open (a file in a folder you can write)") from None
            _OPEN_FILES[self._file] = _OPEN_FILES.get(self._file, 0) + 1
            self._counted = True
        try:
            layout = self._check_contents()
            if not self.readonly:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                if layout != "current":
                    self._lay_out()
                if torn:  # finish the checkpoint the full disk stopped; if it is still full, the log serves
                    with contextlib.suppress(sqlite3.OperationalError):
                        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError as exc:
            self._release_file()
            if "locked" in str(exc):
                raise StoreError(f"store {self.path} is busy: another process kept it locked for 60 s; try again") from None
            if "full" in str(exc):
                raise StoreError(f"store {self.path}: its filesystem is full ({exc}); free space and rerun "
                                 "(nothing stored is lost)") from None
            raise StoreError(f"store {self.path} cannot be used ({exc}); {_UNTOUCHED}") from None
        except sqlite3.DatabaseError as exc:
            self._release_file()
            raise StoreError(f"store {self.path} cannot be used ({exc}); {_UNTOUCHED}") from None
        except BaseException:
            self._release_file()
            raise

    def _release_file(self) -> None:
        """Close the connection and count this Store out of ``_OPEN_FILES`` (once, however often it is called)."""
        with _OPEN_LOCK:
            self._db.close()
            if not self._counted:
                return
            self._counted = False
            left = _OPEN_FILES.get(self._file, 1) - 1
            if left:
                _OPEN_FILES[self._file] = left
            else:
                _OPEN_FILES.pop(self._file, None)

    # -- opening: what users do to files ------------------------------------------------------
    def _check_file(self) -> bool:
        """Reject, before SQLite touches it, a path that is a folder, not SQLite, or truncated.

        Returns whether the file is a torn checkpoint: its header counts more pages than the file
        holds, and a write-ahead log lies beside it.  That is what a full disk leaves (a checkpoint
        rewrote page 1, then could not extend the file); the log still holds every committed page,
        so SQLite reads them from it and the checkpoint is finished on open.  Without a log such a
        file is really truncated, and refused.
        """
        p = self.path
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
            raise StoreError(f"store {p} is not an SQLite database (it starts with {header[:16]!r}); {_UNTOUCHED}")
        if len(header) < 100:
            raise StoreError(f"store {p} is truncated ({size} bytes, shorter than an SQLite header); {_UNTOUCHED}")
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        pages = int.from_bytes(header[28:32], "big")
        # the in-header page count is valid when its version-valid-for number equals the change counter
        if header[92:96] == header[24:28] and size < pages * page_size:
            if _has_log(p):
                return True
            raise StoreError(
                f"store {p} is truncated ({size} bytes, its header says {pages * page_size}, and no write-ahead "
                f"log holds the rest); {_UNTOUCHED}"
            )
        return False

    def _must_read_only(self) -> bool:
        """True when SQLite cannot write here: the file, or its folder (WAL files live beside it),
        is read-only (``os.access`` also sees read-only filesystems and immutable files)."""
        return self.path.exists() and not (os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK))

    def _connect(self) -> sqlite3.Connection:
        if not self.readonly:
            return sqlite3.connect(self.path, timeout=60, isolation_level=None)
        uri = self.path.resolve().as_uri()
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
                raise StoreError(f"store {self.path} cannot be used ({exc}); {_UNTOUCHED}") from None
        raise StoreError(f"store {self.path} is read-only and SQLite cannot read it; copy it to a writable folder")

    def _check_contents(self) -> str:
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
        check = self._db.execute("PRAGMA quick_check(1)").fetchone()
        if check is None or check[0] != "ok":
            found = " ".join(str(check and check[0]).split())[:200]
            raise StoreError(f"store {self.path} is corrupt (SQLite quick_check: {found}); {_UNTOUCHED}")
        app = self._db.execute("PRAGMA application_id").fetchone()[0]
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        objects = self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        tables = sorted(r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'"))
        width = _layout_width(self._db)
        if app == APPLICATION_ID and version == SCHEMA_VERSION and width == len(_REFERENCE_COLUMNS):
            return "current"
        if app == APPLICATION_ID and version > SCHEMA_VERSION:
            raise StoreError(f"store {self.path} was written by a newer implicitbias (store layout {version}, this "
                             f"one reads up to {SCHEMA_VERSION}); upgrade implicitbias, or pass --store another path")
        if app == APPLICATION_ID:
            raise StoreError(f"store {self.path} is damaged: its schema marker (layout {version}) does not match its "
                             f"tables ({', '.join(tables) or 'none'}); {_UNTOUCHED}")
        if app == 0 and version == 0 and objects == 0:
            if self.readonly:
                raise StoreError(f"store {self.path} is empty and read-only; pass --store a writable path")
            return "new"
        if app == 0 and version == 0 and width in _UNMARKED_WIDTHS:
            if self.readonly and width < _UNMARKED_WIDTHS[-1]:
                raise StoreError(f"store {self.path} is of an older layout and read-only; open it once writable to "
                                 "upgrade it")
            if self.readonly:  # served as it is: its records have no digests yet (checked as JSON objects)
                self._digest = "NULL"
            return "unmarked"
        raise StoreError(
            f"store {self.path} is an SQLite database of another program (application_id {app}, user_version "
            f"{version}, tables: {', '.join(tables) or 'none'}); {_UNTOUCHED}"
        )

    def _lay_out(self) -> None:
        """Create the tables of a new store, or upgrade an unmarked one (add the columns added since),
        and stamp the schema marker, in one transaction; what another process did first is kept."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if self._db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                columns = {row[1] for row in self._db.execute("PRAGMA table_info(records)")}
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                for name, kind, *_ in _REFERENCE_COLUMNS:
                    if name not in columns and columns:
                        self._db.execute(f"ALTER TABLE records ADD COLUMN {name} {kind}")
                self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def require_writable(self, what: str) -> None:
        """Raise a one-line StoreError naming ``what`` when this store was opened read-only."""
        if self.readonly:
            raise StoreError(
                f"store {self.path} is read-only: {what} needs a writable store "
                "(commands that only read stored results work); pass --store a writable path"
            )

    def close(self) -> None:
        """Release this store's leases (its interrupted cells stay ``running``: partial records) and close.
        Where the release cannot be written (a full disk), the leases still end for this process."""
        _CLOSED.add(self.owner)
        if not self.readonly:
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("UPDATE records SET owner=NULL WHERE owner=? AND status='running'", (self.owner,))
        self._release_file()

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called (a closed store serves and stores nothing)."""
        return not self._counted

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- single records -------------------------------------------------------------------
    # ``code`` is the fingerprint of the code that computes the kind: ``Store.code_of(fn)``.
    @staticmethod
    def code_of(fn: Callable, modules: Iterable[str] = ()) -> str:
        """The code fingerprint of ``fn`` and of ``modules`` it calls by name
        (``implicitbias.fingerprint.code_fingerprint``), for callers below the front layer that
        are handed a store."""
        return code_fingerprint(fn, modules)

    def status(self, kind: str, config: Mapping, *, code: str) -> str:
        """``missing``, ``running`` (interrupted or in progress), ``done``, ``failed``, ``stale``
        (done by code with another fingerprint) or ``damaged`` (its record fails its digest: it is
        recomputed like a missing one)."""
        row = self._db.execute(
            f"SELECT status, code, key, config, record, {self._digest} FROM records WHERE key=?", (config_key(kind, config),)
        ).fetchone()
        if row is None:
            return "missing"
        if row[0] == "done" and _intact(kind, *row[2:]) is None:
            return "damaged"
        return "stale" if row[0] == "done" and row[1] != code else row[0]

    def get(self, kind: str, config: Mapping, *, code: str) -> dict | None:
        """The completed record of ``(kind, config)`` computed by code ``code``, or ``None``."""
        row = self._db.execute(
            f"SELECT key, config, record, {self._digest} FROM records WHERE key=? AND status='done' AND code=?",
            (config_key(kind, config), code),
        ).fetchone()
        return None if row is None else _intact(kind, *row)

    def claim(self, kind: str, config: Mapping, *, code: str) -> str:
        """Take the lease on ``(kind, config)`` for this store: ``claimed`` (marked ``running``
        under ``code``; epoch rows left by other code are cleared), ``done`` (a record of this
        code is stored) or ``leased`` (a live holder is computing it)."""
        self.require_writable(f"computing {kind}")
        key = config_key(kind, config)
        query = "SELECT status, code, owner, heartbeat, key, config, record, digest FROM records WHERE key=?"

        def held(row, now) -> str | None:
            if row is not None and row[0] == "done" and row[1] == code and _intact(kind, *row[4:]) is not None:
                return "done"
            if row is not None and row[0] == "running" and self._alive(row[2], row[3], now):
                return "leased"
            return None

        # a read first: a process waiting on many cells held by others takes no write lock
        state = held(self._db.execute(query, (key,)).fetchone(), time.time())
        if state is not None:
            return state
        now = time.time()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            row = self._db.execute(query, (key,)).fetchone()
            state = held(row, now)
            if state is None:
                state = "claimed"
                if row is not None and row[1] != code:
                    self._db.execute("DELETE FROM epochs WHERE key=?", (key,))
                self._db.execute(
                    "INSERT INTO records(key, kind, config, status, started, code, owner, heartbeat) "
                    "VALUES (?,?,?,'running',?,?,?,?) ON CONFLICT(key) DO UPDATE SET status='running', record=NULL, "
                    "started=excluded.started, code=excluded.code, owner=excluded.owner, heartbeat=excluded.heartbeat",
                    (key, kind, canonical_json(config), now, code, self.owner, now),
                )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return state

    def _alive(self, owner: str | None, heartbeat: float | None, now: float) -> bool:
        """Whether a lease still holds: it has an owner other than this store, a heartbeat younger
        than ``lease_seconds``, and (on this host) its process still exists."""
        if (owner is None or owner == self.owner or owner in _CLOSED or heartbeat is None
                or now - heartbeat > self.lease_seconds):
            return False
        host, pid, started, _ = (owner.split("|") + ["", "", "", ""])[:4]
        if host != socket.gethostname() or not pid.isdigit():
            return True
        return _process_start(int(pid)) == started and started != ""

    def put(self, kind: str, config: Mapping, record: Mapping, *, code: str, status: str = "done") -> None:
        """Store the record of ``(kind, config)`` made by code ``code`` (one committed transaction;
        the cell's lease ends)."""
        self.require_writable(f"storing {kind}")
        text = canonical_json(record)
        self._db.execute(
            "INSERT INTO records(key, kind, config, status, record, started, finished, code, digest) "
            "VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET status=excluded.status, config=excluded.config, "
            "record=excluded.record, finished=excluded.finished, code=excluded.code, digest=excluded.digest, "
            "owner=NULL, heartbeat=NULL",
            (config_key(kind, config), kind, canonical_json(config), status, text, time.time(), time.time(), code,
             _digest(text)),
        )

    def records(self, kind: str, *, code: str, status: str = "done") -> list[tuple[dict, dict]]:
        """All ``(config, record)`` pairs of a kind made by code ``code`` with the given status, oldest
        first; a damaged row (config or record not what was written) is a one-line StoreError."""
        rows = self._db.execute(
            f"SELECT key, config, record, {self._digest} FROM records WHERE kind=? AND status=? AND code=? ORDER BY rowid",
            (kind, status, code),
        ).fetchall()
        pairs = [(_json_object(row[1]), _intact(kind, *row)) for row in rows]
        damaged = sum(r is None for _, r in pairs)
        if damaged:
            raise StoreError(
                f"store {self.path} holds {damaged} damaged {kind} record(s) (not the JSON this package wrote: edited "
                "or overwritten); rerun the sweep or report that made them to recompute them"
            )
        return pairs

    def counts(self, kind: str) -> dict[str, int]:
        """Number of records of a kind per status (records of any code)."""
        rows = self._db.execute(
            "SELECT status, COUNT(*) FROM records WHERE kind=? GROUP BY status", (kind,)
        ).fetchall()
        return dict(rows)

    # -- per-epoch rows of long runs ---------------------------------------------------------
    def put_epoch(self, kind: str, config: Mapping, epoch: int, data: Mapping) -> None:
        """Store the row of one epoch of a run (idempotent: a rewritten epoch replaces)."""
        self.require_writable(f"storing epochs of {kind}")
        self._db.execute(
            "INSERT OR REPLACE INTO epochs(key, epoch, data) VALUES (?,?,?)",
            (config_key(kind, config), int(epoch), canonical_json(data)),
        )

    def epochs(self, kind: str, config: Mapping) -> list[dict]:
        """The stored epoch rows of a run, in epoch order (rows that are not JSON objects are left out)."""
        rows = self._db.execute(
            "SELECT data FROM epochs WHERE key=? ORDER BY epoch", (config_key(kind, config),)
        ).fetchall()
        return [row for row in (_json_object(r[0]) for r in rows) if row is not None]

    # -- sweeps ------------------------------------------------------------------------------
    def map(
        self,
        kind: str,
        fn: Callable[[dict], Mapping],
        configs: Sequence[Mapping] | Iterable[Mapping],
        *,
        executor: Executor | None = None,
        progress: bool = True,
        desc: str | None = None,
        code: str | Callable[[Mapping], str] | None = None,
    ) -> list[dict]:
        """Records of ``fn(config)`` for every config, in order, computing only the missing ones.

        Stored records of the same code (``code``, default ``code_fingerprint(fn)``; a function of
        the config where configs differ in the code they run, e.g. ``validation.run.run_codes``) are
        returned as they are.  Each missing, stale, failed or interrupted config is leased, submitted to
        ``executor`` (in-process when ``None``) and stored by this process the moment it
        completes, so a sweep killed at any point resumes where it stopped with nothing completed
        lost or repeated.  Configs leased by another live process are waited for and read when
        done (or taken over when the lease dies).  A config whose ``fn`` raises is stored as
        ``failed`` with the message and the error is raised (a ``CellError`` naming the cell,
        unless it is a ``ParameterError``); one whose executor ended under it (a killed worker, a
        cancelled call) is released unfinished, not failed, and a ``CellError`` says so.  An interrupt (``KeyboardInterrupt``) stops handing out
        cells at once: queued cells are cancelled, results that have finished (or arrive within
        ``_DRAIN_S``) are stored, the unfinished cells are released (a rerun resumes them), and
        ``Interrupted`` says how many are stored and how many are left.  A process pool is handed
        one cell per worker at a time (what it is handed it runs, cancelled or not), Dask executors
        every cell at once (Dask cancels what has not started).
        """
        from tqdm.auto import tqdm

        configs = [dict(c) for c in configs]
        fixed = None if callable(code) else code or code_fingerprint(fn)
        codes = [code(c) if callable(code) else fixed for c in configs]
        results: list[dict | None] = [self.get(kind, c, code=k) for c, k in zip(configs, codes)]
        todo = [i for i, r in enumerate(results) if r is None]
        if todo:
            self.require_writable(f"computing {len(todo)} missing {kind} records")
        bar = tqdm(
            total=len(configs),
            initial=len(configs) - len(todo),
            desc=desc or kind,
            disable=not progress or not todo,
            leave=False,
        )

        def finish(i: int, compute: Callable[[], Mapping]) -> None:
            try:
                record = compute()
            except (BrokenExecutor, CancelledError) as exc:  # the pool ended under the cell: unfinished, not failed
                raise CellError(f"{kind} cell {canonical_json(configs[i])[:200]} was not finished ({_one_line(exc)}); "
                                "a rerun computes it") from exc
            except Exception as exc:
                self._fail(kind, configs[i], exc, codes[i])
                if isinstance(exc, ParameterError):
                    raise
                raise CellError(f"{kind} cell {canonical_json(configs[i])[:200]} failed: {_one_line(exc)}") from exc
            results[i] = json.loads(canonical_json(record))
            self.put(kind, configs[i], results[i], code=codes[i])
            bar.update()

        # a process pool starts whatever it is handed as soon as a worker frees, beyond the reach of
        # cancel (its call queue): it is handed one cell per worker, so that an interrupt stops at once
        slots = executor._max_workers if isinstance(executor, ProcessPoolExecutor) else None

        def run(indices: list[int]) -> list[int]:
            """Compute the given cells this process can lease; return those others hold."""
            held, pending = [], {}
            try:
                for i in indices:
                    state = self.claim(kind, configs[i], code=codes[i])
                    if state == "leased":
                        held.append(i)
                    elif state == "done":
                        results[i] = self.get(kind, configs[i], code=codes[i])
                        bar.update()
                    elif executor is None:
                        finish(i, lambda: fn(configs[i]))
                    else:
                        pending[executor.submit(fn, configs[i])] = i
                        while True:  # store what has finished; a process pool gets a cell only for a free worker
                            for fut in [f for f in pending if f.done()]:
                                finish(pending.pop(fut), fut.result)
                            if slots is None or len(pending) < slots:
                                break
                            wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in as_completed(list(pending)):
                    finish(pending.pop(fut), fut.result)
            except KeyboardInterrupt:
                # stop handing out cells, and store those that finished (or whose results are on their way)
                for fut in pending:
                    fut.cancel()
                for fut in wait(list(pending), timeout=_DRAIN_S).done:
                    if not fut.cancelled() and fut.exception() is None:
                        finish(pending.pop(fut), fut.result)
                raise
            finally:
                for fut in pending:
                    fut.cancel()
            return held

        try:
            with self._heartbeat() if todo else contextlib.nullcontext():
                waiting = run(todo)
                while waiting:  # cells another process computes: read them when done, take them over if it dies
                    time.sleep(min(1.0, self.lease_seconds / 10))
                    waiting = run(waiting)
        except KeyboardInterrupt as exc:
            left = sum(r is None for r in results)
            raise Interrupted(kind, len(configs) - left, left) from exc
        finally:
            bar.close()
            if todo:
                self._db.execute("UPDATE records SET owner=NULL WHERE owner=? AND status='running'", (self.owner,))
        return results  # type: ignore[return-value]

    def _fail(self, kind: str, config: dict, exc: BaseException, code: str) -> None:
        self.put(kind, config, {"error": _one_line(exc)}, code=code, status="failed")

    @contextlib.contextmanager
    def _heartbeat(self):
        """Renew this store's leases every ``lease_seconds / 4`` from a thread with its own
        connection (the main thread may be busy computing a cell for minutes)."""
        stop = threading.Event()

        def beat() -> None:
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            try:
                while not stop.wait(self.lease_seconds / 4):
                    with contextlib.suppress(sqlite3.OperationalError):  # busy: the next beat renews
                        db.execute("UPDATE records SET heartbeat=? WHERE owner=? AND status='running'",
                                   (time.time(), self.owner))
            finally:
                db.close()

        thread = threading.Thread(target=beat, name="store-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text[:500]}"


def _process_start(pid: int) -> str:
    """The start time of process ``pid`` (clock ticks since boot, from /proc), "" when it does
    not exist; with /proc missing (not Linux), "?" while the pid exists.  With the pid it
    identifies a process: a reused pid has another start time."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return ""
    except (OSError, IndexError):
        return ""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return ""
    except PermissionError:
        pass
    return "?"


def _owner_tag() -> str:
    """``host|pid|process start|token``: who holds a lease (the token tells two stores of one process apart)."""
    pid = os.getpid()
    return f"{socket.gethostname()}|{pid}|{_process_start(pid)}|{uuid.uuid4().hex[:8]}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _json_object(text) -> dict | None:
    """``text`` parsed when it is a JSON object, else ``None``."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _intact(kind: str, key: str, config, text, digest) -> dict | None:
    """The record of row ``key`` when the row is what ``put`` wrote (its config is the one the key
    was made from; the record matches its digest, or, in a row from before digests, is a JSON
    object), else ``None``: a damaged record counts as missing and is recomputed."""
    config = _json_object(config)
    if config is None or config_key(kind, config) != key:
        return None
    if digest is not None and (not isinstance(text, str) or _digest(text) != digest):
        return None
    return _json_object(text)


def _has_log(path: Path) -> bool:
    """Whether a write-ahead log with at least its header lies beside ``path``."""
    try:
        with open(f"{path}-wal", "rb") as fh:
            head = fh.read(32)
    except OSError:
        return False
    return len(head) == 32 and head[:4] in _WAL_MAGIC


def _table_layout(db: sqlite3.Connection, table: str) -> list[tuple]:
    """``(name, type, notnull, default, pk)`` of each column of ``table``, in order."""
    return [tuple(row[1:]) for row in db.execute(f"PRAGMA table_info({table})")]


def _reference() -> tuple[list[tuple], list[tuple], list[tuple]]:
    """The layout of _SCHEMA (records columns, epochs columns, records_kind index columns)."""
    db = sqlite3.connect(":memory:")
    db.executescript(_SCHEMA)
    layout = (_table_layout(db, "records"), _table_layout(db, "epochs"),
              list(db.execute("PRAGMA index_info(records_kind)")))
    db.close()
    return layout


_REFERENCE_COLUMNS, _REFERENCE_EPOCHS, _REFERENCE_INDEX = _reference()


def _layout_width(db: sqlite3.Connection) -> int | None:
    """How many of this package's records columns the database has, in order, when it has exactly
    this package's tables and index and its records columns are the first ones of _SCHEMA's;
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
