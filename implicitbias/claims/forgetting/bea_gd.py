"""BEA GD (Spec B, section 3): gradient descent follows the gradient flow of the modified loss
L + (h/4) |grad L|^2 to first order in the step h (Barrett & Dherin 2021).

Source: Spec B s. 3; Barrett & Dherin, "Implicit Gradient Regularization", ICLR 2021.

The coefficient is read off the modified flow derived by the engine (``theory.modified_flow``,
Taylor matching of the update theta' = theta - h g against the flow's Lie series, generic loss)
by an exact fit f_1 = -d/dtheta (c |grad L|^2) (``theory.implicit_regularisers``) and compared
with the published 1/4 in exact arithmetic.  The measured order of accuracy of the flow is the
separate claim "BEA orders".
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from implicitbias.claims import Claim, Evidence, Verdict, decide
from implicitbias.claims.rules import same_expression
from implicitbias.theory.implicit_regularisers import gd_coefficient

KIND = "bea_gd.coefficient"
PUBLISHED = sp.Rational(1, 4)


@dataclass(frozen=True)
class Config:
    pass


@dataclass(frozen=True)
class Measured:
    """The derived coefficient of h |grad L|^2 (sympy text)."""

    c: str


def coefficient_cell(config: dict) -> dict:
    """Cell {} -> {"c"}: the derived coefficient of h |grad L|^2, as sympy text."""
    return {"c": str(gd_coefficient())}


class BEAGD(Claim):
    id = "BEA GD"
    statement = "GD follows the flow of L + (h/4) |grad L|^2"
    source = "Spec B s. 3; Barrett & Dherin, ICLR 2021"
    section = "flows"
    order = 10
    configs = {"default": Config()}

    def measure(self, ctx, config: Config) -> Evidence:
        (record,) = ctx.map(KIND, coefficient_cell, [{}], desc="BEA GD")
        return Evidence("engine (Taylor matching), generic loss, exact fit of f_1", Measured(record["c"]))

    def judge(self, evidence: Evidence) -> Verdict:
        c = evidence.data.c
        return decide(same_expression(c, PUBLISHED), f"c = {c}", why_agrees="the derived coefficient is the published 1/4",
                      why_disagrees=f"the derived coefficient {c} is not the published 1/4", c=c)


CLAIM = BEAGD()
