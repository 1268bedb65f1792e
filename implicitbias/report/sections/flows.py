"""Report section "Backward error analysis" (Spec B, section 3).

Layout only.  The exhibit shows the modified flows the engine derives and the clocks of example
runs, both computed by ``implicitbias.claims.forgetting.modified_flows``; the verdicts are the claims with
``section = "flows"`` (BEA GD, SGD, heavy ball, Adam and the measured orders of accuracy).
"""

from __future__ import annotations

from implicitbias.claims.forgetting.modified_flows import CLOCKS, derived_flows, example_clocks
from implicitbias.figures import markdown_table

NAME = "flows"
ORDER = 30
TITLE = "Backward error analysis: modified flows and the forgetting clocks"


def exhibit(ctx) -> str:
    flows = derived_flows(ctx)
    md = [
        "### Modified flows (backward error analysis, derived by `theory.modified_flow`)",
        "",
        r"One parameter $\theta$, generic loss $L$ ($L_1$, $L_2$ for two minibatches), time $t = k h$; optimiser state "
        f"on its slow manifold. Derivation time in total: {sum(f.seconds for f in flows):.1f} s (cached).",
        "",
    ]
    for f in flows:
        md += [f"**{f.optimizer}** (order {f.order}): {f.description}", "", f"$$ {f.tex} $$", ""]
    rows = [[r.label, r.optimizer, r.lr, r.batch_size, r.weight_decay, r.epochs,
             *(f"{r.clocks[k]:.3g}" for k in CLOCKS), r.governing] for r in example_clocks()]
    md += ["### Clocks of example runs (constant learning rate)", "",
           markdown_table(["run", "optimizer", "lr", "b", "lambda", "epochs", *CLOCKS, "governing"], rows), ""]
    return "\n".join(md)
