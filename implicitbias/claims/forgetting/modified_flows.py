"""The exhibit of the report's flows section: the modified flows the engine derives, and the
forgetting clocks of example runs.

Source: Spec B section 3 (backward error analysis; Das, Beneventano, Dey, McKinley, Poggio, arXiv
2605.29152).  One parameter theta, generic loss L (L_1, L_2 for two minibatches), time t = k h; an
optimiser's state on its slow manifold.  :func:`derived_flows` derives, through ``ctx.map``
(cached, fingerprinted; derivations are sympy and take seconds), the order-1 flow of every
built-in update but random reshuffling, SGD over two minibatches and GD at order 2
(``theory.modified_flow``).  :func:`example_clocks` evaluates ``theory.clocks.forgetting_clocks``
at the source's settings ``EXAMPLE_RUNS`` (constant learning rate).
``implicitbias.report.sections.flows`` lays both out; it computes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from implicitbias.theory.clocks import CLOCKS, forgetting_clocks
from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import UPDATES, builtin

__all__ = ["KIND", "CLOCKS", "EXAMPLE_RUNS", "DerivedFlow", "ExampleClocks", "flow_record", "derived_flows",
           "example_clocks"]

KIND = "modified_flows.flow"

# (label, optimizer, lr, batch size, N, epochs, lambda): the source's settings
EXAMPLE_RUNS = (
    ("CIFAR-10 low-LR SGD", "sgd", 0.01, 128, 45000, 200, 0.0),
    ("CIFAR-10 SGD + L2 1e-2", "sgd", 0.1, 128, 45000, 200, 1e-2),
    ("CIFAR-10 Adam", "adam", 1e-3, 128, 45000, 200, 0.0),
    ("CIFAR-10 Muon", "muon", 0.02, 128, 45000, 200, 0.0),
)


@dataclass(frozen=True)
class DerivedFlow:
    """One derived flow: its config (``optimizer``, ``order``, ``minibatches``), the update's
    description, the flow's TeX (``tex``: what ``ModifiedFlow.latex()`` printed; every ``latex``
    in the package is that method) and the seconds its derivation took when it was computed."""

    optimizer: str
    order: int
    minibatches: int
    description: str
    tex: str
    seconds: float


@dataclass(frozen=True)
class ExampleClocks:
    """The clocks (total over the run, by name in ``CLOCKS`` order) and the governing clock of one
    example run of ``EXAMPLE_RUNS``."""

    label: str
    optimizer: str
    lr: float
    batch_size: int
    weight_decay: float
    epochs: int
    clocks: Mapping[str, float]
    governing: str


def flow_record(config: dict) -> dict:
    """Derive one built-in flow; the record holds its LaTeX and the derivation time."""
    t0 = time.perf_counter()
    update = builtin(config["optimizer"], minibatches=config.get("minibatches", 1))
    flow = modified_flow(update, config["order"])
    return {"latex": flow.latex(), "description": update.description, "seconds": time.perf_counter() - t0}


def derived_flows(ctx) -> list[DerivedFlow]:
    """The flows the flows section shows (module docstring), in its order."""
    configs = [{"optimizer": n, "order": 1} for n in UPDATES if n != "sgd_rr"]
    configs += [{"optimizer": "sgd", "order": 1, "minibatches": 2}, {"optimizer": "gd", "order": 2}]
    records = ctx.map(KIND, flow_record, configs, parallel=False, desc="modified flows")
    return [DerivedFlow(c["optimizer"], c["order"], c.get("minibatches", 1), r["description"], r["latex"], r["seconds"])
            for c, r in zip(configs, records)]


def example_clocks() -> list[ExampleClocks]:
    """The clocks of every run of ``EXAMPLE_RUNS``."""
    out = []
    for label, opt, lr, b, n, ep, lam in EXAMPLE_RUNS:
        c = forgetting_clocks(opt, lr, b, n, ep, lam)
        out.append(ExampleClocks(label, opt, lr, b, lam, ep, {k: c.total[k] for k in CLOCKS}, c.governing))
    return out
