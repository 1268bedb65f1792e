"""``implicitbias analyse [SPEC]``: Spec B's claims C1-C7 judged on a sweep's runs (the same claim
objects, rules and figures as the report), with the groups' spreads, CIs, failures and clocks."""

from __future__ import annotations

from implicitbias.commands import emit, output_folder


def register(sub) -> None:
    p = sub.add_parser(
        "analyse",
        help="judge Spec B's claims C1-C7 on finished sweep runs: spreads with CIs, clocks, verdicts",
        description="Group the runs of SPEC (TOML file or packaged name) found in the store, or without SPEC every run of "
        "the built-in networks and data sets in the store and every run trained elsewhere (implicitbias import, "
        "ForgettingMeter), by setting (everything but sigma_w and seed), and judge claims C1-C7 on them with "
        "the report's rules. Writes analysis.md and figures (PNG + CSV) to --out.",
    )
    p.add_argument("spec", nargs="?", default=None, help="TOML spec file or packaged spec name (default: all runs)")
    p.add_argument("--out", default="analysis", help="output folder")
    p.set_defaults(func=run)


def run(args) -> int:
    from implicitbias.api import analyse
    from implicitbias.store import Store

    out = output_folder("out", args.out, files=("analysis.md",))
    with Store(args.store) as store:
        analysis = analyse(args.spec, store=store, out=out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "analysis.md").write_text(analysis.markdown)
    if args.json:  # the Markdown of the analysis in one field, the files it wrote in another
        emit(True, None, title=analysis.title, markdown=analysis.markdown, files={"analysis": out / "analysis.md"})
        return 0
    print(analysis.markdown)
    print(out / "analysis.md")
    return 0
