"""``implicitbias headrank``: head depth x width sweep of ResNet + deep head (Spec A, section 5)."""

from __future__ import annotations

from implicitbias.commands import parse_list
from implicitbias.executors import EXECUTORS
from implicitbias.theory import params

HEAD_INITS = ("he", "small", "aligned")  # checked against validation.head_rank.HEAD_INITS by the tests

def register(sub) -> None:
    p = sub.add_parser("headrank", help="effective rank of the logits against head depth and width (Spec A, Sec. 5)")
    p.add_argument("--dataset", default="digits", help="digits, mnist1d, synthetic, fashion_mnist, mnist, cifar10")
    p.add_argument("--data-path", default=None, help="folder or archive of a real dataset")
    p.add_argument("--arch", default="resnet20")
    p.add_argument("--width", type=float, default=0.25, help="body width multiplier")
    p.add_argument("--depths", default="1,2,4,6", help="head depths L (weight matrices), comma-separated")
    p.add_argument("--widths", default="16,64", help="head widths, comma-separated")
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--activation", default="linear", choices=("linear", "relu"))
    p.add_argument("--head-init", default="he", help="comma-separated: " + ", ".join(HEAD_INITS))
    p.add_argument("--head-init-scale", type=float, default=1.0)
    p.add_argument("--optimizer", default="adam")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--train-size", type=int, default=None, help="training images kept (default: all)")
    p.add_argument("--val-size", type=int, default=None, help="validation split (default: 5000 or 10%%)")
    p.add_argument("--test-size", type=int, default=None, help="test images kept (default: all)")
    p.add_argument("--executor", default="inline", choices=EXECUTORS)
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--threads", type=int, default=1, help="torch threads per run")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    import functools

    from implicitbias.executors import open_executor
    from implicitbias.figures import markdown_table
    from implicitbias.store import Store
    from implicitbias.validation import head_rank as hr

    depths, widths, seeds = (parse_list(n, getattr(args, n), int) for n in ("depths", "widths", "seeds"))
    for s in seeds:
        params.seed("seeds", s)
    params.integer("threads", args.threads, minimum=1, maximum=1024)
    base = {
        "dataset": args.dataset, "data_path": args.data_path, "arch": args.arch, "width": args.width,
        "head_activation": args.activation, "head_init_scale": args.head_init_scale, "optimizer": args.optimizer,
        "lr": args.lr, "epochs": args.epochs, "batch_size": args.batch_size, "train_size": args.train_size,
        "val_size": args.val_size, "test_size": args.test_size,
    }
    configs = hr.grid(base, depths=depths, widths=widths, seeds=seeds, head_inits=parse_list("head-init", args.head_init, str))
    fn = functools.partial(hr.execute, options={"threads": args.threads})
    with Store(args.store) as store, open_executor(args.executor, args.workers) as executor:
        records = store.map(hr.KIND, fn, configs, executor=executor, progress=not args.no_progress, desc="head rank")
    rows = hr.summarise(configs, records)
    print(markdown_table(
        ["init", "depth L", "width", "seeds", "eff. rank", "± std", "test acc", "NC1"],
        [[r["head_init"], r["depth"], r["width"], r["seeds"], f"{r['rank_mean']:.3f}", f"{r['rank_std']:.3f}",
          f"{r['test_acc_mean']:.3f}", f"{r['nc1_mean']:.3f}"] for r in rows],
    ))
    return 0
