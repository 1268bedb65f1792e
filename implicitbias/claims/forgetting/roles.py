"""The roles of Spec B's groups of runs, inferred from the groups themselves.

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).

Tiers and user sweeps are read the same way (:func:`roles`):

- baseline: plain SGD (``sgd``, no decay) at the smallest learning rate, at the most common batch
  size, shortest horizon (low-lr SGD, C1);
- longer: the baseline's setting at longer horizons (C2);
- adaptive: Adam / AdamW / RMSProp / sign / Muon groups in the baseline's setting otherwise (C3);
- forgetters: plain SGD at a larger learning rate, and SGD-family groups with L2 decay (C4);
- batch series: plain SGD at the baseline's learning rate and horizon over batch sizes (C5);
- deep: ResNet-56 / ResNet-110 groups (C6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from implicitbias.claims.forgetting.experiments import DEEP
from implicitbias.validation.analysis import Group, family
from implicitbias.validation.groups import setting

__all__ = ["Roles", "roles"]

# lr_per_epoch: the epochs' rates of a run trained elsewhere (validation.runs_format), part of its rate and horizon
_OPTIMISER_KEYS = ("optimizer", "lr", "weight_decay", "decay_on", "momentum", "lr_per_epoch")
_ALWAYS_FREE = ("eval_every", "eval_dense_until")  # how often a run is evaluated never changes its training


@dataclass
class Roles:
    """The groups of a set of runs by the part they play in the claims (module docstring)."""

    baseline: Group | None = None
    longer: list[Group] = field(default_factory=list)
    adaptive: list[Group] = field(default_factory=list)
    forgetters: list[Group] = field(default_factory=list)
    batch_series: list[Group] = field(default_factory=list)
    deep: list[Group] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)


def _same(a: Group, b: Group, free: Sequence[str]) -> bool:
    keys = (*free, *_ALWAYS_FREE)
    return setting(a.setting, keys) == setting(b.setting, keys)


def _most_common(values: Sequence) -> Any:
    return max(sorted(set(values)), key=values.count)


def roles(groups: Sequence[Group]) -> Roles:
    """Assign each group its role (module docstring); groups that play none are left out."""
    groups = list(groups)
    shallow = [g for g in groups if g.setting["arch"] not in DEEP]
    out = Roles(deep=[g for g in groups if g.setting["arch"] in DEEP], groups=groups)
    plain = [g for g in shallow if g.setting["optimizer"] == "sgd" and g.setting["weight_decay"] == 0]
    if not plain:
        return out
    batch = _most_common([g.setting["batch_size"] for g in shallow])
    lr0 = min(g.setting["lr"] for g in plain)
    low = [g for g in plain if g.setting["lr"] == lr0]
    at_batch = [g for g in low if g.setting["batch_size"] == batch] or low
    base = out.baseline = min(at_batch, key=lambda g: g.setting["epochs"])
    out.longer = sorted((g for g in low if _same(g, base, ("epochs", "lr_per_epoch")) and g.setting["epochs"] > base.setting["epochs"]),
                        key=lambda g: g.setting["epochs"])
    out.adaptive = [g for g in shallow if family(g.setting) == "adaptive" and _same(g, base, _OPTIMISER_KEYS)]
    out.forgetters = [g for g in shallow if _same(g, base, _OPTIMISER_KEYS) and g is not base and (
        family(g.setting) == "sgd_l2" or (g.setting["optimizer"] == "sgd" and g.setting["lr"] > lr0))]
    out.batch_series = sorted((g for g in low if _same(g, base, ("batch_size",))), key=lambda g: g.setting["batch_size"])
    return out
