"""``implicitbias flows``: the modified flow of an optimiser, derived by backward error analysis."""

from __future__ import annotations

from implicitbias.theory import params
from implicitbias.theory.clocks import OPTIMIZERS
from implicitbias.theory.updates import ALIASES, UPDATES

# The highest --order that derives in bounded time, per update and --dim (1, 2, 3, 4), without and
# with --l2: the symbolic cost grows steeply with the order, the dimension and the state of the
# optimiser (adam at order 3 ran for minutes, issue 9).  Measured with benchmarks/bench_flows_cost.py:
# the whole derivation and printing within a 20 s budget on the 2-core dev VM at load 5-8
# (benchmarks/RESULTS.md); an idle machine takes about half.  Adding L2 decay never makes a
# derivation cheaper, so an order that fits with --l2 is allowed without it.  "sgd_rr<m>": SGD with
# random reshuffling over m minibatches.
MAX_ORDER = {
    False: {"gd": (3, 2, 1, 1), "heavy_ball": (2, 2, 1, 1), "nesterov": (3, 2, 1, 1), "rmsprop": (1, 1, 0, 0),
            "adam": (1, 1, 0, 0), "adamw": (1, 1, 0, 0), "sign": (2, 1, 1, 1), "muon": (1, 0, 0, 0),
            "sgd_rr2": (2, 2, 1, 1), "sgd_rr3": (2, 1, 0, 0)},
    True: {"gd": (3, 2, 1, 1), "heavy_ball": (2, 2, 1, 1), "nesterov": (2, 1, 1, 1), "rmsprop": (1, 0, 0, 0),
           "adam": (1, 0, 0, 0), "adamw": (0, 0, 0, 0), "sign": (2, 1, 1, 0), "muon": (1, 0, 0, 0),
           "sgd_rr2": (2, 1, 1, 1), "sgd_rr3": (1, 1, 0, 0)},
}
MAX_MINIBATCHES = 3
NAMES = sorted(set(OPTIMIZERS) | set(UPDATES))


def register(sub) -> None:
    p = sub.add_parser("flows", help="derive and print the modified flow d theta/dt = f_0 + h f_1 + ... of an optimiser")
    p.add_argument("--optimizer", default="sgd", help="one of " + ", ".join(NAMES))
    p.add_argument("--order", type=int, default=1, help="highest power of h (0..3 as the optimiser allows, default 1)")
    p.add_argument("--dim", type=int, default=1, help="number of scalar parameters (1..4, default 1)")
    p.add_argument("--minibatches", type=int, default=1,
                   help=f"sgd: m > 1 minibatches, random reshuffling (m <= {MAX_MINIBATCHES})")
    p.add_argument("--l2", action="store_true", help="add coupled L2 decay (g -> g + lambda theta)")
    p.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")
    p.set_defaults(func=run)


def max_order(optimizer: str, dim: int, minibatches: int = 1, l2: bool = False) -> int:
    """The highest order ``flows`` derives for this optimiser, dimension, number of minibatches and
    L2 decay, after checking them; ``MAX_ORDER`` says where the limits come from."""
    params.choice("optimizer", optimizer, NAMES)
    dim = params.integer("dim", dim, minimum=1, maximum=4)
    m = params.integer("minibatches", minibatches, minimum=1, maximum=MAX_MINIBATCHES)
    key = ALIASES.get(optimizer, optimizer)
    if m > 1 or key == "sgd_rr":
        if key not in ("gd", "sgd_rr"):
            raise params.ParameterError(f"minibatches > 1 (random reshuffling) applies to sgd only, got optimizer {optimizer}")
        key = f"sgd_rr{max(m, 2)}"
    return MAX_ORDER[bool(l2)][key][dim - 1]


def check_order(optimizer: str, order: int, dim: int, minibatches: int = 1, l2: bool = False) -> int:
    """``order`` if the flow derives in bounded time (``max_order``), else ``ParameterError``;
    what ``implicitbias flows`` and ``implicitbias.modified_flow`` check before deriving."""
    l2 = params.boolean("l2", l2)
    limit = max_order(optimizer, dim, minibatches, l2)
    order = params.integer("order", order, minimum=0, maximum=3)
    if order > limit:
        what = f"{optimizer}" + (f" over {minibatches} minibatches" if minibatches > 1 else "")
        what += " with L2 decay" if l2 else ""
        raise params.ParameterError(
            f"order must be <= {limit} for {what} in dim {dim} (higher orders take minutes to derive), got {order}"
            if limit >= 0 else f"dim must be smaller for {what}: even order 0 takes minutes to derive in dim {dim}"
        )
    return order


def run(args) -> int:
    order = check_order(args.optimizer, args.order, args.dim, args.minibatches, args.l2)
    show(args.optimizer, order, args.dim, minibatches=args.minibatches, l2=args.l2, latex=args.latex, json=args.json)
    return 0


def show(optimizer: str, order: int, dim: int, *, minibatches: int = 1, l2: bool = False, latex: bool = False,
         json: bool = False) -> None:
    """Derive the flow and print it simplified (what the command does once its limits are checked);
    ``json``: one JSON document, a row per term and parameter (order, parameter, text, LaTeX)."""
    import sympy as sp

    from implicitbias.commands import emit
    from implicitbias.theory.modified_flow import modified_flow
    from implicitbias.theory.updates import builtin

    update = builtin(optimizer, l2=l2, minibatches=minibatches)
    flow = modified_flow(update, order, dim)
    if json:
        terms = [(n, x, sp.factor(sp.simplify(e))) for n, term in enumerate(flow.terms) for x, e in zip(flow.X, term)]
        rows = [{"order": n, "parameter": str(x), "term": str(e), "latex": sp.latex(e)} for n, x, e in terms]
        emit(True, rows, update=update.name, description=update.description,
             time="t = k h")
        return
    print(f"{update.name}: {update.description}; time t = k h")
    if latex:
        print(flow.latex())
        return
    for n, term in enumerate(flow.terms):
        for x, e in zip(flow.X, term):
            print(f"f_{n}[{x}] = {sp.factor(sp.simplify(e))}")
