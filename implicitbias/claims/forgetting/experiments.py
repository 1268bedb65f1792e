"""Spec B's experiments and the plans of its claims: which runs a claim measures.

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).

An *experiment* is one experimental design, a packaged sweep spec (``validation/specs``): its
``[[grid]]`` blocks are settings (optimiser, learning rate, batch size, decay, horizon) named for
the roles they play, each over the spec's sigma_w x seed grid; with ``options.batched`` the runs
that can share a step (across blocks too) train as one ensemble (``validation.batched``).
Experiments: ``default.toml`` (the report's default: the BatchNorm MLP on MNIST-1D, minutes) and
``fashion_mnist_cpu.toml`` (a narrow BatchNorm ResNet-9 on a Fashion-MNIST subset plus
ResNet-56/110, hours on a CPU: ``benchmarks/run_fashion_mnist_tier.py``; report tier ``full``).
A claim's typed config is a :class:`Plan`: the blocks of the experiments it measures.  (A *tier*
is the report's: ``default``, ``gpu`` or ``full``, the size of the checks run; ``REPORT_TIERS``
names the experiments each runs.)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEEP", "Experiment", "experiment", "TOY", "HORIZONS", "FASHION_MNIST", "REPORT_TIERS", "shallow_blocks", "Plan"]

DEEP = ("resnet56", "resnet110")


@dataclass(frozen=True)
class Experiment:
    """One experimental design: a packaged sweep spec whose ``[[grid]]`` labels are the blocks."""

    spec: str
    name: str
    description: str
    blocks: Mapping[str, tuple[dict, ...]]
    options: Mapping[str, Any]
    ensembles: bool

    def configs(self, block: str) -> list[dict]:
        """The canonical run configs of ``block``, in the spec's order."""
        return list(self.blocks[block])

    @property
    def sigma_w(self) -> list[float]:
        return sorted({c["sigma_w"] for cs in self.blocks.values() for c in cs})

    @property
    def seeds(self) -> list[int]:
        return sorted({c["seed"] for cs in self.blocks.values() for c in cs})

    def cost(self, block: str) -> float:
        """Relative cost of a block (runs x epochs x training images x width^2), to start long ones first."""
        c = self.blocks[block]
        return len(c) * c[0]["epochs"] * (c[0]["train_size"] or 1000) * c[0]["width"] ** 2


@functools.cache
def experiment(spec: str) -> Experiment:
    """The experiment of a packaged spec (``validation/specs/<spec>.toml``), loaded once per process.

    Its blocks are the spec's ``[[grid]]`` labels; ``options.batched`` makes every block one
    ensemble (otherwise every run is its own cell); the other options are runtime options.
    """
    from implicitbias.validation.sweep import load_spec

    s = load_spec(spec)
    blocks: dict[str, list[dict]] = {}
    for label, config in s.runs:
        blocks.setdefault(label, []).append(config)
    options = {k: v for k, v in s.options.items() if k != "batched"}
    return Experiment(spec, s.name, s.description, {k: tuple(v) for k, v in blocks.items()}, options,
                bool(s.options.get("batched")))


TOY = "default"  # validation/specs/default.toml: the report's default tier
HORIZONS = "horizon"  # validation/specs/horizon.toml: the toy experiment's low-lr SGD at E and at 5E epochs (C2)
FASHION_MNIST = "fashion_mnist_cpu"  # validation/specs/fashion_mnist_cpu.toml: report tier full
REPORT_TIERS = {"default": (TOY,), "gpu": (TOY,), "full": (TOY, FASHION_MNIST)}  # the experiments each report tier runs


def shallow_blocks(spec: str) -> tuple[str, ...]:
    """The blocks of an experiment other than the deep ResNets (C6 runs those on its own)."""
    return tuple(b for b, cs in experiment(spec).blocks.items() if cs[0]["arch"] not in DEEP)


@dataclass(frozen=True)
class Plan:
    """A claim's typed config: which blocks of which experiments (packaged specs) it measures, one
    Evidence per experiment; ``None`` as the blocks means every block but the deep ResNets."""

    experiments: tuple[tuple[str, tuple[str, ...] | None], ...]

    def resolved(self) -> list[tuple[Experiment, tuple[str, ...]]]:
        return [(experiment(spec), shallow_blocks(spec) if blocks is None else blocks) for spec, blocks in self.experiments]
