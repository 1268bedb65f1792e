"""Report section "Backward error analysis" (Spec B, section 3).

Layout only.  The exhibit shows the modified flows the engine derives (LaTeX, cached in the store
under ``modified_flow/v1``) and the clocks of example runs; the verdicts are the claims with
``section = "flows"`` (BEA GD, SGD, heavy ball, Adam and the measured orders of accuracy).
"""

from __future__ import annotations

import time

from implicitbias.figures import markdown_table
from implicitbias.theory.clocks import CLOCKS, forgetting_clocks
from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import UPDATES, builtin

NAME = "flows"
ORDER = 30
TITLE = "Backward error analysis: modified flows and the forgetting clocks"

# (label, optimizer, lr, batch size, N, epochs, lambda): the source's settings
EXAMPLE_RUNS = (
    ("CIFAR-10 low-LR SGD", "sgd", 0.01, 128, 45000, 200, 0.0),
    ("CIFAR-10 SGD + L2 1e-2", "sgd", 0.1, 128, 45000, 200, 1e-2),
    ("CIFAR-10 Adam", "adam", 1e-3, 128, 45000, 200, 0.0),
    ("CIFAR-10 Muon", "muon", 0.02, 128, 45000, 200, 0.0),
)


def flow_record(config: dict) -> dict:
    """Derive one built-in flow; the record holds its LaTeX and the derivation time."""
    t0 = time.perf_counter()
    update = builtin(config["optimizer"], minibatches=config.get("minibatches", 1))
    flow = modified_flow(update, config["order"])
    return {"latex": flow.latex(), "description": update.description, "seconds": time.perf_counter() - t0}


def exhibit(ctx) -> str:
    flow_cfgs = [{"optimizer": n, "order": 1} for n in UPDATES if n != "sgd_rr"]
    flow_cfgs += [{"optimizer": "sgd", "order": 1, "minibatches": 2}, {"optimizer": "gd", "order": 2}]
    flows = ctx.map("modified_flow/v1", flow_record, flow_cfgs, parallel=False, desc="modified flows")
    md = [
        "### Modified flows (backward error analysis, derived by `theory.modified_flow`)",
        "",
        "One parameter theta, generic loss L (L_1, L_2 for two minibatches), time t = k h; optimiser state "
        f"on its slow manifold. Derivation time in total: {sum(f['seconds'] for f in flows):.1f} s (cached).",
        "",
    ]
    for cfg, rec in zip(flow_cfgs, flows):
        md += [f"**{cfg['optimizer']}** (order {cfg['order']}): {rec['description']}", "", f"$$ {rec['latex']} $$", ""]
    rows = []
    for label, opt, lr, b, n, ep, lam in EXAMPLE_RUNS:
        c = forgetting_clocks(opt, lr, b, n, ep, lam)
        rows.append([label, opt, lr, b, lam, ep, *(f"{c.total[k]:.3g}" for k in CLOCKS), c.governing])
    md += ["### Clocks of example runs (constant learning rate)", "",
           markdown_table(["run", "optimizer", "lr", "b", "lambda", "epochs", *CLOCKS, "governing"], rows), ""]
    return "\n".join(md)
