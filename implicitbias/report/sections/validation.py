"""Report section "Deep networks" (Spec B, C6): layout only.  Claim C6 lives in
``implicitbias.claims.forgetting.c6_deep_nets_fail_to_interpolate``; this section says where its runs come
from (the report's ``full`` tier: ResNet-56/110 on a Fashion-MNIST subset, hours on a CPU) and,
for C1-C5 on real images, points to the clocks section and ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

from implicitbias.claims import forgetting as fg

NAME = "validation"
ORDER = 40
TITLE = "Deep networks on real images (Spec B, C6)"


def exhibit(ctx) -> str:
    t = fg.experiment(fg.FASHION_MNIST)
    deep = [b for b in t.blocks if b not in fg.shallow_blocks(t.spec)]
    what = "; ".join(f"{b}: {t.configs(b)[0]['arch']} width {t.configs(b)[0]['width']:g}, sigma_w "
                     f"{sorted({c['sigma_w'] for c in t.configs(b)})}, seeds {sorted({c['seed'] for c in t.configs(b)})}, "
                     f"{t.configs(b)[0]['epochs']} epochs of {t.configs(b)[0]['optimizer']} lr {t.configs(b)[0]['lr']:g}"
                     for b in deep)
    if ctx.tier == "full":
        return f"C6 on the `{t.name}` experiment ({t.description}): {what}."
    return (f"C6 needs the `{t.name}` experiment ({t.description}; {what}), which is not part of report tier "
            f"`{ctx.tier}`: `implicitbias report --tier full` measures it (hours on a CPU; "
            "`benchmarks/run_fashion_mnist_tier.py` runs it resumably) and `benchmarks/RESULTS.md` holds the table "
            "of one run.")
