"""Coverage of Spec B's C1-C5 intervals under misspecified noise, and their operating characteristics
close to each bound (issue 27 item 6).  Run from the repository root:

    python benchmarks/spec_b_misspecified.py [--tiers 2000] [--ratio-tiers 500] [--sims 2000] [--world 1.25]
                                             [--skip tails,snr,robust,slope,ratio,oc] [--noises normal,t3]

Components: the stored verdict-seed tables (seeds 10-17, 5 sigma_w, default tier, interpolating
checkpoint, from the cold report of 2026-12-02 20:18 UTC): low-lr SGD (C1's memory-to-noise s = 1.77,
C1's norm slope 0.513) and Adam lr 0.01 (C3's r = m_Adam / m_SGD = 0.677, C3's norm slope 0.305).

Coverage: each simulated tier draws seed x sigma_w tables at a group's fitted components (its
sigma_w effects, memory m and noise sigma; for the norm slopes a log-norm table with the mean slope
and the residual sd that gives the measured per-seed slope sd) and recomputes the statistic from
the tables, as the verdict does (``memory_stats.memory`` / ``complete``, ``ratio_interval`` with its
own calibration, ``t_interval`` of the per-seed slopes).  Noise models, each with the same mean
variance sigma^2 (so the estimands are unchanged):

    normal     N(0, sigma^2)                                    (the model the intervals assume)
    t3         sigma t_3 / sqrt(3)                              (heavy tails)
    rising     N(0, (sigma w_j)^2), w_j geometric, w_k / w_1 = 3, mean w_j^2 = 1  (sd rising with sigma_w)
    failed     normal, then 1 or 2 cells per table NaN (half the tables each)     (failed runs)

C1's interval of s side by side (section ``tails``): the exact interval and the robust one
(``memory_stats.robust_snr_ends``: the exact joined with a studentised bootstrap over seeds) at
bootstrap-t levels 0.95, 0.975, 0.99 on the same tables of every noise; ``ROBUST_LEVEL`` is the
narrowest whose coverage is within 2 SE of 95% under all four.  The row ``robust`` is C1's interval
as the verdict computes it (1,999 resamples).

Operating characteristics at a factor ``--world`` (default 1.25) from each bound, instead of
``memory_rules.WORLD`` = 2.57: the rule's wrong-direction rates on the tables of each noise model (the
coverage section), and ``oc_snr`` (exact and robust), ``oc_ratio`` (normal model) and ``oc_mean``
(tables drawn with normal, resampled and student-t seed rows; the per-seed slopes above as lines
through 0, the stored log-norm tables not being in this script) at n = 8 with ``seeds_needed`` where a
rate is above 5%.  Results: benchmarks/RESULTS.md, "The C1-C5 statistics
pinned, under misspecified noise, and close to their bounds".
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.numerics.metrics import memory_stats as ms
from implicitbias.numerics.metrics.forgetting_metrics import norm_slope

SIGMA_W = (0.25, 0.5, 1.0, 1.5, 2.5)
SGD = np.array([[40.8, 40.1, 38.2, 36.9, 35.9], [40.1, 40.0, 39.3, 38.8, 37.8], [41.2, 38.9, 39.6, 37.0, 35.8],
                [40.7, 39.4, 36.7, 34.8, 34.9], [40.6, 41.4, 37.2, 36.2, 33.3], [42.0, 38.0, 36.4, 35.8, 34.6],
                [40.3, 39.1, 40.6, 38.1, 37.6], [39.5, 40.5, 37.6, 34.5, 35.2]])  # sgd lr 0.3, b 64, 120 ep
ADAM = np.array([[37.0, 39.3, 39.1, 36.4, 37.4], [38.8, 37.3, 40.1, 37.7, 36.2], [41.6, 40.4, 37.9, 37.8, 36.9],
                 [39.6, 40.1, 36.8, 36.5, 35.2], [39.5, 40.6, 39.3, 35.3, 35.9], [41.4, 41.9, 37.5, 37.3, 36.1],
                 [38.8, 40.4, 40.7, 38.8, 38.1], [38.6, 40.5, 38.0, 38.5, 36.6]])  # adam lr 0.01, b 64, 120 ep
SGD_SLOPES = (0.53, 0.5056, 0.532, 0.5044, 0.5211, 0.5039, 0.5167, 0.4892)
ADAM_SLOPES = (0.3054, 0.2997, 0.2632, 0.3047, 0.3018, 0.3367, 0.3141, 0.3118)
NOISES = ("normal", "t3", "rising", "failed")


def noise(kind: str, size: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Unit-mean-variance noise of shape (..., n, k) of the model ``kind`` (module docstring)."""
    if kind == "t3":
        return rng.standard_t(3, size) / math.sqrt(3)
    z = rng.standard_normal(size)
    if kind == "rising":
        w = 3.0 ** (np.arange(size[-1]) / (size[-1] - 1))
        return z * w / math.sqrt((w**2).mean())
    if kind == "failed":
        flat = z.reshape(-1, size[-2] * size[-1])
        for row in flat:
            row[rng.choice(row.size, size=rng.integers(1, 3), replace=False)] = np.nan
        return flat.reshape(size)
    return z


