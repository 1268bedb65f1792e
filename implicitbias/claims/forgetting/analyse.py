"""The ``implicitbias analyse`` driver: the overview of groups of runs and every Spec B claim
judged on them (also the overview the report's clocks and collapse sections show).

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).
"""

from __future__ import annotations

from collections.abc import Sequence

from implicitbias.claims import table as claims_table
from implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads import clock_points
from implicitbias.claims.forgetting.figures import clock_figure
from implicitbias.claims.forgetting.group_claim import GroupClaim
from implicitbias.claims.forgetting.wording import fmt_ci
from implicitbias.figures import markdown_table
from implicitbias.theory.clocks import CLOCKS
from implicitbias.validation.analysis import Group, group_runs, summarise
from implicitbias.validation.runs_format import clocks_line, imported_runs

__all__ = ["overview", "judged", "judge_groups", "runs_trained_elsewhere"]


def overview(ctx, groups: Sequence[Group], name: str) -> str:
    """Markdown: one row per group (runs, failures, interpolation, spreads and slope with CIs, clocks)
    and the figure of end-of-training spread against each family's governing clock."""
    rows = []
    for g in groups:
        s = summarise(g)
        taus = [r.tau_interp for r in s.runs if r.tau_interp is not None]
        rows.append([s.label, f"{s.n_runs} ({s.n_diverged} diverged)", f"{s.n_interpolated}/{s.n_runs}",
                     f"{min(taus)}-{max(taus)}" if taus else "-", fmt_ci(s.spread_selected, seeds=False),
                     fmt_ci(s.spread_final, seeds=False), fmt_ci(s.norm_slope, seeds=False),
                     *(f"{s.clocks[c]:.3g}" for c in CLOCKS), s.governing])
    points = [p for p in clock_points(groups) if p.clock > 0]
    figure = f"![spread vs clock]({ctx.link(clock_figure(ctx, points, name))})" if points else ""
    return "\n".join([
        "Spread = best minus worst seed-mean test accuracy across sigma_w (points), at the checkpoint of minimum "
        "validation loss (selected) and at the end; 95% bootstrap CIs over seeds; slope = d log||W_final|| / "
        "d log sigma_w; interpolation = 99.5% training accuracy (epochs: first reached, over all runs). Diverged "
        "runs are counted and left out of spreads and slopes.", "",
        markdown_table(["group", "runs", "interpolate", "interp. epochs", "spread selected [CI]", "spread end [CI]",
                        "norm slope [CI]", *CLOCKS, "governing"], rows), "", figure, ""])


def judged(groups: Sequence[Group], label: str = "") -> list:
    """Every Spec B claim judged on ``groups``: one ``claims.Result`` per piece of evidence."""
    from implicitbias.claims import Result, registry

    return [Result(claim, evidence, claim.judge(evidence))
            for claim in registry().values() if isinstance(claim, GroupClaim)
            for evidence in claim.stable_evidences(groups, label)]


def judge_groups(ctx, groups: Sequence[Group], title: str, label: str = "", results: Sequence | None = None) -> str:
    """Markdown: the overview of ``groups`` and every Spec B claim judged on them (claims table first);
    ``results`` are :func:`judged`'s when the caller has them already."""
    if not groups:
        return f"# Analysis: {title}\n\nNo finished runs (run `implicitbias sweep SPEC` or `implicitbias import FILE`)."
    elsewhere = clocks_line([run for g in groups for run in g.runs])
    results = judged(groups, label) if results is None else results
    details = []
    for r in results:
        claim, evidence, verdict = r.claim, r.evidence, r.verdict
        details += [f"### {claim.id}: {claim.statement}", "", f"**{verdict.verdict}**: {verdict.reason}", "",
                    claim.render(ctx, evidence, verdict), ""]
    return "\n".join([f"# Analysis: {title}", "", *([elsewhere, ""] if elsewhere else []), "## Claims", "",
                      claims_table.markdown([claims_table.Row.of(r) for r in results]), "",
                      "## Groups", "", overview(ctx, groups, f"{label or 'analysis'}_spread_vs_clock"), *details])


def runs_trained_elsewhere(ctx) -> str:
    """Markdown for the report: C1-C7 judged with the same rules on the runs trained elsewhere that
    ``ctx.store`` holds (``implicitbias import``, ``ForgettingMeter.save``); "" when there are none."""
    runs = imported_runs(ctx.store)
    if not runs:
        return ""
    text = judge_groups(ctx, group_runs(runs), f"{len(runs)} runs trained elsewhere", label="elsewhere")
    return text.replace("# Analysis: ", "### Runs trained elsewhere: ", 1).replace("\n## ", "\n#### ")
