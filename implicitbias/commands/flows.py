"""``implicitbias flows``: the modified flow of an optimiser, derived by backward error analysis."""

from __future__ import annotations

from implicitbias.theory.clocks import OPTIMIZERS
from implicitbias.theory.updates import UPDATES


def register(sub) -> None:
    names = sorted(set(OPTIMIZERS) | set(UPDATES))
    p = sub.add_parser("flows", help="derive and print the modified flow d theta/dt = f_0 + h f_1 + ... of an optimiser")
    p.add_argument("--optimizer", default="sgd", help="one of " + ", ".join(names))
    p.add_argument("--order", type=int, default=1, help="highest power of h (0..3, default 1)")
    p.add_argument("--dim", type=int, default=1, help="number of scalar parameters (1..4, default 1)")
    p.add_argument("--minibatches", type=int, default=1, help="sgd: m > 1 minibatches, random reshuffling")
    p.add_argument("--l2", action="store_true", help="add coupled L2 decay (g -> g + lambda theta)")
    p.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")
    p.set_defaults(func=run)


def run(args) -> int:
    import sympy as sp

    from implicitbias.theory.modified_flow import modified_flow
    from implicitbias.theory.updates import builtin

    update = builtin(args.optimizer, l2=args.l2, minibatches=args.minibatches)
    flow = modified_flow(update, args.order, args.dim)
    print(f"{update.name}: {update.description}; time t = k h")
    if args.latex:
        print(flow.latex())
        return 0
    for n, term in enumerate(flow.terms):
        for x, e in zip(flow.X, term):
            print(f"f_{n}[{x}] = {sp.factor(sp.simplify(e))}")
    return 0
