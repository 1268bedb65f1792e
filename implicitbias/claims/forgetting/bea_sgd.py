"""BEA SGD (Spec B, section 3): with random reshuffling, batch b of N examples, the mean SGD
iterate follows C + h (|grad C|^2 / 4 + (N - b) / (4 b (N - 1)) Gamma), Gamma the variance of the
per-example gradients: the noise part scales like h/b (Smith, Dherin, Barrett, De 2021).

Source: Spec B s. 3; Smith, Dherin, Barrett, De, "On the Origin of Implicit Regularization in
SGD", ICLR 2021.

The engine derives the modified flow of m = N/b generic minibatch losses with the period map
averaged over the m! orders (``theory.modified_flow``); every minibatch loss is replaced by the
mean of its b per-example losses and f_1 averaged over all partitions of the N examples
(``theory.implicit_regularisers.sgd_minibatch_coefficients``); the two coefficients are fitted
exactly and compared with the published ones for several (N, b).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import sympy as sp

from implicitbias.claims import Claim, Evidence, Verdict, decide, typed
from implicitbias.claims.rules import same_expression
from implicitbias.figures import markdown_table
from implicitbias.theory.implicit_regularisers import sgd_minibatch_coefficients

KIND = "bea_sgd.coefficients"


@dataclass(frozen=True)
class Config:
    cases: tuple[tuple[int, int], ...] = ((4, 2), (6, 2), (6, 3))


@dataclass(frozen=True)
class Case:
    """N examples in minibatches of b: the derived (a, c) of C + h (a |grad C|^2 + c Gamma) (sympy text)."""

    N: int
    b: int
    a: str
    c: str


@dataclass(frozen=True)
class Measured:
    """The derived coefficients of every case."""

    cases: tuple[Case, ...]


def published(N: int, b: int) -> tuple[sp.Expr, sp.Expr]:
    """(a, c) of Smith et al.: C + h (a |grad C|^2 + c Gamma), a = 1/4, c = (N - b) / (4 b (N - 1))."""
    return sp.Rational(1, 4), sp.Rational(N - b, 4 * b * (N - 1))


def coefficients_cell(config: dict) -> dict:
    """Cell {"N", "b"} -> {"a", "c"} derived, as sympy text."""
    a, c = sgd_minibatch_coefficients(config["N"], config["b"])
    return {"a": str(a), "c": str(c)}


class BEASGD(Claim):
    id = "BEA SGD"
    statement = "RR mean iterate: C + h(|grad C|^2/4 + (N-b)/(4b(N-1)) Gamma), noise part ~ h/b"
    source = "Spec B s. 3; Smith, Dherin, Barrett, De, ICLR 2021"
    section = "flows"
    order = 20
    configs = {"default": Config()}

    def measure(self, ctx, config: Config) -> Evidence:
        cases = [{"N": N, "b": b} for N, b in config.cases]
        records = ctx.map(KIND, coefficients_cell, cases, desc="BEA SGD")
        return Evidence(f"engine, N examples in minibatches of b, all reshuffles, (N, b) in {list(config.cases)}",
                        Measured(typed(Case, ({**c, **r} for c, r in zip(cases, records)))))

    def judge(self, evidence: Evidence) -> Verdict:
        cases = evidence.data.cases
        wrong = [(r.N, r.b) for r in cases
                 if not all(same_expression(d, p) for d, p in zip((r.a, r.c), published(r.N, r.b)))]
        measured = "; ".join(f"(N, b) = ({r.N}, {r.b}): a = {r.a}, c = {r.c}" for r in cases)
        return decide(not wrong, measured, why_agrees="every derived (a, c) is the published pair",
                      why_disagrees=f"derived coefficients differ from the published ones at (N, b) = {wrong}",
                      cases=[asdict(r) for r in cases])

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        rows = [[r.N, r.b, r.a, r.c, *map(str, published(r.N, r.b))] for r in evidence.data.cases]
        return markdown_table(["N", "b", "a (derived)", "c (derived)", "a (published)", "c (published)"], rows)


CLAIM = BEASGD()
