"""Values as strict JSON: what ``--json``, ``claims.csv``'s ``numbers`` column and other
machine-readable outputs print (the standard ``json`` module writes NaN and infinities, which
strict JSON readers refuse, and knows neither numpy nor paths)."""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["plain"]


def plain(obj):
    """``obj`` as strict JSON values: numpy scalars and arrays as numbers and lists, NaN and
    infinities as null, paths and other objects as their text."""
    if isinstance(obj, Mapping):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if hasattr(obj, "tolist"):  # numpy
        return plain(obj.tolist())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    return str(obj)
