"""The calibrated clock law that ``implicitbias predict`` ships: ``validation/clock_law.json``.

Per optimiser family (``analysis.family``: ``sgd``, ``sgd_l2``, ``adaptive``) the file holds the
monotone law spread = f(log clock) of C7 (``claims.forgetting.c7_clocks_collapse_the_spreads.law_of``: the
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


FAMILIES = ("sgd", "sgd_l2", "adaptive")  # the values of ``analysis.family``


def load_law(path: str | Path = LAW_FILE) -> dict:
    """The calibrated law file, validated whole (``_check_law``): a ``ParameterError`` naming the
    file and the first entry that is not what ``benchmarks/calibrate_clock_law.py`` writes."""
    if not str(path).strip():
        raise params.ParameterError("law must be the path of a law file (leave --law out for the shipped one), got ''")
    try:
        law = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as e:
        why = getattr(e, "strerror", None) or " ".join(str(e).split())[:200]
        raise params.ParameterError(f"law must be a readable JSON law file, got {str(path)!r}: {why}") from None
    _check_law(law, str(path))
    return law


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_law(law, where: str) -> None:
    """Every entry a prediction reads, with the types and ranges it needs: knots finite, log clocks
    strictly increasing, spreads >= 0 and monotone (the law is an isotonic fit), a range of two
    clocks 0 < lo < hi, a band >= 0 (so it is never inverted) with its quantile in (0, 1]."""

    def bad(entry: str, want: str, got) -> params.ParameterError:
        return params.ParameterError(f"law {where}: {entry} must be {want}, got {json.dumps(got)[:80]}; "
                                     "a law file is written by benchmarks/calibrate_clock_law.py")

    if not isinstance(law, dict):
        raise bad("the file", "a JSON object", law)
    if not isinstance(law.get("calibrated_on"), str):
        raise bad("calibrated_on", "a string", law.get("calibrated_on"))
    families = law.get("families")
    if not isinstance(families, dict) or not families:
        raise bad("families", "an object of families", families)
    for name, e in families.items():
        at = f"families.{name}"
        if name not in FAMILIES:
            raise bad("a family", f"one of {', '.join(FAMILIES)}", name)
        if not isinstance(e, dict):
            raise bad(at, "an object", e)
        for key in ("clock", "verdict"):
            if not isinstance(e.get(key), str) or not e[key]:
                raise bad(f"{at}.{key}", "a non-empty string", e.get(key))
        if not isinstance(e.get("optimizers"), list) or not e["optimizers"] or not all(
                isinstance(o, str) for o in e["optimizers"]):
            raise bad(f"{at}.optimizers", "a non-empty list of optimiser names", e.get("optimizers"))
        u, y = e.get("log_clock_knots"), e.get("spread_knots")
        if not isinstance(u, list) or len(u) < 2 or not all(map(_number, u)) or any(b <= a for a, b in zip(u, u[1:])):
            raise bad(f"{at}.log_clock_knots", "at least two finite numbers, strictly increasing", u)
        if not isinstance(y, list) or len(y) != len(u) or not all(_number(v) and v >= 0 for v in y):
            raise bad(f"{at}.spread_knots", f"{len(u)} finite numbers >= 0 (one per log-clock knot)", y)
        if not (all(b <= a for a, b in zip(y, y[1:])) or all(b >= a for a, b in zip(y, y[1:]))):
            raise bad(f"{at}.spread_knots", "monotone (the law is an isotonic fit)", y)
        r = e.get("range")
        if not isinstance(r, list) or len(r) != 2 or not all(map(_number, r)) or not 0 < r[0] < r[1]:
            raise bad(f"{at}.range", "two clock values [lo, hi] with 0 < lo < hi", r)
        if not _number(e.get("band")) or e["band"] < 0:
            raise bad(f"{at}.band", "a finite number >= 0 (the half-width of the band, in points)", e.get("band"))
        q = e.get("band_quantile")
        if not _number(q) or not 0 < q <= 1:
            raise bad(f"{at}.band_quantile", "a number in (0, 1]", q)
        if not isinstance(e.get("groups"), list) or not e["groups"] or not all(isinstance(g, dict) for g in e["groups"]):
            raise bad(f"{at}.groups", "a non-empty list of the calibrating groups", e.get("groups"))


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
