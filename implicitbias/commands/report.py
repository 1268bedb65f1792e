"""``implicitbias report``: build the Markdown report (figures + CSVs) on embedded defaults."""

from __future__ import annotations

from implicitbias.executors import EXECUTORS, open_executor
from implicitbias.report import TIERS, available_sections, build_report
from implicitbias.store import Store


def register(sub) -> None:
    p = sub.add_parser("report", help="build the report of every claim (Markdown, PNG, CSV)")
    p.add_argument("--out", default="report", help="output folder (default: ./report)")
    p.add_argument("--tier", default="default", choices=TIERS, help="size of the checks run")
    p.add_argument(
        "--only",
        default=None,
        help="comma-separated section names: " + ", ".join(available_sections()),
    )
    p.add_argument("--executor", default="process", choices=EXECUTORS, help="where cells run (default: a local process pool)")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    only = [s.strip() for s in args.only.split(",")] if args.only else None
    with Store(args.store) as store, open_executor(args.executor, args.workers) as executor:
        built = build_report(
            args.out, store, tier=args.tier, only=only, executor=executor, progress=not args.no_progress
        )
    print(built.path)
    return 0
