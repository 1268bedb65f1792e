"""``implicitbias headrank``: head depth x width sweep of ResNet + deep head (Spec A, section 5)."""

from __future__ import annotations

from implicitbias.commands import deprecated, emit, output_folder, parse_list
from implicitbias.theory import params

HEAD_INITS = ("he", "small", "aligned")  # checked against validation.head_rank.HEAD_INITS by the tests

def register(sub) -> None:
    p = sub.add_parser("headrank", help="effective rank of the logits against head depth and width (Spec A, Sec. 5)")
    p.add_argument("--dataset", default="digits", help="digits, mnist1d, synthetic, fashion_mnist, mnist, cifar10")
    p.add_argument("--data-path", default=None, help="folder or archive of a real dataset (default: none, downloaded)")
    p.add_argument("--arch", default="resnet20", help="body network")
    p.add_argument("--width", type=float, default=0.25, help="body width multiplier")
    p.add_argument("--L", dest="depths", default="1,2,4,6", help="head depths L (weight matrices), comma-separated")
    p.add_argument("--widths", default="16,64", help="head widths, comma-separated")
    p.add_argument("--seeds", default="0,1", help="seeds, comma-separated")
    p.add_argument("--activation", default="linear", choices=("linear", "relu"), help="activation of the head")
    p.add_argument("--head-init", default="he", help="comma-separated: " + ", ".join(HEAD_INITS))
    p.add_argument("--head-init-scale", type=float, default=1.0, help="factor on the head's initial weights")
    p.add_argument("--optimizer", default="adam", help="optimiser of the training runs")
    p.add_argument("--lr", type=float, default=3e-3, help="learning rate")
    p.add_argument("--epochs", type=int, default=20, help="epochs of training")
    p.add_argument("--batch-size", type=int, default=256, help="minibatch size")
    p.add_argument("--train-size", type=int, default=None, help="training images kept (default: all)")
    p.add_argument("--val-size", type=int, default=None, help="validation split (default: 5000 or 10%%)")
    p.add_argument("--test-size", type=int, default=None, help="test images kept (default: all)")
    p.add_argument("--threads", type=int, default=1, help="torch threads per run")
    p.add_argument("--out", default=None,
                   help="also write the table to OUT/headrank.csv and OUT/headrank.md (default: print only)")
    deprecated(p, "--depths", "--L")
    p.set_defaults(func=run)


def run(args) -> int:
    import functools
    from dataclasses import asdict

    from implicitbias.executors import open_executor
    from implicitbias.figures import markdown_table, write_csv
    from implicitbias.store import Store
    from implicitbias.validation import head_rank as hr

    depths, widths, seeds = (parse_list(n, getattr(args, n), int) for n in ("depths", "widths", "seeds"))
    for s in seeds:
        params.seed("seeds", s)
    params.integer("threads", args.threads, minimum=1, maximum=1024)
    out = output_folder("out", args.out, files=("headrank.csv", "headrank.md")) if args.out is not None else None
    base = {
        "dataset": args.dataset, "data_path": args.data_path, "arch": args.arch, "width": args.width,
        "head_activation": args.activation, "head_init_scale": args.head_init_scale, "optimizer": args.optimizer,
        "lr": args.lr, "epochs": args.epochs, "batch_size": args.batch_size, "train_size": args.train_size,
        "val_size": args.val_size, "test_size": args.test_size,
    }
    configs = hr.grid(base, depths=depths, widths=widths, seeds=seeds, head_inits=parse_list("head-init", args.head_init, str))
    fn = functools.partial(hr.execute, options={"threads": args.threads})
    with Store(args.store) as store, open_executor(args.executor, args.workers) as executor:
        records = store.map(hr.KIND, fn, configs, executor=executor, progress=args.progress, desc="head rank")
    rows = [asdict(row) for row in hr.cell_rows(configs, records)]
    files = {}
    if out is not None and rows:
        files["csv"] = write_csv(out / "headrank.csv", {k: [r[k] for r in rows] for k in rows[0]})
        files["md"] = out / "headrank.md"
        files["md"].write_text(markdown_table(list(rows[0]), [["" if v is None else v for v in r.values()] for r in rows])
                               + "\n")
    formats = dict.fromkeys(("rank_mean", "rank_std", "test_acc_mean", "train_acc_min", "nc1_mean"), ".3f")
    emit(args.json, rows, formats=formats, lines=[str(p) for p in files.values()], **({"files": files} if files else {}))
    return 0
