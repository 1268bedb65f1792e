"""The calibrated clock law that ``implicitbias predict`` ships: ``validation/clock_law.json``.

Per optimiser family (``analysis.family``: ``sgd``, ``sgd_l2``, ``adaptive``) the file holds the
monotone law spread = f(log clock) of C7 (``claims.c7_clocks_collapse_the_spreads.law_of``: the
isotonic fit on all of the family's groups, ``numerics.metrics.clock_collapse``), the band
+-q that held 90% of the held-out absolute errors, the range of clocks it was calibrated on, the
optimisers that calibrated it, the groups (with their spreads) and C7's verdict on that family.
``benchmarks/calibrate_clock_law.py`` writes it from the store (the toy tier and the collapse grid).

A prediction is made only inside the calibrated range of the recipe's own family and for an
optimiser that calibrated it; outside, the answer says so (no extrapolation).  The spread is the
end-of-training spread across sigma_w of the calibrating setting (its ``setting`` entry); a recipe
on another architecture or data set gets that setting's number, which is a transfer, not a
measurement.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from implicitbias.numerics.metrics.clock_collapse import MonotoneLaw
from implicitbias.theory import params
from implicitbias.validation.analysis import family

__all__ = ["LAW_FILE", "load_law", "predict_spread"]

LAW_FILE = Path(__file__).with_name("clock_law.json")
_RANGE_TOLERANCE = 1e-9  # relative: a clock equal to a calibrated end up to rounding is inside


_ENTRY_KEYS = ("clock", "optimizers", "log_clock_knots", "spread_knots", "range", "band", "band_quantile", "verdict",
               "groups")


def load_law(path: str | Path = LAW_FILE) -> dict:
    """The calibrated law file (``ParameterError`` if it cannot be read or lacks a law's entries)."""
    try:
        law = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise params.ParameterError(f"law must be a readable JSON law file, got {str(path)!r}: {e}") from None
    families = law.get("families") if isinstance(law, dict) else None
    if not isinstance(families, dict) or "calibrated_on" not in law or not all(
            isinstance(e, dict) and all(k in e for k in _ENTRY_KEYS) for e in families.values()):
        raise params.ParameterError(f"law must be a law file written by benchmarks/calibrate_clock_law.py, got {str(path)!r}")
    return law


def predict_spread(law: Mapping, optimizer: str, weight_decay: float, clock: float) -> dict:
    """The predicted end-of-training spread of a recipe with governing clock value ``clock``.

    Returns ``{"family", "status", ...}`` with status ``inside`` (and ``spread``, ``band`` [lo, hi]
    in points), ``below`` / ``above`` (the clock lies outside the calibrated ``range``), or
    ``uncalibrated`` (no law for this family or optimiser; ``calibrated``: family -> its optimisers).
    """
    fam = family({"optimizer": optimizer, "weight_decay": weight_decay})
    entry = law["families"].get(fam)
    if entry is None or optimizer not in entry["optimizers"]:
        calibrated = {f: e["optimizers"] for f, e in law["families"].items()}
        return {"family": fam, "status": "uncalibrated", "calibrated": calibrated}
    lo, hi = entry["range"]
    out = {"family": fam, "clock": entry["clock"], "range": [lo, hi], "verdict": entry["verdict"],
           "n_groups": len(entry["groups"])}
    if clock < lo * (1 - _RANGE_TOLERANCE):
        return {**out, "status": "below"}
    if clock > hi * (1 + _RANGE_TOLERANCE):
        return {**out, "status": "above"}
    f = MonotoneLaw(tuple(entry["log_clock_knots"]), tuple(entry["spread_knots"]))
    spread = float(f(math.log(clock)))
    return {**out, "status": "inside", "spread": spread,
            "band": [max(0.0, spread - entry["band"]), spread + entry["band"]], "band_quantile": entry["band_quantile"]}
