"""``implicitbias import FILE``: runs trained elsewhere (CSV, Parquet or JSON lines in the run format
of ``implicitbias.validation.runs_format``) checked and put in the store, where ``implicitbias
analyse`` and the report judge C1-C7 on them.  (The module is named after the command; Python's
keyword only stops ``import implicitbias.commands.import``, and the CLI imports it by name.)"""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "import",
        help="put runs trained elsewhere (CSV, Parquet, JSON lines) in the store for analyse and the report",
        description="Read FILE (.csv, .parquet, .jsonl) in the run format: one row per run and epoch with run_id, "
        "sigma_w, seed, optimizer, batch_size, weight_decay, n_train, epoch, lr, train_acc, val_loss, val_acc, "
        "test_acc, kernel_norm (optional: schedule, train_loss, test_loss, dataset, arch, num_classes, T_SGD, T_L2, "
        "T_adapt, kernel_norm.<layer>). Every value is checked before anything is stored; then "
        "`implicitbias analyse` judges C1-C7 on the runs.",
    )
    p.add_argument("file", help="runs file: .csv, .parquet (needs pyarrow) or .jsonl")
    p.add_argument("--dry-run", action="store_true", help="check the file and say what it holds, store nothing")
    p.set_defaults(func=run)


def run(args) -> int:
    from implicitbias.commands import emit
    from implicitbias.store import Store
    from implicitbias.validation.runs_format import clocks_line, read_runs, store_runs

    pairs = read_runs(args.file)  # checked before the store is opened: a bad file leaves no store behind
    diverged = sum(r["status"] == "diverged" for _, r in pairs)
    fields = {"file": args.file, "runs": len(pairs), "diverged": diverged, "clocks": clocks_line(pairs)}
    if args.dry_run:
        emit(args.json, None, lines=[f"{args.file}: {len(pairs)} runs ({diverged} diverged), all values valid "
                                     "(dry run: nothing stored)", fields["clocks"]], **fields, dry_run=True)
        return 0
    with Store(args.store) as store:
        store_runs(pairs, store)
        path = store.path
    emit(args.json, None, lines=[f"imported {len(pairs)} runs from {args.file} ({diverged} diverged) into {path}",
                                 fields["clocks"],
                                 "next: implicitbias" + (f" --store {args.store}" if args.store else "") + " analyse"],
         **fields, store=path)
    return 0
