"""``Store``: the results store's one object, opening a file, serving and storing records, mapping a
function over configs.

It holds the SQLite connection and this process's owner tag, and reads and writes the rows; the
work is in the sibling modules: ``files`` and ``schema`` decide whether a file may be opened and
lay it out, ``records`` makes keys and digests, ``leases`` takes and renews leases, ``scheduler``
runs ``map``.  A record is served only to a caller whose code has the fingerprint it was made by
(``implicitbias.fingerprint``); one made by other code counts as missing and is recomputed (and
replaced).  Each write is its own committed transaction (WAL journal), so a process killed at any
moment loses nothing that completed.  Rows carry a status: ``running`` (started, not finished: a
partial record of an interrupted run), ``done`` or ``failed`` (the cell raised; its record is
``{"error": message}`` and a rerun retries it); ``status`` reports a done record of other code as
``stale``.  Per-epoch rows of long runs go to a second table; they are cleared when a run restarts
under new code.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor

import implicitbias.store.files as files
import implicitbias.store.leases as leases
import implicitbias.store.scheduler as scheduler
import implicitbias.store.schema as schema
from implicitbias.fingerprint import code_fingerprint
from implicitbias.store.errors import UNTOUCHED, StoreError
from implicitbias.store.inspection import StoreInspection
from implicitbias.store.paths import check_store_path, default_store_path
from implicitbias.store.records import canonical_json, config_key, digest, intact, json_object

__all__ = ["Store"]


class Store(StoreInspection):
    """An SQLite results store.  ``Store()`` opens the embedded default location.

    ``lease_seconds``: how long a lease lives without a heartbeat (``implicitbias.store.leases``).
    Inspection (summary, records, histories as DataFrames, export, prune): ``StoreInspection``.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, lease_seconds: float = 60.0):
        self.path = check_store_path(path if path is not None else default_store_path())
        self.lease_seconds = float(lease_seconds)
        self.owner = leases.owner_tag()
        self._file = self.path.resolve()
        torn = self._open()
        try:
            self._prepare(torn)
        except sqlite3.OperationalError as exc:
            self._release_file()
            if "locked" in str(exc):
                raise StoreError(f"store {self.path} is busy: another process kept it locked for 60 s; "
                                 "try again") from None
            if "full" in str(exc):
                raise StoreError(f"store {self.path}: its filesystem is full ({exc}); free space and rerun "
                                 "(nothing stored is lost)") from None
            raise StoreError(f"store {self.path} cannot be used ({exc}); {UNTOUCHED}") from None
        except sqlite3.DatabaseError as exc:
            self._release_file()
            raise StoreError(f"store {self.path} cannot be used ({exc}); {UNTOUCHED}") from None
        except BaseException:
            self._release_file()
            raise

    # -- opening: what users do to files ------------------------------------------------------
    def _open(self) -> bool:
        """Check the file (unless this process has it open already), connect and count this Store in;
        returns whether the file is a torn checkpoint (``files.check_file``)."""
        with files.OPEN_LOCK:
            torn = False if files.is_open(self._file) else files.check_file(self.path)
            self.readonly = files.must_read_only(self.path)
            try:
                self._db = self._connect()
            except sqlite3.Error as exc:  # at open: say so, not "failed during the run"
                raise StoreError(f"store {self.path} cannot be opened by SQLite ({exc}); pass --store a path "
                                 "SQLite can open (a file in a folder you can write)") from None
            files.count_in(self._file)
            self._counted = True
        return torn

    def _connect(self) -> sqlite3.Connection:
        """This store's connection (``files.connect``), read-only where ``must_read_only`` says so."""
        return files.connect(self.path, self.readonly)

    def _prepare(self, torn: bool) -> None:
        """Refuse what is not a sound store of this package; a writable one gets the WAL journal, its
        tables and marker when it lacks them, and the checkpoint a full disk stopped."""
        layout = schema.check_contents(self._db, self.path, self.readonly)
        # the records column of digests: a read-only store from before them is served without ("NULL")
        self._digest = "NULL" if self.readonly and layout == "unmarked" else "digest"
        if self.readonly:
            return
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        if layout != "current":
            schema.lay_out(self._db)
        if torn:  # finish the checkpoint the full disk stopped; if it is still full, the log serves
            with contextlib.suppress(sqlite3.OperationalError):
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _release_file(self) -> None:
        """Close the connection and count this Store out of the open files (once, however often it is called)."""
        with files.OPEN_LOCK:
            self._db.close()
            if not self._counted:
                return
            self._counted = False
            files.count_out(self._file)

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
        leases.CLOSED.add(self.owner)
        if not self.readonly:
            with contextlib.suppress(sqlite3.Error):
                leases.release(self._db, self.owner)
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
            f"SELECT status, code, key, config, record, {self._digest} FROM records WHERE key=?",
            (config_key(kind, config),),
        ).fetchone()
        if row is None:
            return "missing"
        if row[0] == "done" and intact(kind, *row[2:]) is None:
            return "damaged"
        return "stale" if row[0] == "done" and row[1] != code else row[0]

    def get(self, kind: str, config: Mapping, *, code: str) -> dict | None:
        """The completed record of ``(kind, config)`` computed by code ``code``, or ``None``."""
        row = self._db.execute(
            f"SELECT key, config, record, {self._digest} FROM records WHERE key=? AND status='done' AND code=?",
            (config_key(kind, config), code),
        ).fetchone()
        return None if row is None else intact(kind, *row)

    def claim(self, kind: str, config: Mapping, *, code: str) -> str:
        """Take the lease on ``(kind, config)`` for this store: ``claimed`` (marked ``running``
        under ``code``; epoch rows left by other code are cleared), ``done`` (a record of this
        code is stored) or ``leased`` (a live holder is computing it)."""
        self.require_writable(f"computing {kind}")
        return leases.claim(self._db, kind, config, code=code, holder=self.owner, lease_seconds=self.lease_seconds)

    def _alive(self, owner: str | None, heartbeat: float | None, now: float) -> bool:
        """Whether a lease still holds against this store (``leases.alive``)."""
        return leases.alive(owner, heartbeat, now, holder=self.owner, lease_seconds=self.lease_seconds)

    def _leasing(self):
        """A block under which this store's leases are renewed, and released when it ends (``leases.leasing``)."""
        return leases.leasing(self._db, self.path, self.owner, self.lease_seconds)

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
             digest(text)),
        )

    def records(self, kind: str, *, code: str, status: str = "done") -> list[tuple[dict, dict]]:
        """All ``(config, record)`` pairs of a kind made by code ``code`` with the given status, oldest
        first; a damaged row (config or record not what was written) is a one-line StoreError."""
        rows = self._db.execute(
            f"SELECT key, config, record, {self._digest} FROM records WHERE kind=? AND status=? AND code=? "
            "ORDER BY rowid",
            (kind, status, code),
        ).fetchall()
        pairs = [(json_object(row[1]), intact(kind, *row)) for row in rows]
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
        return [row for row in (json_object(r[0]) for r in rows) if row is not None]

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
        cancelled call) is released unfinished, not failed, and a ``CellError`` says so.  An
        interrupt (``KeyboardInterrupt``) stops handing out cells at once: queued cells are
        cancelled, results that have finished (or arrive within ``scheduler.DRAIN_S``) are stored,
        the unfinished cells are released (a rerun resumes them), and ``Interrupted`` says how many
        are stored and how many are left.  A process pool is handed one cell per worker at a time
        (what it is handed it runs, cancelled or not), Dask executors every cell at once (Dask
        cancels what has not started).  The steps: ``implicitbias.store.scheduler``.
        """
        return scheduler.map_records(self, kind, fn, configs, executor=executor, progress=progress, desc=desc,
                                     code=code)
