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
    from implicitbias.claims import Context
    from implicitbias.claims.forgetting.analyse import judge_runs
    from implicitbias.store import Store
    from implicitbias.validation.run import KIND, execute, run_codes
    from implicitbias.validation.runs_format import imported_runs
    from implicitbias.validation.sweep import load_spec

    out = output_folder("out", args.out, files=("analysis.md",))
    with Store(args.store) as store:
        if args.spec:
            spec = load_spec(args.spec)
            code = run_codes(store)
            runs = [(c, store.get(KIND, c, code=code(c))) for c in spec.configs]
            finished = sum(r is not None for _, r in runs)
            title = f"sweep {spec.name}: {finished} of {len(runs)} runs finished"
        else:
            runs = store.records(KIND, code=store.code_of(execute))  # the built-in models' and data sets' runs
            elsewhere = imported_runs(store)
            runs += elsewhere
            title = f"all {len(runs)} finished runs in {store.path}" + (
                f" ({len(elsewhere)} trained elsewhere)" if elsewhere else "")
        out.mkdir(parents=True, exist_ok=True)
        text = judge_runs(Context(store=store, out=out, progress=False), runs, title)
    (out / "analysis.md").write_text(text)
    if args.json:  # the Markdown of the analysis in one field, the files it wrote in another
        emit(True, None, title=title, markdown=text, files={"analysis": out / "analysis.md"})
        return 0
    print(text)
    print(out / "analysis.md")
    return 0
