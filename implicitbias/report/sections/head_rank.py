"""Report section: Spec A on real networks, head depth and width against effective rank.

Layout only.  Its claims (``section = "head_rank"``) share the training grids of
``implicitbias.claims.depth.head_rank``: tier ``default`` trains offline digits (ResNet-20 body at
width 0.25, heads of depth 1-6 and width 16/64, two seeds, plus a small-init comparison); tiers
``gpu`` and ``full`` add Fashion-MNIST when its files are on this machine.
"""

from implicitbias.claims.depth.head_rank import CONFIGS, train_grids

NAME = "head_rank"
ORDER = 50
TITLE = "Spec A on real networks: head depth and width against effective rank"


def exhibit(ctx) -> str:
    return ("Ranks are Roy-Vetterli effective ranks of the K x K mean-logit matrix on the training set at the end "
            "of training (He-initialised heads unless stated); depth L counts the head's weight matrices.")


def prefetch(ctx) -> None:
    train_grids(ctx, CONFIGS.get(ctx.tier, CONFIGS["default"]))
