"""``implicitbias verify``: run the theorem checks only; exit 1 if any claim disagrees.

``--json`` prints the claims table as JSON, one object per claim with the columns of the
report's ``claims.csv`` (``implicitbias.claims.table``).  Meant for other projects' CI: the exit status is 0 when every checked claim agrees (or is
inconclusive), 1 when at least one disagrees (and only then), 2 on an error: bad input, or a
claim whose computation crashed (one line naming the claim), so CI can tell a refuted claim from
a broken run.  It computes everything in a fresh
temporary store unless ``--store`` names one, so no earlier result is trusted.  The claims are
judged as ``ib.check`` and the report judge them (``claims.judging.judge_claim``); ``--out`` keeps their
figures and the claims table (``claims.md``, ``claims.csv``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from implicitbias.commands import output_folder, parse_list


def register(sub) -> None:
    p = sub.add_parser("verify", help="run the theorem checks; exit 1 if any claim disagrees")
    p.add_argument("--out", default=None,
                   help="keep the checks' figures and claims table here (default: a temporary folder)")
    p.add_argument("--only", default=None, metavar="SLUGS",
                   help="comma-separated claim slugs to check, e.g. theorem-3.1 (ib.claims() lists them)")
    p.set_defaults(func=run)


def run(args) -> int:
    from implicitbias.claims import Context, by_slug
    from implicitbias.claims.judging import ClaimError, judge_claim
    from implicitbias.claims import table as claims_table
    from implicitbias.commands import emit
    from implicitbias.store import Store
    from implicitbias.theory import params

    known = by_slug()
    if args.only is None:  # the theorem checks
        claims = [c for c in known.values() if c.verify]
    else:  # any claim, by slug
        claims = [known[params.choice("only", s, known)] for s in parse_list("only", args.only, str)]
    out = output_folder("out", args.out) if args.out is not None else None
    with tempfile.TemporaryDirectory() as tmp:
        # a fresh store unless one is named: verify must not trust results it did not compute
        with Store(args.store or Path(tmp) / "verify.sqlite") as store:
            ctx = Context(store=store, out=out or Path(tmp), progress=args.progress)
            judgements = [judge_claim(claim, ctx) for claim in claims]
    rows = claims_table.rows(judgements)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "claims.md").write_text(claims_table.markdown(rows) + "\n")
        claims_table.write_csv(rows, out / "claims.csv")
    failed = [r.claim for r in rows if r.verdict == "disagrees"]
    errors = [j.error for j in judgements if j.error is not None]
    if args.json:  # the columns of the report's claims.csv
        emit(True, claims_table.json_records(rows))
    else:
        print(claims_table.markdown(rows))
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ClaimError(errors[0] + more)
    if args.json:
        return 1 if failed else 0
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    print(f"all {len(rows)} checked claims hold")
    return 0
