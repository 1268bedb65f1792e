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
from implicitbias.claims.c2_longer_training_keeps_the_spread import CLAIM
from implicitbias.validation.analysis import group_runs

SPEC = Path(__file__).with_name("horizon_adam.toml")
PAIRS = (("adam_cosine", "adam_cosine_5x"), ("adam_cosine_60", "adam_cosine_60_5x"),  # E = 60: E = 24 did not interpolate
         ("sgd_l2_1e-3_cosine", "sgd_l2_1e-3_cosine_5x"), ("sgd_lr1.5_cosine", "sgd_lr1.5_cosine_5x"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="SQLite store (default: the user's store)")
    args = parser.parse_args()
    result = ib.sweep(SPEC, store=args.store, progress=True)
    groups = {g.label: g for g in group_runs(result.runs)}
    for short, long in PAIRS:
        verdict = CLAIM.judge(CLAIM.pair_evidence(groups[short], groups[long], "horizons"))
        print(f"C2's rule on {short} vs {long}: {verdict.verdict}: {verdict.reason}\n  {verdict.measured}")


if __name__ == "__main__":
    main()
