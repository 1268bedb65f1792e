"""``implicitbias verify``: run the theorem checks only; exit 1 if any claim disagrees.

``--json`` prints the claims table as JSON, one object per claim with the columns of the
report's ``claims.csv`` (``implicitbias.report.claims_table``).  Meant for other projects' CI: the exit status is 0 when every checked claim agrees (or is
inconclusive), 1 when at least one disagrees (and only then), 2 on an error: bad input, or a
claim whose computation crashed (one line naming the claim), so CI can tell a refuted claim from
a broken run.  It computes everything in a fresh
temporary store unless ``--store`` names one, so no earlier result is trusted.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from implicitbias.commands import output_folder, parse_list


def register(sub) -> None:
    p = sub.add_parser("verify", help="run the theorem checks; exit 1 if any claim disagrees")
    p.add_argument("--out", default=None, help="keep the checks' report here (default: a temporary folder)")
    p.add_argument("--only", default=None, metavar="SLUGS",
                   help="comma-separated claim slugs to check, e.g. theorem-3.1 (ib.claims() lists them)")
    p.set_defaults(func=run)


def run(args) -> int:
    from implicitbias import report
    from implicitbias.figures import markdown_table
    from implicitbias.store import Store

    out = output_folder("out", args.out) if args.out is not None else None
    with tempfile.TemporaryDirectory() as tmp:
        # a fresh store unless one is named: verify must not trust results it did not compute
        with Store(args.store or Path(tmp) / "verify.sqlite") as store:
            if args.only is not None:
                built = _only(args, store, out or Path(tmp))
            else:
                built = report.build_report(out or tmp, store, verify_only=True,
                                            progress=args.progress)
    failed = [c.claim for c in built.claims if c.verdict == "disagrees"]
    if args.json:  # the columns of the report's claims.csv
        from dataclasses import asdict

        from implicitbias.commands import emit
        from implicitbias.report.claims_table import records

        emit(True, [asdict(r) for r in records(built.claims)])
        built.raise_errors()
        return 1 if failed else 0
    rows = [[c.claim, c.statement, c.measured, c.verdict] for c in built.claims]
    print(markdown_table(["claim", "statement", "measured", "verdict"], rows))
    built.raise_errors()
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    print(f"all {len(built.claims)} checked claims hold")
    return 0


def _only(args, store, out: Path):
    """``verify --only SLUGS``: the named claims (any claim, not only the theorem checks), judged
    in ``store``; a ``Report`` of their rows, a claim that crashed as an ``error`` row and its
    one-line error, as in the full run (no report file is written)."""
    from implicitbias.claims import Context, by_slug
    from implicitbias.report import Report, judged_rows
    from implicitbias.theory import params

    known = by_slug()
    slugs = [params.choice("only", s, known) for s in parse_list("only", args.only, str)]
    ctx = Context(store=store, out=out, progress=args.progress)
    rows, errors = [], []
    for slug in slugs:
        _, claim_rows, error = judged_rows(known[slug], ctx)
        rows += claim_rows
        errors += [error] if error else []
    return Report(out / "report.md", rows, errors)
