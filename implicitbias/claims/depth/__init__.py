"""Spec A (the implicit bias of depth; Garrod, Keating, Thrampoulidis, ICML 2026): its claims.

Where neural collapse stops being optimal in P(K, L) (``theorem_3_1``, ``theorem_3_2``,
``nc_shallow``, and the exhibit ``phase_atlas``), the singular-value dynamics of the deep UFM
(``hadamard_diagonalisation``, ``singular_value_ode``, ``theorem_4_3`` ... ``theorem_4_5``,
``kl_to_nc``, ``basin``, ``section_5_deep_ufm``) and head depth and width against effective rank on
real networks (``head_rank``, the grids, and its claims ``head_rank_*``).  L counts weight
matrices; N = L + 1 factors including the features.
"""

from implicitbias.claims import Claim


class TheoremCheck(Claim):
    """A Spec A check that ``implicitbias verify`` runs (minutes on a CPU): its routes agree, disagree,
    or cannot decide (inconclusive).  Subclasses set ``section`` (``phase`` or ``dynamics``)."""

    verify = True
    outcomes = ("agrees", "disagrees", "inconclusive")
