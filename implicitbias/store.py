"""The results store: SQLite, keyed by a stable hash of a cell's or run's canonical config.

A record is identified by ``(kind, config)``; its key is the SHA-256 of the canonical JSON of
both (sorted keys, no whitespace), so the same config always maps to the same row and a rerun
returns the stored record instead of recomputing it.  Beside it the row keeps the fingerprint of
the code that computed it (``implicitbias.fingerprint``); a record is served only to a caller
whose code has the same fingerprint, so a record made by older code is never served: it counts
as missing and is recomputed (and replaced).  Each write is its own committed transaction (WAL
journal), so a process killed at any moment loses nothing that completed.  Rows carry a status:
``running`` (started, not finished: a partial record of an interrupted run), ``done`` or
``failed``; ``status`` reports a done record of other code as ``stale``.  Per-epoch rows of long
runs go to a second table; they are cleared when a run restarts under new code.

Only the client process writes (workers return records, the client stores them).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, as_completed
from pathlib import Path

import numpy as np

from implicitbias.fingerprint import code_fingerprint

__all__ = ["Store", "config_key", "default_store_path", "canonical_json"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT,
    started REAL,
    finished REAL,
    code TEXT
);
CREATE INDEX IF NOT EXISTS records_kind ON records(kind, status);
CREATE TABLE IF NOT EXISTS epochs (
    key TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (key, epoch)
);
"""


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


def default_store_path() -> Path:
    """``$IMPLICITBIAS_STORE``, else ``$XDG_CACHE_HOME/implicitbias/store.sqlite`` (~/.cache)."""
    if os.environ.get("IMPLICITBIAS_STORE"):
        return Path(os.environ["IMPLICITBIAS_STORE"]).expanduser()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "implicitbias" / "store.sqlite"