def tables(mem: ms.Memory, m: float, kind: str, tiers: int, rng: np.random.Generator) -> np.ndarray:
    """``tiers`` tables (tiers, n, k) with ``mem``'s sigma_w shape rescaled to memory m and noise ``kind``."""
    effects = ms.simulate_tables(mem.shape, m, 0.0, mem.n, 1, rng)[0, 0].astype(float)
    return effects + mem.sigma * noise(kind, (tiers, mem.n, mem.k), rng)


def snr_ends(mem: ms.Memory, s: float, kind: str, tiers: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The exact intervals of the memory-to-noise ratio of ``tiers`` tables at ``mem``'s components with
    true ratio ``s`` (the verdict's route: ``complete``, then ``snr_interval``)."""
    ys = tables(mem, s * mem.sigma, kind, tiers, np.random.default_rng(seed))
    lo, hi = np.empty(tiers), np.empty(tiers)
    for i, y in enumerate(ys):
        table, _, _ = ms.complete(y)
        n, k = table.shape
        lo[i], hi[i] = (v[0] for v in ms.snr_interval(ms.anova(table).f, k - 1, (n - 1) * (k - 1), n))
    return lo, hi


def robust_ends(mem: ms.Memory, s: float, kind: str, tiers: int, seed: int,
                boot_level: float = ms.ROBUST_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """C1's robust intervals of s (``memory_stats.robust_snr_ends``, the verdict's 1,999 resamples) of the
    same ``tiers`` tables as ``snr_ends`` (same seed), batched by the shape ``complete`` leaves."""
    ys = tables(mem, s * mem.sigma, kind, tiers, np.random.default_rng(seed))
    done = [ms.complete(y)[0] for y in ys]
    lo, hi = np.empty(tiers), np.empty(tiers)
    for shape in {t.shape for t in done}:
        at = [i for i, t in enumerate(done) if t.shape == shape]
        for start in range(0, len(at), 200):
            batch = at[start:start + 200]
            lo[batch], hi[batch] = ms.robust_snr_ends(np.stack([done[i] for i in batch]), boot_level=boot_level,
                                                      seed=seed + start)
    return lo, hi


def tails(tiers: int) -> None:
    """C1's interval of s side by side: the exact one and the robust one (the exact joined with the
    bootstrap-t at levels 0.95, 0.975, 0.99; ``ROBUST_LEVEL`` chosen from this) on the same tables, under
    every noise: coverage, misses on each side, median width."""
    sgd = ms.memory(SGD, permute=False)
    truth = sgd.m / sgd.sigma
    for j, kind in enumerate(NOISES):
        start = time.process_time()
        rows = [("exact", snr_ends(sgd, truth, kind, tiers, 300 + j))]
        for level in (0.95, 0.975, 0.99):
            rows.append((f"joined, bootstrap-t {level:g}", robust_ends(sgd, truth, kind, tiers, 300 + j, level)))
        for what, (lo, hi) in rows:
            print(f"tails | {kind} | {what} | coverage {np.mean((lo <= truth) & (truth <= hi)):.3f} | lower end above "
                  f"{np.mean(lo > truth):.3f} | upper end below {np.mean(hi < truth):.3f} | median width "
                  f"{np.median(hi - lo):.2f}", flush=True)
        print(f"tails | {kind} | {time.process_time() - start:.0f} CPU s", flush=True)


def ratio_ends(group: ms.Memory, ref: ms.Memory, r: float, kind: str, tiers: int, seed: int):
    """``ratio_interval`` (each tier calibrated on 100 simulated tiers, as the slow coverage test) of
    ``tiers`` pairs of tables at the two groups' components, the group's memory set to r x the
    reference's; NaN ends (no reference memory) count as neither side nor covering."""
    rng = np.random.default_rng(seed)
    lo, hi = np.empty(tiers), np.empty(tiers)
    for i in range(tiers):
        g = ms.memory(tables(group, r * ref.m, kind, 1, rng)[0], permute=False)
        f = ms.memory(tables(ref, ref.m, kind, 1, rng)[0], permute=False)
        interval = ms.ratio_interval(g, f, sims=100, seed=int(rng.integers(1 << 30)))
        lo[i], hi[i] = interval.lo, interval.hi
    return lo, hi


def slope_ends(slopes, slope: float, kind: str, tiers: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """t intervals of the mean per-seed norm slope of ``tiers`` log-norm tables b_i + slope x_j + e_ij
    (x = log sigma_w; e with the residual sd that gives the measured per-seed slope sd of ``slopes``),
    one slope per seed from its kept sigma_w (``norm_slope``), then ``t_interval``."""
    x = np.log(SIGMA_W)
    sd_e = float(np.std(slopes, ddof=1)) * math.sqrt(((x - x.mean()) ** 2).sum())
    logs = slope * x + sd_e * noise(kind, (tiers, len(slopes), len(x)), np.random.default_rng(seed))
    lo, hi = np.empty(tiers), np.empty(tiers)
    for i, table in enumerate(logs):
        per_seed = [norm_slope(np.exp(x[ok]), np.exp(row[ok])) for row in table if (ok := ~np.isnan(row)).sum() >= 2]
        interval = ms.t_interval(per_seed)
        lo[i], hi[i] = interval.lo, interval.hi
    return lo, hi


def log_norm_table(slopes) -> ms.SlopeTable:
    """A seed x sigma_w table of log norms whose per-seed slopes against log sigma_w are ``slopes``
    exactly (each seed a line through 0: the stored runs' tables are not in this script)."""
    x = np.log(SIGMA_W)
    c = x - x.mean()
    return ms.SlopeTable(tuple(x), tuple(tuple(b * c) for b in slopes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", type=int, default=2000, help="simulated tiers per exact / t coverage")
    parser.add_argument("--ratio-tiers", type=int, default=500, help="simulated tiers per ratio coverage")
    parser.add_argument("--sims", type=int, default=mr.SIMS, help="simulated tiers per operating characteristic")
    parser.add_argument("--world", type=float, default=1.25, help="factor between each bound and its worlds")
    parser.add_argument("--skip", default="", help="comma-separated sections to skip: tails,snr,robust,slope,ratio,oc")
    parser.add_argument("--noises", default=",".join(NOISES), help="comma-separated noise models of the rows")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    if "tails" not in skip:
        tails(args.tiers)
    sgd, adam = ms.memory(SGD, permute=False), ms.memory(ADAM, permute=False)
    print(f"SGD m {sgd.m:.3f} sigma {sgd.sigma:.3f} s {sgd.snr.estimate:.3f}; Adam m {adam.m:.3f} sigma "
          f"{adam.sigma:.3f}; r {adam.m / sgd.m:.3f}", flush=True)
    slope = float(np.mean(SGD_SLOPES))
    bound = float(mr.FORGOTTEN)
    # (section, what, the ends at a true value, the estimate, the bound, below)
    rows = [("snr", "C1 s (SGD)", lambda v, kind, seed, t: snr_ends(sgd, v, kind, t, seed), sgd.m / sgd.sigma,
             float(mr.NOISE), False),
            ("robust", "C1 s robust (SGD)", lambda v, kind, seed, t: robust_ends(sgd, v, kind, t, seed),
             sgd.m / sgd.sigma, float(mr.NOISE), False),
            ("slope", "C1 norm slope (SGD)", lambda v, kind, seed, t: slope_ends(SGD_SLOPES, v, kind, t, seed), slope,
             bound, False),
            ("ratio", "C3 r (Adam / SGD)", lambda v, kind, seed, t: ratio_ends(adam, sgd, v, kind, t, seed),
             adam.m / sgd.m, bound, True)]
    for section, what, ends, estimate, at, below in rows:
        if section in skip:
            continue
        tiers = args.ratio_tiers if section == "ratio" else args.tiers
        for j, kind in enumerate(NOISES):
            if kind not in args.noises.split(","):
                continue
            start = time.process_time()
            lo, hi = ends(estimate, kind, 100 + j, tiers)
            cover = np.mean((lo <= estimate) & (estimate <= hi))
            rates = []  # the rule's wrong directions with this noise, worlds a factor --world from the bound
            for value, wrong in zip(mr._worlds(at, below, args.world), ("disagrees", "agrees")):
                lo_w, hi_w = ends(value, kind, 200 + j, tiers)
                agree, disagree = mr._sides(lo_w, hi_w, at, below)
                rates.append(float(np.mean(disagree if wrong == "disagrees" else agree)))
            print(f"{what} | {kind} | coverage {cover:.3f} | lower end above {np.mean(lo > estimate):.3f} | upper end "
                  f"below {np.mean(hi < estimate):.3f} | x{args.world:g}: P(disagrees|true) {rates[0]:.3f} "
                  f"P(agrees|false) {rates[1]:.3f} | {time.process_time() - start:.0f} CPU s", flush=True)
    if "oc" in skip:
        return
    ratio = ms.ratio_interval(adam, sgd)
    sgd_norms, adam_norms = log_norm_table(SGD_SLOPES), log_norm_table(ADAM_SLOPES)
    parts = [("C1 s > 1 (SGD)", lambda n: mr.oc_snr(sgd, float(mr.NOISE), False, args.sims, n=n, world=args.world)),
             ("C1 s > 1 (SGD), robust interval",
              lambda n: mr.oc_snr(sgd, float(mr.NOISE), False, args.sims, n=n, world=args.world, robust=True)),
             *((f"C1 norm slope > 0.389 (SGD), {noise} seed rows",
                lambda n, noise=noise: mr.oc_mean(sgd_norms, bound, False, args.sims, n=n, world=args.world,
                                                  noise=noise)) for noise in ms.NOISES),
             ("C3 r < 0.389 (Adam)",
              lambda n: mr.oc_ratio(adam, sgd, ratio, bound, True, args.sims, n=n, world=args.world)),
             *((f"C3 norm slope < 0.389 (Adam), {noise} seed rows",
                lambda n, noise=noise: mr.oc_mean(adam_norms, bound, True, args.sims, n=n, world=args.world,
                                                  noise=noise)) for noise in ms.NOISES)]
    for what, rates in parts:
        start = time.process_time()
        oc = rates(8)
        needed = mr.seeds_needed(rates, 8) if oc.wrong > float(mr.MAX_WRONG) else 8
        print(f"oc x{args.world:g} | {what} | n 8 | P(agrees|false) {oc.agree_false:.4f} | P(disagrees|true) "
              f"{oc.disagree_true:.4f} | P(inconclusive|true) {oc.inconclusive_true:.3f} | seeds needed "
              f"{needed or '> 64'} | {time.process_time() - start:.0f} CPU s", flush=True)


if __name__ == "__main__":
    main()
