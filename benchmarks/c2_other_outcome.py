"""C2's rule on a real pair where forgetting is expected (issue 20 item 2): does the rule disagree?

Trains ``benchmarks/horizon_adam.toml`` (the toy tier's Adam, cosine to E and to 5E epochs for
E = 24 and 60, seeds 10-17; a few CPU minutes, stored, so a rerun only judges) and applies C2's rule as
is (``C2.pair_evidence``, the pre-registered bound 0.389 at the interpolating checkpoint, 2,000
simulated tiers) to the pair.  Prints the verdict line for benchmarks/RESULTS.md.

    python benchmarks/c2_other_outcome.py [--store PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import implicitbias as ib
from implicitbias.claims.forgetting.c2_longer_training_keeps_the_spread import CLAIM
from implicitbias.validation.analysis import group_runs

SPEC = Path(__file__).with_name("horizon_adam.toml")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="SQLite store (default: the user's store)")
    args = parser.parse_args()
    result = ib.sweep(SPEC, store=args.store, progress=True)
    groups = group_runs(result.runs)  # in spec order: each block at E, then the same at 5E
    for short, long in zip(groups[::2], groups[1::2]):
        verdict = CLAIM.judge(CLAIM.pair_evidence(short, long, "horizons"))
        print(f"C2's rule on {short.label} vs {long.setting['epochs']} ep: {verdict.verdict}: {verdict.reason}\n"
              f"  {verdict.measured}")

if __name__ == "__main__":
    main()
