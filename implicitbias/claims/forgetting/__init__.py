"""Spec B (forgetting clocks): its claims C1-C7, the backward-error-analysis claims, and what they
share: the experiments, the roles of their groups, the shared thresholds and the wording of
CIs and failures.

Source: Das, Beneventano, Dey, McKinley, Poggio, arXiv 2605.29152 (Spec B, sections 1-2).

An *experiment* is one experimental design, a packaged sweep spec (``validation/specs``): its
``[[grid]]`` blocks are settings (optimiser, learning rate, batch size, decay, horizon) named for
the roles they play, each over the spec's sigma_w x seed grid; with ``options.batched`` the runs
that can share a step (across blocks too) train as one ensemble (``validation.batched``:
bit-for-bit the solo runs on the toy MLP), each stored as an ordinary run record.  Users
sweep and analyse the same design (``implicitbias sweep default``, ``implicitbias analyse
default``) and get the report's cells and verdicts.  A claim measures the blocks it needs
through ``ctx.map`` (cached, resumable, fingerprinted) and judges what they show; the same rule
judges every experiment, and ``implicitbias analyse`` judges a sweep's runs with it.

Roles (baseline, longer, adaptive, forgetters, batch series, deep) are inferred from the groups
themselves (``roles``), so experiments and user sweeps are read the same way.

Experiments: ``default.toml`` (the report's default: the BatchNorm MLP on MNIST-1D, minutes) and
``fashion_mnist_cpu.toml`` (a narrow BatchNorm ResNet-9 on a Fashion-MNIST subset plus
ResNet-56/110, hours on a CPU: ``benchmarks/run_fashion_mnist_tier.py``; report tier ``full``).
Every low-lr SGD run of the toy experiment interpolates (>= 99.5% training accuracy) within its horizon.

Modules, one concern each: ``experiments`` (experiment loading and the claims' plans), ``roles`` (role
inference), ``training`` (training orchestration), ``group_claim`` (the ``GroupClaim`` base and
``MIN_SEEDS``), ``forgetting_claim`` (the rule C3 and C4 share), ``memory_rules`` (the
pre-registered memory rules), ``wording`` (verdicts, CIs and failures as text), ``figures``, and
``analyse`` (the ``implicitbias analyse`` driver and the groups' overview); the claims
``c1_*`` ... ``c7_*`` and ``bea_*``; the exhibits ``modified_flows`` and ``group_overviews``.
The names the claims share are importable from this package (``from implicitbias.claims import
forgetting as fg``; ``fg.Plan``, ``fg.roles``, ...); ``analyse`` is not, since it reads C7.
"""

from implicitbias.claims.forgetting.group_claim import MIN_SEEDS, GroupClaim
from implicitbias.claims.forgetting.roles import Roles, roles
from implicitbias.claims.forgetting.experiments import (DEEP, FASHION_MNIST, HORIZONS, REPORT_TIERS, TOY, Experiment, Plan,
                                                       experiment, shallow_blocks)
from implicitbias.claims.forgetting.training import measure_groups
from implicitbias.claims.forgetting.wording import fmt_ci, fmt_failures, memory_verdict, span, stability, stated

__all__ = [
    "DEEP", "Experiment", "experiment", "TOY", "HORIZONS", "FASHION_MNIST", "REPORT_TIERS", "shallow_blocks", "Plan", "MIN_SEEDS",
    "GroupClaim", "Roles", "roles", "measure_groups", "memory_verdict", "span", "stability", "stated", "fmt_ci",
    "fmt_failures",
]
