"""Looking into a results store: what it holds, one record, its runs' histories, and pruning.

``StoreInspection`` is a mixin of ``Store`` (``implicitbias.store.facade``; it reads the store's
SQLite connection ``_db``); every table it returns is a pandas DataFrame, so a notebook shows it and
``to_csv``/``to_parquet`` write it:

- ``summary_frame()``: one row per kind and status: records, code fingerprints, epoch rows,
  bytes (config + record + epoch rows, as stored), first and last write, age of the last write.
- ``records_frame(kind, status)``: one row per record (key, kind, status, code, times, bytes).
- ``record_of(key)``: one record (a ``StoredRecord``), by its key or a unique prefix of it.
- ``runs_frame(kind)``: one row per record, its config and the scalars of its record flattened
  into columns (``config.lr``, ``record.summary.final_test_acc``; ``pandas.json_normalize``).
- ``history_frame(kind)``: the per-epoch histories in long format, columns ``run`` (the key),
  ``kind``, ``epoch``, ``metric``, ``value``: a finished run's ``history`` list (rows carrying
  ``epoch``, or numbered from 0), else the epoch rows an unfinished run stored as it went.
- ``export(folder, format)``: ``runs`` and ``history`` as CSV or Parquet (Parquet needs pyarrow:
  ``pip install implicitbias[parquet]``).
- ``prune(failed=..., old_code=..., kind=..., dry_run=...)``: delete failed cells and records of
  old code (with their epoch rows), in one transaction; returns what was (or, dry, would be)
  deleted.

Old code.  A record is served only to code with its fingerprint (``implicitbias.fingerprint``),
so a record whose code has changed since is dead weight.  The store does not know which code is
current; the newest fingerprint of a code group is taken as current, a group being the records
of one kind that run the same code: one kind, and for runs whose ``arch`` or ``dataset`` name a
user's module (``validation.external``) each such (arch, dataset) pair, whose fingerprint covers
those modules.  Every other fingerprint of the group is old.  ``dry_run`` shows what goes first.
Times are UTC.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from implicitbias.theory.params import ParameterError

__all__ = ["StoreInspection", "StoredRecord", "EXPORT_FORMATS"]

EXPORT_FORMATS = ("csv", "parquet")
_BYTES = "length(r.config) + coalesce(length(r.record), 0)"


@dataclass(frozen=True)
class StoredRecord:
    """One row of the store: its key, kind, status, code fingerprint, start and finish times
    (seconds since the epoch, UTC; None where not reached), config, record (None while running)
    and the number of epoch rows it stored."""

    key: str
    kind: str
    status: str
    code: str | None
    started: float | None
    finished: float | None
    config: dict
    record: dict | None
    epochs: int

    def to_dict(self) -> dict:
        """The fields as plain values (for JSON)."""
        return dict(self.__dict__)


class StoreInspection:
    """The inspection methods of ``Store`` (module docstring)."""

    def summary_frame(self):
        """One row per (kind, status): records, fingerprints, epoch_rows, bytes, first, last, age."""
        import pandas as pd

        frame = pd.read_sql_query(
            f"""SELECT r.kind, r.status, COUNT(*) AS records, COUNT(DISTINCT r.code) AS fingerprints,
                   coalesce(SUM(e.rows), 0) AS epoch_rows, SUM({_BYTES} + coalesce(e.bytes, 0)) AS bytes,
                   MIN(coalesce(r.finished, r.started)) AS first, MAX(coalesce(r.finished, r.started)) AS last
                FROM records r LEFT JOIN (SELECT key, COUNT(*) AS rows, SUM(length(data)) AS bytes
                                          FROM epochs GROUP BY key) e ON e.key = r.key
                GROUP BY r.kind, r.status ORDER BY r.kind, r.status""",
            self._db,
        )
        for column in ("first", "last"):
            frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
        frame["age"] = pd.Timestamp.now(tz="UTC") - frame["last"]
        return frame

    def records_frame(self, kind: str | None = None, status: str | None = None):
        """One row per record (of ``kind`` and ``status`` when given): key, kind, status, code,
        started, finished, bytes, epoch_rows; oldest first."""
        import pandas as pd

        where, args = self._where(kind, status)
        frame = pd.read_sql_query(
            f"""SELECT r.key, r.kind, r.status, r.code, r.started, r.finished, {_BYTES} AS bytes,
                   (SELECT COUNT(*) FROM epochs e WHERE e.key = r.key) AS epoch_rows
                FROM records r {where} ORDER BY r.rowid""",
            self._db, params=args,
        )
        for column in ("started", "finished"):
            frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
        return frame

    def record_of(self, key: str) -> StoredRecord:
        """The record whose key is ``key`` or starts with it (a unique prefix of at least 4 characters)."""
        key = str(key).strip().lower()
        if len(key) < 4 or any(c not in "0123456789abcdef" for c in key):
            raise ParameterError(f"key must be a record key or a prefix of at least 4 of its hex digits, got {key!r}")
        rows = self._db.execute(
            "SELECT key, kind, status, code, started, finished, config, record FROM records WHERE key >= ? AND key < ? "
            "LIMIT 2", (key, key + "g"),
        ).fetchall()
        if len(rows) != 1:
            what = "no record" if not rows else "more than one record"
            raise ParameterError(f"key {key}: {what} in store {self.path} has a key starting so "
                                 "(implicitbias store ls --records lists them)")
        key, kind, status, code, started, finished, config, record = rows[0]
        (epochs,) = self._db.execute("SELECT COUNT(*) FROM epochs WHERE key=?", (key,)).fetchone()
        return StoredRecord(key, kind, status, code, started, finished, _json(config) or {}, _json(record), epochs)

    def runs_frame(self, kind: str | None = None):
        """One row per record of ``kind`` (every kind when None): key as ``run``, kind, status,
        code, finished, then ``config.*`` and the scalars of ``record.*`` (lists are left out: the
        history is ``history_frame``)."""
        import pandas as pd

        where, args = self._where(kind, None)
        rows = []
        for key, kind_, status, code, finished, config, record in self._db.execute(
                f"SELECT key, kind, status, code, finished, config, record FROM records r {where} ORDER BY rowid", args):
            rows.append({"run": key, "kind": kind_, "status": status, "code": code, "finished": finished,
                         "config": _scalars(_json(config)), "record": _scalars(_json(record))})
        frame = pd.json_normalize(rows) if rows else pd.DataFrame(columns=["run", "kind", "status", "code", "finished"])
        frame["finished"] = pd.to_datetime(frame["finished"], unit="s", utc=True)
        frame = frame.convert_dtypes()  # integers stay integers where other kinds leave gaps
        for column in frame.select_dtypes("object").columns:  # one config key, values of several types
            values = frame[column]
            if len({type(v) for v in values.dropna()}) > 1:  # e.g. L = 2 and L = "inf": text, as Parquet needs
                frame[column] = values.map(lambda v: None if pd.isna(v) else str(v)).astype("string")
        return frame

    def history_frame(self, kind: str | None = None):
        """The per-epoch histories of ``kind``'s records (every kind when None) in long format:
        run, kind, epoch, metric, value (numbers only; nested metrics named ``a.b``)."""
        import pandas as pd

        where, args = self._where(kind, None)
        out = []
        for key, kind_, record in self._db.execute(f"SELECT key, kind, record FROM records r {where} ORDER BY rowid",
                                                   args).fetchall():
            history = (_json(record) or {}).get("history")
            if not isinstance(history, list):
                history = [_json(d) for (d,) in self._db.execute("SELECT data FROM epochs WHERE key=? ORDER BY epoch",
                                                                 (key,))]
            for i, row in enumerate(h for h in history if isinstance(h, Mapping)):
                epoch = row.get("epoch", i)
                out += [(key, kind_, epoch, metric, value) for metric, value in _numbers(row) if metric != "epoch"]
        return pd.DataFrame(out, columns=["run", "kind", "epoch", "metric", "value"])

    def export(self, folder: str | Path, format: str = "csv", kind: str | None = None) -> dict[str, Path]:
        """Write ``runs`` and ``history`` (``runs_frame``, ``history_frame``) of ``kind`` into
        ``folder`` as ``runs.csv``/``history.csv`` or ``.parquet``; their paths by name."""
        if format not in EXPORT_FORMATS:
            raise ParameterError(f"format must be one of {', '.join(EXPORT_FORMATS)}; got {format!r}")
        if format == "parquet":
            try:
                import pyarrow  # noqa: F401  (pandas writes Parquet through it)
            except ImportError:
                raise ParameterError("format parquet needs pyarrow: pip install 'implicitbias[parquet]' "
                                     "(or export --format csv)") from None
        folder = Path(folder).expanduser()
        folder.mkdir(parents=True, exist_ok=True)
        paths = {}
        for name, frame in (("runs", self.runs_frame(kind)), ("history", self.history_frame(kind))):
            paths[name] = folder / f"{name}.{format}"
            if format == "csv":
                frame.to_csv(paths[name], index=False)
            else:
                frame.to_parquet(paths[name], index=False)
        return paths

    def prune(self, *, failed: bool = False, old_code: bool = False, kind: str | None = None, dry_run: bool = False):
        """Delete (``dry_run``: only list) the failed records and the records of old code (module
        docstring) of ``kind`` (every kind when None), with their epoch rows; the deleted records
        as ``records_frame`` rows."""
        if not (failed or old_code):
            raise ParameterError("prune needs what to delete: failed and/or old_code")
        frame = self.records_frame(kind)
        doomed = frame["status"].eq("failed") & failed
        if old_code:
            doomed |= frame["key"].isin(self._old_code_keys(kind))
        frame = frame[doomed].reset_index(drop=True)
        if dry_run or frame.empty:
            return frame
        self.require_writable(f"pruning {len(frame)} records")
        keys = [(k,) for k in frame["key"]]
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany("DELETE FROM epochs WHERE key=?", keys)
            self._db.executemany("DELETE FROM records WHERE key=?", keys)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return frame

    def _old_code_keys(self, kind: str | None) -> set[str]:
        """Keys of the records whose fingerprint is not the newest of their code group."""
        where, args = self._where(kind, None)
        newest: dict[tuple, tuple[float, str]] = {}
        rows = []
        for key, kind_, code, when, config in self._db.execute(
                f"SELECT key, kind, code, coalesce(finished, started, 0), config FROM records r {where}", args):
            c = _json(config) or {}
            group = (kind_, *(v for v in (c.get("arch"), c.get("dataset")) if isinstance(v, str) and ":" in v))
            rows.append((key, group, code))
            if when >= newest.get(group, (-math.inf, None))[0]:
                newest[group] = (when, code)
        return {key for key, group, code in rows if code != newest[group][1]}

    def _where(self, kind: str | None, status: str | None) -> tuple[str, tuple]:
        """The WHERE clause (on ``records r``) selecting ``kind`` and ``status`` (None: any)."""
        clauses = [(c, v) for c, v in (("r.kind = ?", kind), ("r.status = ?", status)) if v is not None]
        return ("WHERE " + " AND ".join(c for c, _ in clauses) if clauses else ""), tuple(v for _, v in clauses)


def _json(text):
    """The JSON value of ``text``, or None (missing or damaged)."""
    try:
        return json.loads(text) if text is not None else None
    except (TypeError, ValueError):
        return None


def _scalars(value) -> dict:
    """A JSON object with its lists dropped (recursively), for one row of a table."""
    if not isinstance(value, Mapping):
        return {}
    return {k: _scalars(v) if isinstance(v, Mapping) else v for k, v in value.items() if not isinstance(v, list)}


def _numbers(row: Mapping, prefix: str = ""):
    """(name, value) of every number in a JSON object, nested keys joined by dots."""
    for k, v in row.items():
        if isinstance(v, Mapping):
            yield from _numbers(v, f"{prefix}{k}.")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield f"{prefix}{k}", float(v)
