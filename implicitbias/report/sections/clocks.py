"""Report section "Forgetting clocks" (Spec B): layout only.  The claims C1-C5 live in
``implicitbias.claims`` (``c1_low_lr_sgd_remembers`` ...; C7 in the clock-collapse section); this
section shows, before them, the design of each experiment the report tier runs and the
overview of its groups (spreads with CIs, failures, clocks); the groups are
``implicitbias.claims.forgetting.group_overviews.report_experiments``'s (the claims layer trains them).
Runs trained elsewhere that the store holds (``implicitbias import``, ``ForgettingMeter``) follow,
with C1-C7 judged on them by the same rules (``claims.forgetting.analyse.runs_trained_elsewhere``).
"""

from __future__ import annotations

from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting.analyse import overview, runs_trained_elsewhere
from implicitbias.claims.forgetting.group_overviews import report_experiments, train_section

NAME = "clocks"
ORDER = 35
TITLE = "Forgetting clocks (Spec B): initialisation memory across sigma_w (C1-C5)"


def design(t: fg.Experiment) -> str:
    """One paragraph: the experiment's spec, grid, and what each block changes."""
    first = t.configs(next(iter(t.blocks)))[0]
    changes = []
    for name in fg.shallow_blocks(t.spec):
        c = t.configs(name)[0]
        diff = {k: v for k, v in c.items() if k not in ("sigma_w", "seed") and v != first[k]}
        changes.append(f"{name}: {', '.join(f'{k} {v:g}' if isinstance(v, float) else f'{k} {v}' for k, v in diff.items()) or 'the base'}")
    return (f"**Experiment `{t.name}`** (spec `{t.spec}`): {t.description}; sigma_w {t.sigma_w}, seeds {t.seeds}; every "
            f"run {'trains in an ensemble with the runs that can share its steps' if t.ensembles else 'trains alone'}. Blocks: "
            + "; ".join(changes) + ".")


def exhibit(ctx) -> str:
    parts = []
    for shown in report_experiments(ctx, NAME):
        t = shown.experiment
        parts += [design(t), "", overview(ctx, shown.groups, f"clocks_{t.name}_spread_vs_clock")]
    parts.append(runs_trained_elsewhere(ctx))
    return "\n".join(parts)


def prefetch(ctx) -> None:
    train_section(ctx, NAME)
