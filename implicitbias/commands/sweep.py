"""``implicitbias sweep SPEC``: run a forgetting sweep (TOML spec) into the store, resumably."""

from __future__ import annotations

import contextlib
from importlib import resources

from implicitbias.commands import check_free_space, emit


def _packaged() -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in resources.files("implicitbias.validation").joinpath("specs").iterdir()
                  if p.name.endswith(".toml"))


def register(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a sigma_w sweep from a TOML spec (cached, resumable, parallel)",
        description="Run every missing run of SPEC (a TOML file or a packaged spec: "
        + ", ".join(_packaged())
        + "). Finished runs are skipped; a killed sweep resumes where it stopped.",
    )
    p.add_argument("spec", help="TOML spec file or packaged spec name")
    p.add_argument("--address", default=None, help="Dask scheduler address (default: a fresh LocalCluster)")
    p.add_argument("--device", default=None, help="torch device for the runs (default: the spec's, else cuda if available)")
    p.add_argument("--threads", type=int, default=None, help="torch threads per run")
    p.add_argument("--batched", action="store_true", help="train each sigma_w group as one vectorised model")
    p.add_argument("--dry-run", action="store_true", help="validate and count the runs, train nothing")
    p.set_defaults(func=run)


def run(args) -> int:
    from implicitbias.api import sweep
    from implicitbias.executors import check_executor, open_executor
    from implicitbias.store import Store, check_creatable, check_store_path, default_store_path
    from implicitbias.validation.sweep import check_data, load_spec, sweep_status, with_options

    flags = {"threads": args.threads, "device": args.device, "batched": args.batched or None}
    spec = with_options(check_data(load_spec(args.spec)), {k: v for k, v in flags.items() if v is not None})
    # everything the runs need is checked before anything is printed, --dry-run included
    check_executor(args.executor, args.workers, args.address)
    path = check_store_path(args.store if args.store is not None else default_store_path())
    with contextlib.ExitStack() as stack:
        if args.dry_run and not path.exists():  # nothing stored yet, and a dry run creates no store
            check_creatable(path)
            check_free_space("store", path)
            status = {"done": 0, "partial": 0, "missing": len(spec.runs)}
        else:
            store = stack.enter_context(Store(path))
            status = sweep_status(spec, store)
            todo = status["missing"] + status["partial"]
            if todo:  # the run's own checks of the store, --dry-run included
                store.require_writable(f"running {todo} runs")
                check_free_space("store", store.path)
        if args.dry_run and args.address is not None:
            with open_executor("dask", address=args.address):
                pass  # the scheduler answers
        if not args.json:
            print(
                f"sweep {spec.name}: {len(spec.runs)} runs; {status['done']} done, "
                f"{status['partial']} interrupted (rerun), {status['missing']} to run"
                + (" (dry run: nothing trained)" if args.dry_run else ""),
                flush=True,
            )
        if args.dry_run:
            if args.json:
                emit(True, None, sweep=spec.name, runs=len(spec.runs), **status, dry_run=True)
            return 0
        # inline runs go through no executor, so their epoch rows reach the store as they happen
        with open_executor(args.executor, args.workers, args.address) as executor:
            done = sweep(spec, store=store, executor=None if args.executor == "inline" else executor,
                         progress=args.progress)
    if args.json:
        emit(True, None, sweep=spec.name, runs=len(done.records), diverged=done.diverged, store=store.path)
    else:
        print(f"sweep {spec.name}: {len(done.records)} runs done ({done.diverged} diverged); store {store.path}")
    return 0
