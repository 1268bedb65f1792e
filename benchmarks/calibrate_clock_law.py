"""Calibrate the clock law that ``implicitbias predict`` ships (``validation/clock_law.json``).

Measures C7 on the groups of ``--specs`` (default: C7's own, the crossed grid
``validation/specs/clock_lines.toml``; the shipped file was calibrated on ``default,collapse``;
trained or read from the store), fits
per optimiser family the monotone law spread = f(log clock) on all groups
(``claims.forgetting.c7_clocks_collapse_the_spreads.law_of``) and writes the file with the groups that
calibrated it, C7's verdict per family, the date and the commit; prints one line per family.

    IMPLICITBIAS_STORE=.store.sqlite python benchmarks/calibrate_clock_law.py [--workers 2] [--out PATH]
    python benchmarks/calibrate_clock_law.py --store out/store.sqlite --specs gpu_h200_collapse --out out/law.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
from pathlib import Path

from implicitbias.claims import Context
from implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads import CLAIM, CollapseConfig, CollapsePlan, law_of
from implicitbias.claims.forgetting import experiment
from implicitbias.commands import parse_list
from implicitbias.executors import open_executor
from implicitbias.store import Store
from implicitbias.validation.clock_law import LAW_FILE


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--store", default=None, help="store file (default $IMPLICITBIAS_STORE)")
    p.add_argument("--specs", default=None, help="comma-separated packaged specs (default: C7's, "
                                                  "clock_lines)")
    p.add_argument("--out", default=str(LAW_FILE))
    a = p.parse_args()
    plan = CLAIM.config("default").plans[0] if a.specs is None else CollapsePlan(
        tuple((s, None) for s in parse_list("specs", a.specs, str)), "+".join(parse_list("specs", a.specs, str)))
    with open_executor("process", a.workers) as executor:
        ctx = Context(Store(a.store), executor=executor)
        evidence = CLAIM.measure(ctx, CollapseConfig((plan,)))
    families = {}
    for ev in evidence:
        verdict = CLAIM.judge(ev)
        print(f"{ev.label}: {verdict.verdict}: {verdict.measured}")
        if "test" in ev.data:
            families[ev.data.family] = law_of(ev, verdict)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    designs = [experiment(spec) for spec, _ in plan.experiments]
    n = sum(len(f["groups"]) for f in families.values())
    law = {
        "calibrated_on": (f"{n} groups of validation/specs/{', '.join(t.spec + '.toml' for t in designs)} "
                          f"({designs[-1].description}); sigma_w {designs[-1].sigma_w} x seeds {designs[-1].seeds} per group; "
                          "end-of-training spread of seed-mean test accuracy"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit or "unknown",
        "families": families,
    }
    Path(a.out).write_text(json.dumps(law, indent=1) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
