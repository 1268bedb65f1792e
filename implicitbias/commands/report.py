"""``implicitbias report``: build the Markdown report (figures + CSVs) on embedded defaults."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import implicitbias
from implicitbias.claims import TIERS
from implicitbias.theory import params

SECTIONS = Path(implicitbias.__file__).parent / "report" / "sections"  # listed without importing the report


def _sections() -> list[str]:
    """The section names (their module names), listed without importing the report."""
    return sorted(m.name for m in pkgutil.iter_modules([str(SECTIONS)]))


def register(sub) -> None:
    p = sub.add_parser("report", help="build the report of every claim (Markdown, PNG, CSV)")
    p.add_argument("--out", default="report", help="output folder")
    p.add_argument("--tier", default="default", choices=TIERS, help="size of the checks run")
    p.add_argument(
        "--only",
        default=None,
        help="comma-separated section names: " + ", ".join(_sections()),
    )
    p.add_argument("--data", default="embed", choices=("embed", "absolute", "relative"),  # report.DATA_LINKS (tested)
                   help="how report.html reaches its data files (CSV, npz): embedded (the page travels alone), "
                   "absolute file: links, or relative links (the folder travels whole)")
    p.add_argument("--provenance", action="store_true",
                   help="name the host and the store's absolute path in the report's header")
    p.set_defaults(func=run, default_executor="process")


def run(args) -> int:
    from implicitbias.commands import output_folder, parse_list
    from implicitbias.executors import check_executor, open_executor
    from implicitbias.report import build_report
    from implicitbias.store import Store

    only = parse_list("only", args.only, str) if args.only is not None else None
    for name in only or []:
        params.choice("only", name, _sections())
    output_folder("out", args.out)
    check_executor(args.executor, args.workers)
    with Store(args.store) as store, open_executor(args.executor, args.workers) as executor:
        built = build_report(
            args.out, store, tier=args.tier, only=only, executor=executor, progress=args.progress, data=args.data,
            provenance=args.provenance,
        )
    if args.json:
        from implicitbias.claims import table as claims_table
        from implicitbias.commands import emit

        emit(True, claims_table.json_records(built.claims), files={"report": built.path})
    else:
        print(built.path)
    built.raise_errors()
    return 0
