"""What identifies a record and what tells a damaged one: keys, canonical JSON and digests.

A record is identified by ``(kind, config)``; its key is the SHA-256 of the canonical JSON of both
(sorted keys, no whitespace), so the same config always maps to the same row and a rerun returns
the stored record instead of recomputing it.  Beside the record a row keeps the SHA-256 ``digest``
of the record's text.  A row whose config is not the one its key was made from, or whose record
no longer matches its digest (edited, overwritten), is damaged: ``intact`` returns ``None`` for it,
so it is never served and counts as missing (a rerun recomputes and replaces it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

__all__ = ["canonical_json", "config_key", "digest", "json_object", "intact"]


def _jsonable(obj):
    """A value JSON cannot write as it is, as one it can."""
    import numpy as np  # here, not at the top: the store's import (``implicitbias store --help``) stays light

    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"cannot store a value of type {type(obj).__name__} in the results store")


def canonical_json(obj) -> str:
    """JSON with sorted keys and no whitespace; numpy values become plain Python values."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_jsonable)


def config_key(kind: str, config: Mapping) -> str:
    """Stable key of a config: SHA-256 of the canonical JSON of ``{"kind", "config"}``."""
    text = canonical_json({"kind": kind, "config": config})
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def digest(text: str) -> str:
    """The ``digest`` column of a record's text: its SHA-256 (32 hex digits)."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def json_object(text) -> dict | None:
    """``text`` parsed when it is a JSON object, else ``None``."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def intact(kind: str, key: str, config, text, recorded) -> dict | None:
    """The record of row ``key`` when the row is what ``Store.put`` wrote (its config is the one the
    key was made from; the record matches its digest ``recorded``, or, in a row from before
    digests, is a JSON object), else ``None``: a damaged record counts as missing and is recomputed."""
    config = json_object(config)
    if config is None or config_key(kind, config) != key:
        return None
    if recorded is not None and (not isinstance(text, str) or digest(text) != recorded):
        return None
    return json_object(text)
