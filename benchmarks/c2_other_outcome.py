"""C2's rule on a real pair where forgetting is expected (issue 20 item 2): does the rule disagree?

Trains a spec of horizon pairs (default ``benchmarks/horizon_adam.toml``: the toy tier's Adam,
cosine to E and to 5E epochs for E = 24 and 60, and two SGD recipes; ``benchmarks/horizon_l2.toml``:
SGD with stronger L2), each block at E followed by the same at 5E, a few CPU minutes, stored, so a
rerun only judges, and applies C2's rule as is (``C2.pair_evidence``, the pre-registered bound 0.389
at C2's judged checkpoint, the end of training since issue 27 (the interpolating checkpoint until then),
2,000 simulated tiers) to every pair.  ``--seeds 0-3`` replaces
the spec's seeds (the calibration seeds, to choose a pair before its verdict seeds run).  Prints the
verdict lines for benchmarks/RESULTS.md.

    python benchmarks/c2_other_outcome.py [--spec PATH] [--seeds A-B] [--store PATH]
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import implicitbias as ib
from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.claims.forgetting.c2_longer_training_keeps_the_spread import CLAIM
from implicitbias.validation.analysis import group_runs

SPEC = Path(__file__).with_name("horizon_adam.toml")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=SPEC, help="spec of horizon pairs (default: %(default)s)")
    parser.add_argument("--seeds", help="replace the spec's seeds by the range A-B (calibration seeds: 0-3)")
    parser.add_argument("--store", help="SQLite store (default: the user's store)")
    args = parser.parse_args()
    spec = tomllib.loads(args.spec.read_text())
    if args.seeds:
        first, last = (int(x) for x in args.seeds.split("-"))
        spec["base"]["seed"] = list(range(first, last + 1))
    result = ib.sweep(spec, store=args.store, progress=True)
    groups = group_runs(result.runs)  # in spec order: each block at E, then the same at 5E
    for short, long in zip(groups[::2], groups[1::2]):
        evidence = CLAIM.pair_evidence(short, long, "horizons")
        verdict = CLAIM.judge(evidence)
        parts, premise = CLAIM.parts(evidence.data, "end", 0)  # the same rule at the end of training (intervals only)
        print(f"C2's rule on {short.label} vs {long.setting['epochs']} ep: {verdict.verdict}: {verdict.reason}\n"
              f"  {verdict.measured}\n  end of training: {premise or '; '.join(mr.describe(p) for p in parts)}")

if __name__ == "__main__":
    main()
