"""C3: adaptive methods forget: Adam, AdamW and Muon show a small spread across sigma_w under the
low-lr SGD conditions and converge to a common final norm whatever sigma_w.

Source: Spec B s. 2, C3; Das et al., arXiv 2605.29152 (about 4.0 points for Muon against SGD's
26.5: a fraction 0.151 of SGD's memory).

Every adaptive group in the baseline's setting (same data, architecture, batch size and horizon)
is judged relative to the low-lr SGD baseline of the same tier, at the claim's checkpoint (minimum
validation loss among interpolating checkpoints; the minimum over all checkpoints and the end of
training stated beside).  Parts per group (``claims.forgetting.memory_rules``, pre-registered):

- memory: r = m_group / m_SGD (calibrated parametric-bootstrap interval) below ``forgets``
  (FORGOTTEN = sqrt(4.0 / 26.5) = 0.389);
- norm: the mean per-seed log-norm slope (t interval) below ``common_norm`` (the same 0.389:
  1 is a final norm proportional to the initial one, 0 a common final norm).

- agrees: every part of every adaptive group agrees;
- disagrees: any part of any group lies above its bound (it remembers);
- inconclusive: the baseline does not interpolate or shows no memory (its s interval reaches 0),
  a group has fewer than ``min_seeds`` complete seeds, the regime is not the paper's at the judged
  checkpoint (``forgetting.regime``, "regime: clocks not matched": every adaptive group's clock in
  units of the initial norm X at the largest sigma_w >= ``forgotten_clock`` = 3 and its norm slope
  <= ``forgotten_slope`` = 0.1, the baseline's norm slope >= ``kept_slope`` = 0.8, every run
  interpolates), an interval straddles, or a simulated wrong-direction rate above 5%
  (underpowered, with the seeds needed).

Every verdict states the radial memory of the baseline and of each group at the judged checkpoint.
"""

from __future__ import annotations

from implicitbias.claims import forgetting as fg
from implicitbias.claims.forgetting import memory_rules as mr
from implicitbias.claims.forgetting import regime
from implicitbias.claims.forgetting.forgetting_claim import ForgettingClaim

_BLOCKS = ("sgd_low", "adam", "adamw", "muon")


class C3(ForgettingClaim):
    id = "C3"
    role = "adaptive"
    kind = "adaptive"
    statement = "adaptive methods (Adam, AdamW, Muon) forget: small spread and a common final norm"
    source = "Spec B s. 2 C3; Das et al. arXiv 2605.29152 (Muon about 4.0 points)"
    section = "clocks"
    order = 3
    outcomes = ("agrees", "disagrees", "inconclusive", "not run")
    thresholds = {"forgets": mr.FORGOTTEN, "common_norm": mr.FORGOTTEN, "min_seeds": fg.MIN_SEEDS,
                  "forgotten_clock": regime.FORGOTTEN_CLOCK, "forgotten_slope": regime.FORGOTTEN_SLOPE,
                  "kept_slope": regime.KEPT_SLOPE}
    configs = {"default": fg.Plan(((fg.TOY, _BLOCKS),)),
               "full": fg.Plan(((fg.TOY, _BLOCKS), (fg.FASHION_MNIST, _BLOCKS)))}


CLAIM = C3()
