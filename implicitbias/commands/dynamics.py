"""``implicitbias dynamics``: singular-value dynamics of the deep UFM under Hadamard initialisation.

    implicitbias dynamics trajectory --K 8 --L 1,2,4 --scale 1e-3 --perturbation 0.3 --out DIR
        integrates the derived balanced ODE from one perturbed-NC start for each depth and plots
        singular values, effective rank, KL to NC and margin against time (PNG + CSV).
    implicitbias dynamics basin --K 8 --L 1,2,3,4 --scales 1e-3,1e-2,1e-1,1 --perturbations 0.1,0.3,0.6 --out DIR
        basin-of-attraction map: fraction of perturbed-NC starts that end at NC (final effective
        rank >= K - 1.5) over (init scale, perturbation), one panel per depth, plus a table.

L counts weight matrices (N = L + 1 factors including the features).  Runs are cached in the store.
"""

from __future__ import annotations

from implicitbias.commands import deprecated, emit, output_folder, parse_list
from implicitbias.theory import params

T_START = 1e-3  # first time of the trajectory grid (numerics.ufm.spectral_flow.trajectory_record)
# Ranges where the flow stays in floating point: the start is scale * exp(eps * xi) with xi ~ N(0, 1)
# and the flow runs until the margin is reached or t_end.
MAX_SCALE, MAX_EPS, MAX_MARGIN, MAX_T_END = 1e6, 10.0, 1e6, 1e15
# The largest K of a cell: its slowest allowed start took 10.5 s on 2 cores, K = 1024 about six times
# as long (cost ~ K^3; benchmarks/bench_trajectory_k.py, RESULTS.md).  Commands of many cells show
# progress and keep finished cells on Ctrl-C.
MAX_DYNAMICS_K = 512


def register(sub) -> None:
    p = sub.add_parser("dynamics", help="singular-value dynamics of the deep UFM (trajectories, basin map)")
    what = p.add_subparsers(dest="what", required=True)
    common = {
        "--K": dict(type=int, default=8, help=f"number of classes, a power of two <= {MAX_DYNAMICS_K}"),
        "--L": dict(default="1,2,4", help="depths (weight matrices), comma-separated"),
        "--n": dict(type=int, default=1, help="samples per class"),
        "--margin": dict(type=float, default=20.0, help="stop when the margin reaches this"),
        "--t-end": dict(type=float, default=1e8, help="longest flow time"),
        "--out": dict(default="dynamics", help="output folder"),
    }
    t = what.add_parser("trajectory", help="singular values, effective rank, KL and margin against time")
    b = what.add_parser("basin", help="basin-of-attraction map of NC over (init scale, perturbation)")
    what.metavar = "{" + ",".join(what.choices) + "}"  # a missing WHAT is an error that lists them
    for q in (t, b):
        for flag, kw in common.items():
            q.add_argument(flag, **kw)
    t.add_argument("--scale", type=float, default=1e-3, help="initial singular value scale")
    t.add_argument("--perturbation", dest="eps", type=float, default=0.3,
                   help="eps: log-normal perturbation of the spectrum, scale * exp(eps * xi)")
    t.add_argument("--seed", type=int, default=0, help="seed of the perturbation xi")
    b.add_argument("--scales", default="1e-3,1e-2,1e-1,1", help="initial singular value scales, comma-separated")
    b.add_argument("--perturbations", dest="eps", default="0.1,0.3,0.6",
                   help="perturbation sizes eps, comma-separated")
    b.add_argument("--starts", dest="seeds", type=int, default=4, metavar="N", help="perturbed starts per cell (seeds 0, 1, ...)")
    deprecated(t, "--eps", "--perturbation")
    deprecated(b, "--eps", "--perturbations")
    deprecated(b, "--seeds", "--starts")
    p.set_defaults(func=run)


def run(args) -> int:
    from implicitbias.claims.depth import basin, kl_to_nc
    from implicitbias.executors import open_executor
    from implicitbias.store import Store

    params.power_of_two("K", args.K, minimum=2, maximum=MAX_DYNAMICS_K)
    depths = parse_list("L", args.L, int)
    out = output_folder("out", args.out, files=(f"dynamics_{args.what}.png",))
    params.real("margin", args.margin, minimum=0, open_minimum=True, maximum=MAX_MARGIN)
    # both integrations start at t = 0 and the trajectory grid at T_START; shorter spans are refused
    # (LSODA stalls on spans near the underflow limit, e.g. 1e-320)
    params.real("t-end", args.t_end, minimum=T_START, open_minimum=True, maximum=MAX_T_END)
    scales = [args.scale] if args.what == "trajectory" else parse_list("scales", args.scales)
    eps = [args.eps] if args.what == "trajectory" else parse_list("eps", args.eps)
    for s in scales:
        params.real("scale" if args.what == "trajectory" else "scales", s, minimum=0, open_minimum=True, maximum=MAX_SCALE)
    for e in eps:
        params.real("eps", e, minimum=0, maximum=MAX_EPS)
    if args.what == "trajectory":
        params.seed("seed", args.seed)
    with Store(args.store) as store:
        if args.what == "trajectory":
            configs = kl_to_nc.trajectory_configs(
                args.K, depths, args.n, args.scale, args.eps, args.seed, args.margin, args.t_end
            )
            records = store.map(kl_to_nc.KIND, kl_to_nc.trajectory_record, configs, progress=args.progress)
            runs = kl_to_nc.trajectories(configs, records)
            path = kl_to_nc.trajectory_figure(out / "dynamics_trajectory.png", runs)
            rows = [{"L": r.L, "final t": r.times[-1], "margin": r.margin[-1], "effective rank": r.effective_rank[-1],
                     "KL to NC": r.kl[-1], "stopped by": r.event or "t_end"} for r in runs]
            formats = {"final t": ".3g", "margin": ".3g", "effective rank": ".3f", "KL to NC": ".3g"}
        else:
            configs = basin.basin_configs(args.K, depths, args.n, scales, eps, args.seeds, args.margin, args.t_end)
            with open_executor(args.executor, args.workers) as executor:
                records = store.map(basin.KIND, basin.basin_cell, configs, executor=executor, progress=args.progress)
            path, summary = basin.basin_figure(out / "dynamics_basin.png", basin.basin_runs(configs, records))
            rows = [{"L": L, "fraction at NC": f} for L, f in sorted(summary.overall.items())]
            formats = {"fraction at NC": ".3f"}
    emit(args.json, rows, formats=formats, lines=[str(path)], figure=path)
    return 0
