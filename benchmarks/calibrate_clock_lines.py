"""Calibrate C7's crossed iso-clock grid (issue 27) on the calibration seeds 0-3, never the verdict seeds.

Two steps, both through the package's own path (``implicitbias sweep`` records in a store, C7's
evidence and rule):

1. ``--scans``: 1-D clock scans at 60 epochs, b 64 (SGD lr 0.025-1.6, Adam lr 1e-4 - 3e-2): the
   radial memory of every group, to place three clock lines 4x apart where it changes steeply.
2. the packaged grid ``validation/specs/clock_lines.toml`` with its seeds replaced by 0-3: C7's
   direction test per family, its rivals and bound, the free fit, and the operating
   characteristics at 4 and 8 seeds under the three noise models (``clock_direction.simulate``).

    python benchmarks/calibrate_clock_lines.py --store /tmp/c7cal.sqlite [--scans]   # RESULTS.md, issue 27
"""

from __future__ import annotations

import argparse

from implicitbias.claims.forgetting.c7_clocks_collapse_the_spreads import CLAIM, CLOCK_LINES, memory_table
from implicitbias.claims.forgetting.experiments import experiment
from implicitbias.numerics.metrics import clock_direction as cd
from implicitbias.store import Store
from implicitbias.validation.analysis import group_runs
from implicitbias.validation.batched import train_ensembles

CALIBRATION_SEEDS = (0, 1, 2, 3)
SCANS = {"sgd": (0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6), "adam": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2)}


def groups_of(configs, store, options):
    return group_runs(list(zip(configs, train_ensembles(configs, store, options=options))))


def scans(store, options, template):
    configs = [{**template, "optimizer": opt, "lr": lr, "epochs": 60, "eval_every": 4}
               for opt, lrs in SCANS.items() for lr in lrs]
    configs = [{**c, "sigma_w": s, "seed": k} for c in configs for s in (0.25, 0.5, 1.0, 1.5, 2.5)
               for k in CALIBRATION_SEEDS]
    for g in groups_of(configs, store, options):
        _, table = memory_table([g])
        col = [row[0] for row in table]
        print(f"scan {g.label}: radial memory {sum(col) / len(col):.3f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True)
    p.add_argument("--scans", action="store_true", help="also run the 1-D clock scans")
    p.add_argument("--sims", type=int, default=200)
    a = p.parse_args()
    grid = experiment(CLOCK_LINES)
    options = dict(grid.options)
    store = Store(a.store)
    template = {k: v for k, v in grid.configs(next(iter(grid.blocks)))[0].items() if k not in ("sigma_w", "seed")}
    if a.scans:
        scans(store, options, template)
    configs = [{**c, "seed": k} for b in grid.blocks for c in grid.configs(b) if c["seed"] == grid.seeds[0]
               for k in CALIBRATION_SEEDS]
    for ev in CLAIM.evidences(groups_of(configs, store, options), "calibration"):
        d = ev.data
        failed, design = CLAIM.premise(d)
        if failed:
            print(f"{ev.label}: {failed}")
            continue
        test = cd.direction_test(design, d["table"])
        print(f"{ev.label}: angle {test.angle:+.2f} [{test.lo:+.2f}, {test.hi:+.2f}] deg, bound {test.bound:.2f}, "
              f"{test.outcome}; nearest {test.nearest}; rivals "
              + ", ".join(f"{r.name} {r.angle:+.1f}" for r in test.rivals))
        print("  exponents " + ", ".join(f"{e.axis} {e.estimate:+.3f} [{e.lo:+.3f}, {e.hi:+.3f}]" for e in test.exponents))
        means = [sum(c) / len(c) for c in zip(*d["table"])]
        print(f"  radial memory {min(means):.3f}-{max(means):.3f} over {len(means)} groups")
        for n in (4, 8):
            for noise in cd.NOISES:
                oc = cd.simulate(design, d["table"], a.sims, n=n, noise=noise)
                print(f"  OC n {n} {noise}: P(agrees|clock) {oc.agree_true:.3f} P(disagrees|true) {oc.disagree_true:.3f} "
                      f"P(agrees|rival) {oc.agree_false:.3f} ({oc.worst}) coverage {oc.coverage:.3f} at {oc.level:g}")


if __name__ == "__main__":
    main()
