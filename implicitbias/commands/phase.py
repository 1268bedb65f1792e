"""``implicitbias phase``: the (K, L) phase diagram of the deep-UFM max-margin problem P(K, L).

Writes the atlas into ``--out`` (``implicitbias.atlas``): ``phase_cells.csv`` (one row per cell:
verdict, best structure named from invariants, rank, symmetry, objective, closed form, certified
lower bound and gap, certificate, solver status), ``phase_atlas.npz`` (the best matrix of every
cell, with its name), ``phase_structures.png`` (structure map), ``phase_heatmap.png`` (verdict,
rank, gap), ``phase_codes_rank2.png`` / ``phase_codes_rank3.png`` (class vectors of the rank-2
and rank-3 optima), ``phase_crossovers.csv``, ``phase_boundary.csv`` and ``phase.md``; every
figure has a CSV of its numbers.  Two passes, each cached in the store per column (one K, all
depths): the searches (the exact search at the shallow depths and, up to 32 classes, the low-rank
ladder at L >= 4), then the cells, so a rerun or a grid with more K only computes what is missing
(new depths recompute the columns).  Depth L counts weight matrices (N = L + 1 factors including the features).
"""

from __future__ import annotations

import functools

from implicitbias.commands import deprecated, emit, output_folder, parse_list


def register(sub) -> None:
    p = sub.add_parser("phase", help="phase diagram of P(K, L): where NC stops being optimal")
    p.add_argument("--K-min", dest="kmin", type=int, default=2, help="smallest number of classes K")
    p.add_argument("--K-max", dest="kmax", type=int, default=32, help="largest number of classes K")
    p.add_argument("--L-max", dest="lmax", type=int, default=12, help="largest integer depth L (weight matrices)")
    p.add_argument("--L-extra", dest="depths", default="", help="extra real depths L, comma-separated (e.g. 1.5,2.5)")
    p.add_argument("--effort", type=int, default=1, help="search effort: starts per cell grow with it; from 2 on, columns of 17-32 classes also run the rank-r route")
    p.add_argument("--seed", type=int, default=0, help="seed of the searches' starts")
    p.add_argument("--out", default="phase", help="output folder")
    for old, new in (("--kmin", "--K-min"), ("--kmax", "--K-max"), ("--lmax", "--L-max"), ("--depths", "--L-extra")):
        deprecated(p, old, new)
    p.set_defaults(func=run, default_executor="process")


def run(args) -> int:
    from implicitbias.atlas import boundary_markdown, write_outputs
    from implicitbias.executors import open_executor
    from implicitbias.numerics.maxmargin.phase import boundary, cells_of, phase_configs, phase_diagram
    from implicitbias.store import Store

    depths = parse_list("depths", args.depths) if args.depths.strip() else []
    output_folder("out", args.out, files=("phase_cells.csv", "phase_crossovers.csv", "phase_boundary.csv", "phase.md"))
    configs = phase_configs(args.kmax, args.lmax, args.effort, args.seed, depths, kmin=args.kmin)
    with Store(args.store) as store, open_executor(args.executor, args.workers) as executor:
        columns = phase_diagram(functools.partial(store.map, executor=executor, progress=args.progress), configs)
        # the figures on the local pool only: Dask and SLURM workers need not see this folder
        paths = write_outputs(columns, args.out, executor=executor if args.executor == "process" else None)
    rows = boundary(cells_of(columns))
    if args.json:
        emit(True, rows, files=paths)
        return 0
    print(boundary_markdown(rows))
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0
