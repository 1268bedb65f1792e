"""BEA heavy ball (Spec B, section 3): heavy-ball momentum beta moves with the effective step
h/(1 - beta), and its implicit regulariser is stronger than GD's at that step by the factor
(1 + beta)/(1 - beta) (Ghosh, Lyu, Zhang, Wang 2023).

Source: Spec B s. 3; Ghosh, Lyu, Zhang, Wang, ICLR 2023.

The engine derives the flow of v' = beta v + g, theta' = theta - h v' with the momentum on its
slow manifold (``theory.modified_flow``); ``theory.implicit_regularisers.heavy_ball_terms`` fits
f_0 = -a grad L and f_1 = -grad(c |grad L|^2) exactly; a and c / (a^2/4) are compared with the
published 1/(1 - beta) and (1 + beta)/(1 - beta) in exact arithmetic.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from implicitbias.claims import Claim, Evidence, Verdict, decide
from implicitbias.claims.rules import same_expression
from implicitbias.theory.implicit_regularisers import heavy_ball_terms
from implicitbias.theory.updates import beta

KIND = "bea_heavy_ball.terms"
PUBLISHED_STEP = 1 / (1 - beta)
PUBLISHED_RATIO = (1 + beta) / (1 - beta)


@dataclass(frozen=True)
class Config:
    pass


@dataclass(frozen=True)
class Measured:
    """The derived effective step ``a``, regulariser coefficient ``c`` and its ratio to GD's at that
    step (sympy text in beta)."""

    a: str
    c: str
    ratio: str


def terms_cell(config: dict) -> dict:
    """Cell {} -> {"a", "c", "ratio"} derived, as sympy text in beta."""
    a, c, ratio = heavy_ball_terms()
    return {"a": str(a), "c": str(c), "ratio": str(ratio)}


class BEAHeavyBall(Claim):
    id = "BEA heavy ball"
    statement = "effective step h/(1-beta); regulariser (1+beta)/(1-beta) times GD's at that step"
    source = "Spec B s. 3; Ghosh, Lyu, Zhang, Wang, ICLR 2023"
    section = "flows"
    order = 30
    configs = {"default": Config()}

    def measure(self, ctx, config: Config) -> Evidence:
        (record,) = ctx.map(KIND, terms_cell, [{}], desc="BEA heavy ball")
        return Evidence("engine, momentum on its slow manifold, generic loss", Measured(**record))

    def judge(self, evidence: Evidence) -> Verdict:
        a, ratio = evidence.data.a, evidence.data.ratio
        step_ok = same_expression(a, PUBLISHED_STEP, [beta])
        ratio_ok = same_expression(ratio, PUBLISHED_RATIO, [beta])
        failed = [name for name, ok in (("effective step", step_ok), ("regulariser ratio", ratio_ok)) if not ok]
        return decide(not failed, f"a = {a}, ratio = {ratio}",
                      why_agrees="both the effective step and the ratio are the published ones",
                      why_disagrees="differs from the published " + " and ".join(failed), **asdict(evidence.data))


CLAIM = BEAHeavyBall()
