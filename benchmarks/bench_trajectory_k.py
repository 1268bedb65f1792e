"""The cost of one ``dynamics`` cell (one depth of ``dynamics trajectory``, one start of ``dynamics
basin``) against K, and the cap ``MAX_DYNAMICS_K`` it sets (issue 22: every allowed input finishes
within a stated time on 2 cores).

Part 1: the command's default start (scale 1e-3, eps 0.3, margin 20, t_end 1e8) at L = 4 for
K = 64 ... 1024: the cost grows about as K^3 (LSODA's dense Jacobian of the K - 1 modes).
Part 2: at the cap, the corners of the allowed ranges (margin and t_end at their maxima, eps at its
maximum, the extreme scales) and the extreme depths L = 1 and 64: the slowest allowed cell.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_trajectory_k.py [--quick]
L counts weight matrices (N = L + 1 factors).
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

from implicitbias.claims.depth import kl_to_nc
from implicitbias.commands.dynamics import MAX_DYNAMICS_K, MAX_EPS, MAX_MARGIN, MAX_SCALE, MAX_T_END
from implicitbias.figures import markdown_table


def seconds(K, L, scale=1e-3, eps=0.3, margin=20.0, t_end=1e8) -> tuple[float, str]:
    """Wall time of one cell and how it stopped (an error is reported, not raised: its time counts too)."""
    (config,) = kl_to_nc.trajectory_configs(K, [L], 1, scale, eps, 0, margin, t_end)
    t0 = time.perf_counter()
    try:
        stopped = kl_to_nc.trajectory_record(config)["event"] or "t_end"
    except Exception as exc:  # an allowed input the integration cannot finish: recorded as found
        stopped = f"error: {type(exc).__name__}: {exc}"
    return time.perf_counter() - t0, stopped


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="K up to 256 only")
    args = ap.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)  # overflow inside a failing integration; its outcome is printed
    print(f"{platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    ks = [64, 128, 256] if args.quick else [64, 128, 256, 512, 1024]
    rows = []
    for K in ks:  # the default start, growing K
        s, event = seconds(K, 4)
        rows.append([K, 4, f"{s:.2f}", event])
    print(markdown_table(["K", "L", "seconds", "stopped by"], rows))
    K = 256 if args.quick else MAX_DYNAMICS_K
    corners = {"default": {}, "margin, t_end max": {"margin": MAX_MARGIN, "t_end": MAX_T_END},
               "eps max": {"eps": MAX_EPS}, "scale max": {"scale": MAX_SCALE, "margin": MAX_MARGIN, "t_end": MAX_T_END},
               "scale 1e-300, eps max": {"scale": 1e-300, "eps": MAX_EPS, "margin": MAX_MARGIN, "t_end": MAX_T_END}}
    rows = []
    for L in (1, 64):
        for name, kw in corners.items():  # the corners of the allowed ranges, at the cap
            s, event = seconds(K, L, **kw)
            rows.append([K, L, name, f"{s:.2f}", event])
    print(markdown_table(["K", "L", "start", "seconds", "stopped by"], rows))


if __name__ == "__main__":
    main()