class Store:
    """An SQLite results store.  ``Store()`` opens the embedded default location."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path is not None else default_store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(records)")}
        if "code" not in columns:  # a store written before records carried code fingerprints
            self._db.execute("ALTER TABLE records ADD COLUMN code TEXT")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- single records -------------------------------------------------------------------
    # ``code`` is the fingerprint of the code that computes the kind: ``Store.code_of(fn)``.
    @staticmethod
    def code_of(fn: Callable) -> str:
        """The code fingerprint of ``fn`` (``implicitbias.fingerprint.code_fingerprint``), for
        callers below the front layer that are handed a store."""
        return code_fingerprint(fn)

    def status(self, kind: str, config: Mapping, *, code: str) -> str:
        """``missing``, ``running`` (interrupted or in progress), ``done``, ``failed`` or ``stale``
        (done by code with another fingerprint)."""
        row = self._db.execute(
            "SELECT status, code FROM records WHERE key=?", (config_key(kind, config),)
        ).fetchone()
        if row is None:
            return "missing"
        return "stale" if row[0] == "done" and row[1] != code else row[0]

    def get(self, kind: str, config: Mapping, *, code: str) -> dict | None:
        """The completed record of ``(kind, config)`` computed by code ``code``, or ``None``."""
        row = self._db.execute(
            "SELECT record FROM records WHERE key=? AND status='done' AND code=?",
            (config_key(kind, config), code),
        ).fetchone()
        return json.loads(row[0]) if row else None

    def mark_running(self, kind: str, config: Mapping, *, code: str) -> None:
        """Record that ``(kind, config)`` has started under ``code`` (kept as a partial record if
        killed); epoch rows left by other code are cleared."""
        key = config_key(kind, config)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            row = self._db.execute("SELECT code FROM records WHERE key=?", (key,)).fetchone()
            if row is not None and row[0] != code:
                self._db.execute("DELETE FROM epochs WHERE key=?", (key,))
            self._db.execute(
                "INSERT INTO records(key, kind, config, status, started, code) VALUES (?,?,?,'running',?,?) "
                "ON CONFLICT(key) DO UPDATE SET status='running', started=excluded.started, code=excluded.code "
                "WHERE records.status != 'done' OR records.code IS NOT excluded.code",
                (key, kind, canonical_json(config), time.time(), code),
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def put(self, kind: str, config: Mapping, record: Mapping, *, code: str, status: str = "done") -> None:
        """Store the record of ``(kind, config)`` made by code ``code`` (one committed transaction)."""
        self._db.execute(
            "INSERT INTO records(key, kind, config, status, record, started, finished, code) "
            "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET status=excluded.status, "
            "record=excluded.record, finished=excluded.finished, code=excluded.code",
            (
                config_key(kind, config),
                kind,
                canonical_json(config),
                status,
                canonical_json(record),
                time.time(),
                time.time(),
                code,
            ),
        )

    def records(self, kind: str, *, code: str, status: str = "done") -> list[tuple[dict, dict]]:
        """All ``(config, record)`` pairs of a kind made by code ``code`` with the given status, oldest first."""
        rows = self._db.execute(
            "SELECT config, record FROM records WHERE kind=? AND status=? AND code=? ORDER BY rowid",
            (kind, status, code),
        ).fetchall()
        return [(json.loads(c), json.loads(r) if r else None) for c, r in rows]

    def counts(self, kind: str) -> dict[str, int]:
        """Number of records of a kind per status (records of any code)."""
        rows = self._db.execute(
            "SELECT status, COUNT(*) FROM records WHERE kind=? GROUP BY status", (kind,)
        ).fetchall()
        return dict(rows)

    # -- per-epoch rows of long runs ---------------------------------------------------------
    def put_epoch(self, kind: str, config: Mapping, epoch: int, data: Mapping) -> None:
        """Store the row of one epoch of a run (idempotent: a rewritten epoch replaces)."""
        self._db.execute(
            "INSERT OR REPLACE INTO epochs(key, epoch, data) VALUES (?,?,?)",
            (config_key(kind, config), int(epoch), canonical_json(data)),
        )

    def epochs(self, kind: str, config: Mapping) -> list[dict]:
        """The stored epoch rows of a run, in epoch order."""
        rows = self._db.execute(
            "SELECT data FROM epochs WHERE key=? ORDER BY epoch", (config_key(kind, config),)
        ).fetchall()
        return [json.loads(r[0]) for r in rows]

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
        code: str | None = None,
    ) -> list[dict]:
        """Records of ``fn(config)`` for every config, in order, computing only the missing ones.

        Stored records of the same code (``code``, default ``code_fingerprint(fn)``) are returned
        as they are; missing, stale or interrupted configs are marked ``running``, submitted to
        ``executor`` (in-process when ``None``) and stored by this process the moment each
        completes, so a sweep killed at any point resumes where it stopped with nothing completed
        lost or repeated.
        """
        from tqdm.auto import tqdm

        code = code or code_fingerprint(fn)
        configs = [dict(c) for c in configs]
        results: list[dict | None] = [self.get(kind, c, code=code) for c in configs]
        todo = [i for i, r in enumerate(results) if r is None]
        bar = tqdm(
            total=len(configs),
            initial=len(configs) - len(todo),
            desc=desc or kind,
            disable=not progress or not todo,
            leave=False,
        )
        try:
            if executor is None:
                for i in todo:
                    self.mark_running(kind, configs[i], code=code)
                    results[i] = self._finish(kind, configs[i], fn(configs[i]), code)
                    bar.update()
            else:
                pending: dict = {}

                def harvest(futures) -> None:
                    for fut in futures:
                        i = pending.pop(fut)
                        results[i] = self._finish(kind, configs[i], fut.result(), code)
                        bar.update()

                for i in todo:
                    self.mark_running(kind, configs[i], code=code)
                    pending[executor.submit(fn, configs[i])] = i
                    # store whatever has finished already (all of it for an in-process executor)
                    harvest([f for f in pending if f.done()])
                harvest(as_completed(list(pending)))
        finally:
            bar.close()
        return results  # type: ignore[return-value]

    def _finish(self, kind: str, config: dict, record: Mapping, code: str) -> dict:
        record = json.loads(canonical_json(record))
        self.put(kind, config, record, code=code)
        return record
