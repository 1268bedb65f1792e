"""``implicitbias analyse [SPEC]``: spreads per sigma_w group, spread vs clocks, claims C1-C7."""

from __future__ import annotations

from implicitbias.commands import output_folder


def register(sub) -> None:
    p = sub.add_parser(
        "analyse",
        help="analyse finished sweep runs: spreads, spread vs clocks, claims table C1-C7",
        description="Analyse the runs of SPEC (TOML file or packaged name) found in the store, or every "
        "run in the store without SPEC. Writes analysis.md and figures (PNG + CSV) to --out.",
    )
    p.add_argument("spec", nargs="?", default=None, help="TOML spec file or packaged spec name (default: all runs)")
    p.add_argument("--out", default="analysis", help="output folder (default: ./analysis)")
    p.set_defaults(func=run)


def run(args) -> int:
    from implicitbias.figures import markdown_table
    from implicitbias.report.sections.validation import analysis_markdown
    from implicitbias.store import Store
    from implicitbias.validation.run import KIND, execute
    from implicitbias.validation.sweep import load_spec

    out = output_folder("out", args.out)
    with Store(args.store) as store:
        if args.spec:
            spec = load_spec(args.spec)
            runs = [(label, c, store.get(KIND, c, code=store.code_of(execute))) for label, c in spec.runs]
            missing = sum(r is None for _, _, r in runs)
            title = f"sweep {spec.name}: {len(runs) - missing} of {len(runs)} runs finished"
        else:
            runs = [("store", c, r) for c, r in store.records(KIND, code=store.code_of(execute))]
            title = f"all {len(runs)} finished runs in {store.path}"

    def figure_path(name: str):
        (out / "figures").mkdir(parents=True, exist_ok=True)
        return out / "figures" / name

    md, rows = analysis_markdown(runs, figure_path, lambda p: p.relative_to(out).as_posix())
    claims = markdown_table(["claim", "check", "measured", "verdict"],
                            [[r["claim"], r["check"], r["measured"], r["verdict"]] for r in rows])
    text = f"# Analysis: {title}\n\n{md}\n\n## Claims\n\n{claims}\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "analysis.md").write_text(text)
    print(text)
    print(out / "analysis.md")
    return 0
