"""Spread against clock: does a forgetting clock organise the measured initialisation memory?

Input: the (config, record) pairs of a toy sweep (``implicitbias.validation.toy``).
Runs are grouped by everything but sigma_w and seed; per group and seed the spread of the
validation-selected test accuracy across sigma_w and the slope of log final kernel norm against
log sigma_w are computed (``forgetting_metrics.group_summary``), then averaged over seeds.
Each group gets its three cumulative clocks (``theory.clocks``) and the clock that should govern
it (T_SGD for plain SGD / heavy ball, T_L2 with coupled decay, T_adapt for adaptive methods).

``organisation(rows)`` then reports, per clock and per family of groups governed by it, the
Spearman rank correlation of spread against the clock (scipy.stats.spearmanr: -1 means the
clock orders the spreads perfectly, larger clock -> smaller spread), a fitted monotone law
(isotonic regression, non-increasing, sklearn) of spread against log10 of each group's governing
clock, and the groups that the monotone law misses by more than ``tolerance`` (where the clocks
fail to order the runs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from implicitbias.numerics.metrics.forgetting_metrics import group_summary
from implicitbias.validation.toy import group_clocks, group_key
from implicitbias.theory.clocks import CLOCKS, governing_clock
from scipy.stats import spearmanr
from sklearn.isotonic import IsotonicRegression

__all__ = ["group_rows", "organisation"]


def group_rows(pairs: Sequence[tuple[dict, dict]]) -> list[dict]:
    """One row per group: label, clocks, governing clock, spread and norm slope (mean, std)."""
    groups: dict[tuple, dict[int, list]] = {}
    for config, record in pairs:
        groups.setdefault(group_key(config), {}).setdefault(config["seed"], []).append((config, record))
    rows = []
    for by_seed in groups.values():
        spreads, slopes, interp = [], [], []
        for runs in by_seed.values():
            runs = sorted(runs, key=lambda cr: cr[0]["sigma_w"])
            g = group_summary([c["sigma_w"] for c, _ in runs], [r["history"][1:] for _, r in runs])
            spreads.append(g["spread"])
            slopes.append(g["norm_slope"])
            interp += [r["tau_interp"] is not None for r in g["runs"]]
        config = next(iter(by_seed.values()))[0][0]
        clocks = group_clocks(config)
        rows.append(
            dict(
                label=f"{config.get('group', config['optimizer'])} b={config['batch_size']}",
                optimizer=config["optimizer"],
                lr=config["lr"],
                batch_size=config["batch_size"],
                weight_decay=config.get("weight_decay", 0.0),
                epochs=config["epochs"],
                seeds=len(by_seed),
                governing=governing_clock(config["optimizer"], config.get("weight_decay", 0.0)),
                spread=float(np.mean(spreads)),
                spread_std=float(np.std(spreads)),
                norm_slope=float(np.mean(slopes)),
                norm_slope_std=float(np.std(slopes)),
                interpolated=float(np.mean(interp)),
                **clocks,
            )
        )
    return rows


def organisation(rows: Sequence[dict], tolerance: float = 0.05) -> dict:
    """Spearman correlations per clock (all groups and the family it governs), isotonic fit, misses."""
    spread = np.array([r["spread"] for r in rows])
    spearman = {}
    for c in CLOCKS:
        values = np.array([r[c] for r in rows])
        family = [i for i, r in enumerate(rows) if r["governing"] == c]
        spearman[c] = {
            "all": _spearman(values, spread),
            "family": _spearman(values[family], spread[family]),
            "family_size": len(family),
        }
    x = np.array([math.log10(max(r[r["governing"]], 1e-12)) for r in rows])
    fit = IsotonicRegression(increasing=False).fit(x, spread)
    predicted = fit.predict(x)
    misses = [r["label"] for r, p in zip(rows, predicted) if abs(r["spread"] - p) > tolerance]
    return {
        "spearman": spearman,
        "log10_governing_clock": x.tolist(),
        "monotone_fit": predicted.tolist(),
        "governing_spearman": _spearman(x, spread),
        "misses": misses,
    }


def _spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    """Spearman's rho, or None when it is undefined (fewer than 3 points or a constant input)."""
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(spearmanr(x, y).statistic)
