"""``implicitbias clocks``: the forgetting clocks T_SGD, T_L2, T_adapt per epoch and cumulative.

The recipe options (optimiser, learning rate and schedule, batch size, training-set size, epochs,
weight decay) are shared with ``implicitbias predict`` (``add_recipe``, ``recipe_clocks``).
"""

from __future__ import annotations

from implicitbias.theory.clocks import (
    CLOCKS,
    MAX_RATE,
    OPTIMIZERS,
    forgetting_clocks,
    steps_per_epoch,
    total_steps,
)
from implicitbias.theory import params
from implicitbias.theory.schedules import SCHEDULES, schedule


def add_recipe(p) -> None:
    """The options of a training recipe."""
    p.add_argument("--optimizer", default="sgd", help="one of " + ", ".join(OPTIMIZERS))
    p.add_argument("--lr", type=float, default=0.1, help="peak learning rate (default 0.1)")
    p.add_argument("--schedule", default="constant", help="one of " + ", ".join(SCHEDULES))
    p.add_argument("--warmup", type=float, default=None, help="warm-up fraction of the steps (schedule warmup; default: the schedule's)")
    p.add_argument("--after", default=None, help="after warm-up: constant or cosine (default: the schedule's)")
    p.add_argument("--batch-size", type=int, default=128, help="minibatch size b")
    p.add_argument("--n-train", type=int, default=45000, help="training-set size N (default 45000)")
    p.add_argument("--epochs", type=int, default=200, help="epochs of training")
    p.add_argument("--weight-decay", type=float, default=0.0, help="lambda of T_L2 (default 0)")
    p.add_argument("--drop-last", action="store_true", help="floor(N/b) steps per epoch instead of ceil")


def recipe_clocks(args):
    """The recipe's clocks (``theory.clocks.Clocks``), every option checked first, and its one-line description."""
    params.real("lr", args.lr, minimum=0, open_minimum=True, maximum=MAX_RATE)
    params.real("weight-decay", args.weight_decay, minimum=0, maximum=MAX_RATE)
    spe = steps_per_epoch(args.n_train, args.batch_size, args.drop_last)
    steps = total_steps(args.n_train, args.batch_size, args.epochs, args.drop_last)  # names epochs and n_train
    kw = {k: v for k, v in (("warmup", args.warmup), ("after", args.after)) if v is not None}
    for name in kw:  # options of the warmup schedule: named here, where the flag is known
        if params.choice("schedule", args.schedule, SCHEDULES) != "warmup":
            raise params.ParameterError(f"{name} applies to schedule warmup only, got schedule {args.schedule}")
    eta = schedule(args.schedule, args.lr, steps, **kw)
    clocks = forgetting_clocks(
        args.optimizer, eta, args.batch_size, args.n_train, args.epochs, args.weight_decay, args.drop_last
    )
    line = (f"{args.optimizer}, {args.schedule} lr {args.lr:g}, b = {args.batch_size}, N = {args.n_train}, "
            f"{spe} steps/epoch, lambda = {args.weight_decay:g}")
    return clocks, line


def register(sub) -> None:
    p = sub.add_parser("clocks", help="print the forgetting clocks of a training run (per epoch and cumulative)")
    add_recipe(p)
    p.add_argument("--every", type=int, default=None, help="print every k-th epoch (default: about 20 rows)")
    p.set_defaults(func=run)


def run(args) -> int:
    from implicitbias.commands import emit

    if args.every is not None:
        params.integer("every", args.every, minimum=1)
    clocks, line = recipe_clocks(args)
    every = args.every or max(1, clocks.epochs // 20)
    header = ["epoch", *(f"{c}/epoch" for c in CLOCKS), *CLOCKS]
    rows = [dict(zip(header, r)) for r in clocks.rows() if r[0] % every == 0 or r[0] in (1, clocks.epochs)]
    total = ", ".join(f"{c} = {v:.4g}" for c, v in clocks.total.items())
    if not args.json:
        print(line)
    emit(args.json, rows, formats=dict.fromkeys(header[1:], ".4g"),
         lines=[f"total: {total}; governing clock for {args.optimizer}: {clocks.governing}"],
         recipe=line, total=clocks.total, governing=clocks.governing)
    return 0
