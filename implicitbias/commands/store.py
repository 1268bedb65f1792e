"""``implicitbias store ls|show|export|prune|path``: look into the results store.

The tables are ``Store``'s inspection methods (``implicitbias.store.inspection``): ``ls`` is
``summary_frame`` (``--records``: ``records_frame``), ``show`` is ``record_of``, ``export`` writes
``runs_frame`` and ``history_frame`` (long format: run, epoch, metric, value), ``prune`` deletes
failed cells and records of old code.  Every subcommand but ``path`` needs an existing store: it
never creates one.
"""

from __future__ import annotations

from implicitbias.commands import emit, output_folder
from implicitbias.store.inspection import EXPORT_FORMATS


def register(sub) -> None:
    p = sub.add_parser("store", help="inspect the results store: ls, show, export, prune, path",
                       description="Look into the SQLite results store (--store, default $IMPLICITBIAS_STORE or "
                       "~/.cache/implicitbias/store.sqlite).")
    what = p.add_subparsers(dest="what", required=True)
    ls = what.add_parser("ls", help="records per kind and status: counts, fingerprints, size, age")
    ls.add_argument("--kind", default=None, help="only this kind (default: every kind)")
    ls.add_argument("--records", action="store_true", help="one row per record instead of per kind and status")
    show = what.add_parser("show", help="one record: config, record, status, code, times")
    show.add_argument("key", help="the record's key or a unique prefix of it (store ls --records lists keys)")
    export = what.add_parser("export", help="runs and their per-epoch histories (run, epoch, metric, value) to files")
    export.add_argument("--out", default="store-export", help="output folder (runs.* and history.*)")
    export.add_argument("--format", default="csv", choices=EXPORT_FORMATS,
                        help="csv, or parquet (needs pyarrow: pip install 'implicitbias[parquet]')")
    export.add_argument("--kind", default=None, help="only this kind, e.g. validation.run (default: every kind)")
    prune = what.add_parser("prune", help="delete failed cells and records of old code")
    prune.add_argument("--failed", action="store_true", help="delete failed cells (a rerun retries them anyway)")
    prune.add_argument("--old-code", action="store_true",
                       help="delete records whose code fingerprint is not the newest of their kind (never served)")
    prune.add_argument("--kind", default=None, help="only this kind (default: every kind)")
    prune.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")
    what.add_parser("path", help="print the path of the store")
    what.metavar = "{" + ",".join(what.choices) + "}"  # a missing WHAT is an error that lists them
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from implicitbias.store import Store, default_store_path
    from implicitbias.theory import params

    path = Path(args.store).expanduser() if args.store is not None else default_store_path()
    if args.what == "path":
        emit(args.json, None, lines=[str(path)], path=path)
        return 0
    if not path.exists():
        raise params.ParameterError(f"store {path} does not exist (nothing is stored there yet)")
    if args.what == "prune" and not (args.failed or args.old_code):
        raise params.ParameterError("prune needs --failed and/or --old-code (what to delete)")
    out = output_folder("out", args.out) if args.what == "export" else None
    with Store(path) as store:
        if args.what == "ls":
            _ls(args, store)
        elif args.what == "show":
            _show(args, store)
        elif args.what == "export":
            paths = store.export(out, args.format, kind=args.kind)
            emit(args.json, None, lines=[str(p) for p in paths.values()], files=paths)
        else:
            gone = store.prune(failed=args.failed, old_code=args.old_code, kind=args.kind, dry_run=args.dry_run)
            verb = "would delete" if args.dry_run else "deleted"
            rows = _rows(gone[["key", "kind", "status", "code", "finished", "bytes"]],
                         None if args.json else "%Y-%m-%d %H:%M:%S")
            emit(args.json, rows, lines=[f"{verb} {len(rows)} records from {store.path}"], dry_run=args.dry_run)
    return 0


def _ls(args, store) -> None:
    if args.records:
        frame = store.records_frame(args.kind)
        rows = _rows(frame) if args.json else _rows(frame, "%Y-%m-%d %H:%M:%S")
        emit(args.json, rows, lines=[f"{len(frame)} records in {store.path}"])
        return
    frame = store.summary_frame()
    if args.kind is not None:
        frame = frame[frame["kind"] == args.kind]
    if args.json:
        emit(True, _rows(frame), store=store.path)
        return
    rows = [{"kind": r.kind, "status": r.status, "records": r.records, "fingerprints": r.fingerprints,
             "epoch rows": r.epoch_rows, "size": _size(r.bytes), "last written": f"{r.last:%Y-%m-%d %H:%M} UTC",
             "age": _age(r.age.total_seconds())} for r in frame.itertuples()]
    emit(False, rows, lines=[f"{int(frame['records'].sum())} records in {store.path}"])


def _show(args, store) -> None:
    import datetime
    import json

    from implicitbias.plain import plain

    record = store.record_of(args.key)
    if args.json:
        emit(True, None, **record.to_dict())
        return
    for name in ("key", "kind", "status", "code", "started", "finished", "epochs"):
        value = getattr(record, name)
        if name in ("started", "finished") and value is not None:
            value = f"{datetime.datetime.fromtimestamp(value, datetime.timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
        print(f"{name}: {value}")
    print("config: " + json.dumps(plain(record.config), indent=1))
    print("record: " + json.dumps(plain(record.record), indent=1))


def _rows(frame, time_format: str | None = None) -> list[dict]:
    """A DataFrame's rows with plain values: times as ISO 8601 text (or ``time_format``), durations in seconds."""
    frame = frame.copy()
    for column in frame.columns:
        if str(frame[column].dtype).startswith("datetime"):
            frame[column] = frame[column].map(lambda t: None if t != t else
                                              t.strftime(time_format) if time_format else t.isoformat())
        elif str(frame[column].dtype).startswith("timedelta"):
            frame[column] = frame[column].dt.total_seconds()
    return frame.to_dict("records")


def _size(n: float) -> str:
    """Bytes as kB, MB, GB (powers of 1000)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def _age(seconds: float) -> str:
    """An age as a person says it: 45 s, 12 min, 5 h, 3 d."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{max(seconds, 0):.0f} s"
