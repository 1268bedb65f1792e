"""Radial memory of a sweep's groups and the regime targets of C3 / C4 (issue 27, items 2-3).

Reads the finished runs of a spec from a store (``implicitbias sweep`` puts them there) and prints,
per group, at the interpolating checkpoint (the one C1, C3 and C4 judge) and at the end of training
(``validation.analysis.radial_memory_of``): the radial law, how many runs interpolate, the norm
slope d log||W|| / d log sigma_w with its t interval, the clock in units of the initial norm X at
the smallest and largest sigma_w and the X the norms show (realised; SGD's X is the realised one),
then what C3 and C4's regime gates (``claims.forgetting.regime``) say on these groups.

    implicitbias --store /tmp/s.sqlite sweep /tmp/calibration.toml
    python benchmarks/radial_regime.py /tmp/calibration.toml --store /tmp/s.sqlite
"""

from __future__ import annotations

import argparse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec")
    parser.add_argument("--store", required=True)
    args = parser.parse_args()

    from implicitbias.claims.forgetting.c3_adaptive_methods_forget import CLAIM as C3
    from implicitbias.claims.forgetting.c4_sgd_forgets_with_larger_lr_or_l2 import CLAIM as C4
    from implicitbias.api import open_store
    from implicitbias.validation.analysis import group_runs, radial_memory_of, summarise
    from implicitbias.validation.run import KIND, run_codes
    from implicitbias.validation.sweep import load_spec

    spec = load_spec(args.spec)
    with open_store(args.store) as store:
        code = run_codes(store)
        runs = [(c, store.get(KIND, c, code=code(c))) for c in spec.configs]
    groups = group_runs([(c, r) for c, r in runs if r is not None])  # a sweep still running: its finished groups
    print("| group | law | interpolate | checkpoint | norm slope [95% t] | X at min, max sigma_w | realised X |")
    print("|---|---|---|---|---|---|---|")
    for g in groups:
        s = summarise(g)
        for cp in ("interpolating", "end"):
            r = radial_memory_of(g, cp)
            if r is None:
                print(f"| {s.label} | - | {s.n_interpolated}/{s.n_runs} | {cp} | no run has it | | |")
                continue
            print(f"| {s.label} | {r.law} | {s.n_interpolated}/{s.n_runs} | {cp} | {r.slope.estimate:.2f} "
                  f"[{r.slope.lo:.2f}, {r.slope.hi:.2f}] | {r.x[0]:.3g}, {r.x[1]:.3g} | "
                  f"{r.realised[0]:.3g}, {r.realised[1]:.3g} |")
    for claim in (C3, C4):
        evidence = claim.evidence(groups, "calibration")
        if evidence.data.baseline is None:
            continue
        parts, premise = claim.parts(evidence.data, claim.judged, 0)
        print(f"\n{claim.id} at the {claim.judged} checkpoint: {premise or 'regime matched (or another premise)'}")


if __name__ == "__main__":
    main()
