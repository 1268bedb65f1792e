"""C4: SGD forgets with a larger learning rate or with explicit L2 weight decay (with decay 1e-2
the spread drops to almost zero).

Source: Spec B s. 2, C4; Das et al., arXiv 2605.29152.

Every plain-SGD group at a learning rate above the baseline's, and every SGD group with coupled
L2 decay, in the baseline's setting otherwise, judged by the rule of C3
(``forgetting_claim.ForgettingClaim``) without the norm part (decay shrinks every norm
and a larger rate grows them; the claim is about the spread): its memory relative to the low-lr
SGD baseline's, r = m_group / m_SGD, below its bound, pre-registered from the paper's numbers:

- larger learning rate: ``forgets`` = FORGOTTEN = sqrt(4.0 / 26.5) = 0.389 (the paper quantifies
  forgetting only by Muon's 4.0 of SGD's 26.5 points);
- L2 decay: ``almost_zero`` = 4.0 / 26.5 = 0.151 ("almost zero" is below Muon's "small spread").

- agrees: every such group's interval lies below its bound; disagrees: any lies above;
- inconclusive: as C3 (premises, straddling intervals, underpowered); of C3's regime targets
  (``forgetting.regime``) only the baseline's: its norm slope at the judged checkpoint >=
  ``kept_slope`` = 0.8, else "regime: clocks not matched".

Every verdict states the radial memory of the baseline and of each group at the judged checkpoint.
"""

from __future__ import annotations

from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.claims.forgetting import regime
from implicitbias.claims.forgetting.forgetting_claim import ForgettingClaim
from implicitbias.validation.analysis import family

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
    thresholds = {"forgets": mr.FORGOTTEN, "almost_zero": mr.ALMOST_ZERO, "min_seeds": fg.MIN_SEEDS,
                  "kept_slope": regime.KEPT_SLOPE}
    def bound_of(self, summary: dict) -> float:
        return self.threshold("almost_zero" if family(summary["setting"]) == "sgd_l2" else "forgets")

    configs = {"default": fg.Plan(((fg.TOY, _BLOCKS),)),
               "full": fg.Plan(((fg.TOY, _BLOCKS), (fg.FASHION_MNIST, _BLOCKS)))}


CLAIM = C4()
