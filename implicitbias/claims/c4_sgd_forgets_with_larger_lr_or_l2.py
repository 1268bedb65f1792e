"""C4: SGD forgets with a larger learning rate or with explicit L2 weight decay (with decay 1e-2
the spread drops to almost zero).

Source: Spec B s. 2, C4; Das et al., arXiv 2605.29152.

Every plain-SGD group at a learning rate above the baseline's, and every SGD group with coupled
L2 decay, in the baseline's setting otherwise, is judged on its own spread of seed-mean
validation-selected test accuracy (bootstrap CI over seeds) against ``forgets`` (the rule of C3,
``c3_adaptive_methods_forget.ForgettingClaim``, without the norm bound: decay shrinks every norm
and a larger rate grows them, the claim is about the spread).

- agrees: every such group's spread CI lies below ``forgets``;
- disagrees: some group's spread CI lies above ``forgets`` (it still remembers);
- inconclusive: the low-lr SGD baseline does not interpolate, fewer than ``min_seeds`` seeds
  with a spread, or a CI straddles ``forgets``.
"""

from __future__ import annotations

from implicitbias.claims import forgetting as fg
from implicitbias.claims.c3_adaptive_methods_forget import ForgettingClaim

_BLOCKS = ("sgd_low", "sgd_high", "sgd_l2")


class C4(ForgettingClaim):
    id = "C4"
    role = "forgetters"
    kind = "larger-lr or L2"
    statement = "SGD forgets with a larger learning rate or with L2 weight decay"
    source = "Spec B s. 2 C4; Das et al. arXiv 2605.29152"
    section = "clocks"
    order = 4
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {"forgets": fg.SPREAD, "min_seeds": fg.MIN_SEEDS}
    configs = {"default": fg.Plan(((fg.TOY, _BLOCKS),)),
               "full": fg.Plan(((fg.TOY, _BLOCKS), (fg.FASHION_MNIST, _BLOCKS)))}


CLAIM = C4()
