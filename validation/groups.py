"""Grouping runs by setting: the one helper every sweep, ensemble and analysis uses.

A *setting* is a run config without its member keys (by default sigma_w and seed): the runs of
one setting form one sigma_w sweep per seed (Spec B's unit of measurement), and they can train
as one ensemble (``implicitbias.validation.batched``): they share data, architecture, optimiser,
schedule, batch size and horizon.  Groups keep first-seen order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = ["MEMBER_KEYS", "setting", "setting_key", "group_by_setting"]

MEMBER_KEYS = ("sigma_w", "seed")

T = TypeVar("T")


def setting(config: Mapping, free: Sequence[str] = MEMBER_KEYS) -> dict:
    """``config`` without the keys in ``free``."""
    return {k: v for k, v in config.items() if k not in free}


def setting_key(config: Mapping, free: Sequence[str] = MEMBER_KEYS) -> Hashable:
    """A hashable key equal for configs that differ only in the keys in ``free``."""
    return json.dumps(setting(config, free), sort_keys=True, default=str)


def group_by_setting(items: Iterable[T], config: Callable[[T], Mapping] = lambda x: x,
                     free: Sequence[str] = MEMBER_KEYS) -> list[list[T]]:
    """``items`` grouped by the setting of ``config(item)`` (all keys but ``free``), first-seen order."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(setting_key(config(item), free), []).append(item)
    return list(groups.values())
